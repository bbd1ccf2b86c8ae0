#!/usr/bin/env node
// docs/performance.md "Organizations": `GET /api/org-notes/` (organizationPermissions, X-Organization-Id)
// against `GET /api/notes/` (global permissions) on one `svc serve`, rounds interleaved, with the server's CPU
// and PostgreSQL's backends' CPU per request; with --against, the same two routes on a server of another
// built checkout too (the project copied into its bench/.tmp/ so that its main.ts imports that @svc/core).
//
//   [SVC_TEST_POSTGRES_URL=… PROFILE_POSTGRES=1] node bench/lib/route-ab.mjs [--against <root>]
//                                               [--rounds 7] [--seconds 3] [--connections 10]
import { fork } from 'node:child_process';
import { cpSync, readFileSync, rmSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { cpuSecondsOf, settle } from './cpu.mjs';
import pg from './pg.mjs';
import { READER, call, createProject, login, seedReader, startServe } from './project.mjs';
import { median } from './stats.mjs';

const argv = process.argv.slice(2);
const option = (flag, fallback) => {
  const i = argv.indexOf(flag);
  return i >= 0 ? argv[i + 1] : fallback;
};
const rounds = Number(option('--rounds', '7'));
const seconds = Number(option('--seconds', '3'));
const connections = Number(option('--connections', '10'));
const against = option('--against', undefined);
const usePg = Boolean(process.env.PROFILE_POSTGRES);

/** CPU seconds of the PostgreSQL backends serving database `name` (their /proc/<pid>/stat). */
async function backendSeconds(client, name) {
  if (!client) return 0;
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

const database = usePg ? await pg.create(process.env.SVC_TEST_POSTGRES_URL) : undefined;
const dbName = database && new URL(database.url).pathname.slice(1);
const watcher = database && pg.client(process.env.SVC_TEST_POSTGRES_URL);
const project = await createProject({ databaseUrl: database?.url });
const stops = [() => project.remove()];
const servers = [];
try {
  servers.push(['after', await startServe(project.dir)]);
  const base = servers[0][1].base;
  await seedReader(base);
  const reader = await login(base, READER);
  const orgId = (
    await call(base, 'POST', '/api/organizations', {
      token: reader.access_token,
      json: { name: 'Bench', slug: 'bench-org' },
    })
  ).body.id;
  if (against) {
    const other = await import(join(against, 'bench', 'lib', 'project.mjs'));
    other.ensureCoreLink();
    const dir = join(other.TMP, `route-ab-${process.pid}`);
    cpSync(project.dir, dir, { recursive: true });
    stops.push(() => rmSync(dir, { recursive: true, force: true }));
    servers.unshift(['before', await other.startServe(dir)]);
  }
  const loader = fork(join(import.meta.dirname, 'load.mjs'), { stdio: 'inherit' });
  stops.push(() => loader.kill());
  const ask = (message) =>
    new Promise((resolve) => {
      loader.once('message', resolve);
      loader.send(message);
    });
  const targets = [];
  for (const [build, s] of servers) {
    const job = { method: 'GET', tokens: [reader.access_token], connections, seconds };
    targets.push([`notes@${build}`, { ...job, url: `${s.base}/api/notes/` }, s.pid]);
    targets.push([
      `org-notes@${build}`,
      { ...job, url: `${s.base}/api/org-notes/`, headers: { 'x-organization-id': orgId } },
      s.pid,
    ]);
  }
  const samples = Object.fromEntries(targets.map(([n]) => [n, []]));
  const load = [loadavg()[0]];
  for (const [, job, pid] of targets) {
    await ask(job);
    await settle(pid);
  }
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 ? [...targets].reverse() : targets;
    const shift = round % targets.length;
    for (const [name, job, pid] of [...order.slice(shift), ...order.slice(0, shift)]) {
      await settle(pid);
      const cpu0 = cpuSecondsOf(pid);
      const pg0 = await backendSeconds(watcher, dbName);
      const r = await ask(job);
      const cpu = cpuSecondsOf(pid) - cpu0;
      const pgCpu = (await backendSeconds(watcher, dbName)) - pg0;
      if (r.non2xx) throw new Error(`${name}: ${r.non2xx} answers were not 2xx`);
      samples[name].push({ rps: r.rps, cpuUs: (cpu / r.total) * 1e6, pgUs: (pgCpu / r.total) * 1e6 });
    }
    load.push(loadavg()[0]);
    process.stderr.write(
      `[route-ab] round ${round + 1}/${rounds}, load average ${loadavg()[0].toFixed(2)}\n`,
    );
  }
  console.log(
    `${usePg ? 'PostgreSQL' : 'SQLite'}; load average ${load.map((l) => l.toFixed(2)).join(' → ')}; ${rounds} rounds of ${seconds} s, ${connections} connections; medians`,
  );
  for (const [build] of servers) {
    const n = samples[`notes@${build}`];
    const o = samples[`org-notes@${build}`];
    const ratios = o.map((x, i) => x.rps / n[i].rps);
    const show = (s) =>
      `${median(s.map((x) => x.rps)).toFixed(0)}/s, ${median(s.map((x) => x.cpuUs)).toFixed(0)} µs CPU` +
      (usePg ? `, PostgreSQL ${median(s.map((x) => x.pgUs)).toFixed(0)} µs` : '');
    console.log(
      `${build}: org-notes / notes ${(100 * median(ratios)).toFixed(1)}% (rounds ${ratios.map((r) => (100 * r).toFixed(0)).join(' ')}); notes ${show(n)}; org-notes ${show(o)} a request`,
    );
  }
} finally {
  for (const [, s] of servers) await s.stop();
  for (const stop of stops.reverse()) await stop();
  await watcher?.end();
  await database?.drop();
}
