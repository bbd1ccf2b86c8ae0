// docs/performance.md "Webhooks": where the CPU of a `PATCH /api/admin/user/{id}` goes, webhooks on and off.
//
//   node bench/lib/webhooks-cpu.mjs      (SVC_TEST_POSTGRES_URL, SVC_TEST_REDIS_URL; ROUNDS_=3 SECONDS_=5 CONN_=10)
//
// Two `svc serve` on one fresh PostgreSQL database, one with webhooks on (an endpoint of `user.updated` at the
// fast receiver of bench/lib/receiver.mjs, in this process) and one off; interleaved rounds of PATCHes spread over
// 20 users. Per request answered: the CPU time (utime + stime from /proc) of the server process tree, of every
// PostgreSQL process, of this process (the receiver) and of the load generator, and the database's transactions
// (pg_stat_database, flushed by backends at most once a second: read as a rough figure). Medians printed last.
// On a loaded machine the throughput is noise; the CPU per request is what to compare.
import { fork, execSync } from 'node:child_process';
import { startFastReceiver } from './receiver.mjs';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from './pg.mjs';
import { ADMIN, call, createProject, login, startServe } from './project.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const TICK = 100; // clock ticks per second
function cpuOf(pid) {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(f[11]) + Number(f[12])) * (1000 / TICK);
  } catch {
    return 0;
  }
}
function tree(pid) {
  const out = [pid];
  try {
    const kids = execSync(`pgrep -P ${pid}`, { encoding: 'utf8' })
      .trim()
      .split('\n')
      .filter(Boolean)
      .map(Number);
    for (const k of kids) out.push(...tree(k));
  } catch {
    // no children
  }
  return out;
}
const pgPids = () => execSync(`pgrep -u postgres`, { encoding: 'utf8' }).trim().split('\n').map(Number);
const xacts = (db) =>
  Number(
    execSync(
      `psql -h 127.0.0.1 -U postgres -Atc "select xact_commit + xact_rollback from pg_stat_database where datname = '${db}'"`,
      { encoding: 'utf8' },
    ).trim(),
  );
const sum = (pids) => pids.reduce((a, p) => a + cpuOf(p), 0);

let delivered = 0;
const receiver = await startFastReceiver(() => void delivered++);
const receiverUrl = `http://127.0.0.1:${receiver.port}/hook`;
const database = await pg.create(process.env.SVC_TEST_POSTGRES_URL);
const project = await createProject({ databaseUrl: database.url });
const loader = fork(join(HERE, 'load.mjs'), [], { stdio: 'inherit' });
const ask = (job) =>
  new Promise((resolve, reject) => {
    loader.once('message', (m) => (m?.error ? reject(new Error(m.error)) : resolve(m)));
    loader.send(job);
  });
const common = {
  webhooks_enabled: true,
  webhooks_allow_private_targets: true,
  cache_url: process.env.SVC_TEST_REDIS_URL,
  cache_prefix: `whcpu:${Date.now()}:`,
  auth_rate_limit: 0,
  activity_log_enabled: true,
};
const on = await startServe(project.dir, common);
const off = await startServe(project.dir, { ...common, webhooks_enabled: false });
try {
  const admin = (await login(on.base, ADMIN)).access_token;
  await call(on.base, 'POST', '/api/admin/webhooks', {
    token: admin,
    json: { url: receiverUrl, events: ['user.updated'] },
  });
  const users = [];
  for (let i = 0; i < 20; i++)
    users.push(
      (
        await call(on.base, 'POST', '/api/auth/register', {
          json: { username: `wc-${i}`, password: 'bench-webhook-password-1' },
        })
      ).body.id,
    );
  const spread = users.map((id) => `/api/admin/user/${id}`);
  const seconds = Number(process.env.SECONDS_ ?? 5);
  const acc = { on: [], off: [] };
  for (let round = 0; round < Number(process.env.ROUNDS_ ?? 3); round++)
    for (const [name, srv] of [
      ['on', on],
      ['off', off],
    ]) {
      await new Promise((r) => setTimeout(r, 1500));
      const sp = tree(srv.pid),
        pp = pgPids();
      const dbName = new URL(database.url).pathname.slice(1);
      const before = {
        s: sum(sp),
        p: sum(pp),
        me: cpuOf(process.pid),
        l: cpuOf(loader.pid),
        x: xacts(dbName),
      };
      const d0 = delivered;
      const r = await ask({
        url: `${srv.base}${spread[0]}`,
        paths: spread,
        method: 'PATCH',
        connections: Number(process.env.CONN_ ?? 10),
        seconds,
        headers: { authorization: `Bearer ${admin}` },
        contentType: 'application/json',
        bodies: ['{"firstName":"a"}', '{"firstName":"b"}', '{"firstName":"c"}'],
      });
      await new Promise((res) => setTimeout(res, 1200));
      const pp2 = pgPids();
      const after = {
        s: sum(sp),
        p: sum(pp2),
        me: cpuOf(process.pid),
        l: cpuOf(loader.pid),
        x: xacts(dbName),
      };
      const n = r.total ?? r.rps * seconds;
      const per = (k) => (((after[k] - before[k]) * 1000) / n).toFixed(0);
      acc[name].push({
        rps: r.rps,
        s: ((after.s - before.s) * 1000) / n,
        p: ((after.p - before.p) * 1000) / n,
        me: ((after.me - before.me) * 1000) / n,
        l: ((after.l - before.l) * 1000) / n,
        x: (after.x - before.x) / n,
      });
      console.log(
        `${name}: ${r.rps.toFixed(0)} req/s, n=${n}, delivered ${delivered - d0}; µs/req server ${per('s')} pg ${per('p')} receiver ${per('me')} loader ${per('l')} xacts/req ${((after.x - before.x) / n).toFixed(2)}`,
      );
    }
  const med = (a) => {
    const b = [...a].sort((x, y) => x - y);
    return b[Math.floor(b.length / 2)];
  };
  const m = (k, f) => med(acc[k].map((x) => x[f]));
  for (const k of ['on', 'off'])
    console.log(
      `median ${k}: ${m(k, 'rps').toFixed(0)} req/s; µs/req server ${m(k, 's').toFixed(0)} pg ${m(k, 'p').toFixed(0)} receiver ${m(k, 'me').toFixed(0)} loader ${m(k, 'l').toFixed(0)} xacts/req ${m(k, 'x').toFixed(2)}`,
    );
  console.log(`receiver: ${delivered} requests on ${receiver.connections} connections`);
  console.log(`ratio rps ${((m('on', 'rps') / m('off', 'rps')) * 100).toFixed(0)}%`);
} finally {
  loader.kill();
  await on.stop();
  await off.stop();
  await receiver.close();
  project.remove();
  await database.drop().catch(() => {});
}
