#!/usr/bin/env node
// docs/performance.md "PostgreSQL login against bare Argon2id": password logins per second on PostgreSQL beside
// bare Argon2id verifies in the same run, rounds interleaved, for one build or two (A/B).
//
//   SVC_TEST_POSTGRES_URL=… node bench/lib/login-ab.mjs [--against <root of another built checkout>]
//                                                       [--rounds 5] [--seconds 4] [--connections 10]
//
// One fresh database, one project (`svc init`, ten `bench-login-<n>` users, as `pnpm bench`'s login row), one
// `svc serve` of this checkout and, with --against, one of the other checkout on the same database (the project
// copied into its bench/.tmp/ so that its main.ts imports that checkout's @svc/core). Each round runs every
// target once in another order, each after its server has gone idle; per target: logins/s, the server's CPU
// and PostgreSQL's backends' CPU per login (from /proc), and login/s over the round's Argon2id verify/s.
import { fork } from 'node:child_process';
import { cpSync, readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { URLSearchParams } from 'node:url';
import { cpuSecondsOf, settle } from './cpu.mjs';
import pg from './pg.mjs';
import { createProject, login, seedLoginUsers, startServe } from './project.mjs';
import { median } from './stats.mjs';

const argv = process.argv.slice(2);
const option = (flag, fallback) => {
  const i = argv.indexOf(flag);
  return i >= 0 ? argv[i + 1] : fallback;
};
const rounds = Number(option('--rounds', '5'));
const seconds = Number(option('--seconds', '4'));
const connections = Number(option('--connections', '10'));
const against = option('--against', undefined);
const adminUrl = process.env.SVC_TEST_POSTGRES_URL;
if (!adminUrl) throw new Error('SVC_TEST_POSTGRES_URL is needed');

/** CPU seconds of the PostgreSQL backends serving database `name` (their /proc/<pid>/stat). */
async function backendSeconds(client, name) {
  const rows =
    await client`SELECT pid FROM pg_stat_activity WHERE datname = ${name} AND pid <> pg_backend_pid()`;
  let total = 0;
  for (const { pid } of rows) {
    try {
      const f = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = f.slice(f.lastIndexOf(')') + 2).split(' ');
      total += (Number(fields[11]) + Number(fields[12])) / 100;
    } catch {
      // gone
    }
  }
  return total;
}

const database = await pg.create(adminUrl);
const dbName = new URL(database.url).pathname.slice(1);
const watcher = pg.client(adminUrl);
const project = await createProject({ databaseUrl: database.url });
const stops = [() => project.remove()];
const servers = [];
try {
  servers.push(['after', await startServe(project.dir)]);
  if (against) {
    const other = await import(join(against, 'bench', 'lib', 'project.mjs'));
    other.ensureCoreLink();
    const dir = join(other.TMP, `login-ab-${process.pid}`);
    cpSync(project.dir, dir, { recursive: true });
    stops.push(async () => (await import('node:fs')).rmSync(dir, { recursive: true, force: true }));
    servers.unshift(['before', await other.startServe(dir)]);
  }
  const users = await seedLoginUsers(servers[0][1].base, 10);
  for (const [, s] of servers) await login(s.base, users[0]);
  const forms = users.map((u) => new URLSearchParams(u).toString());

  const argon2 = fork(join(import.meta.dirname, 'baselines.mjs'), ['--argon2'], { stdio: 'inherit' });
  await new Promise((r) => argon2.once('message', r));
  const loader = fork(join(import.meta.dirname, 'load.mjs'), { stdio: 'inherit' });
  stops.push(
    () => argon2.kill(),
    () => loader.kill(),
  );
  const ask = (child, message) =>
    new Promise((resolve) => {
      child.once('message', resolve);
      child.send(message);
    });

  const targets = [
    ['argon2', () => ask(argon2, { concurrency: connections, seconds }), argon2.pid],
    ...servers.map(([name, s]) => [
      name,
      () =>
        ask(loader, {
          url: `${s.base}/api/auth/token`,
          method: 'POST',
          bodies: forms,
          contentType: 'application/x-www-form-urlencoded',
          connections,
          seconds,
        }),
      s.pid,
    ]),
  ];
  const samples = Object.fromEntries(targets.map(([n]) => [n, []]));
  const load = [loadavg()[0]];
  // One warm-up round, not counted.
  for (const [, run, pid] of targets) {
    await run();
    await settle(pid);
  }
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 ? [...targets].reverse() : targets;
    const shift = round % targets.length;
    for (const [name, run, pid] of [...order.slice(shift), ...order.slice(0, shift)]) {
      await settle(pid);
      const cpu0 = cpuSecondsOf(pid);
      const pg0 = await backendSeconds(watcher, dbName);
      const r = await run();
      const cpu = cpuSecondsOf(pid) - cpu0;
      const pgCpu = name === 'argon2' ? 0 : (await backendSeconds(watcher, dbName)) - pg0;
      samples[name].push({
        rps: r.rps,
        cpuUs: (cpu / r.total) * 1e6,
        pgUs: (pgCpu / r.total) * 1e6,
        non2xx: r.non2xx,
      });
    }
    load.push(loadavg()[0]);
    process.stderr.write(
      `[login-ab] round ${round + 1}/${rounds}, load average ${loadavg()[0].toFixed(2)}\n`,
    );
  }
  console.log(
    `load average ${load.map((l) => l.toFixed(2)).join(' → ')}; ${rounds} rounds of ${seconds} s, ${connections} in flight`,
  );
  for (const [name] of targets) {
    const s = samples[name];
    const ratios = s.map((x, i) => x.rps / samples.argon2[i].rps);
    console.log(
      `${name.padEnd(7)} ${median(s.map((x) => x.rps))
        .toFixed(1)
        .padStart(7)}/s  of argon2 ${(100 * median(ratios)).toFixed(1)}% ` +
        `(rounds ${ratios.map((r) => (100 * r).toFixed(0)).join(' ')})  process CPU ${median(s.map((x) => x.cpuUs)).toFixed(0)} µs/login` +
        (name === 'argon2'
          ? ''
          : `  PostgreSQL ${median(s.map((x) => x.pgUs)).toFixed(0)} µs/login  non-2xx ${s.reduce((a, x) => a + x.non2xx, 0)}`),
    );
  }
} finally {
  for (const [, s] of servers) await s.stop();
  for (const stop of stops.reverse()) await stop();
  await watcher.end();
  await database.drop();
}
