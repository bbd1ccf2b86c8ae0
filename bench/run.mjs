#!/usr/bin/env node
// docs/performance.md "Benchmark suite": the benchmark suite.
//
//   pnpm bench [--quick]          (node bench/run.mjs)
//
// Starts real `svc serve` processes on a copy of the demo project (file database; also PostgreSQL when
// SVC_TEST_POSTGRES_URL is set) and, in the same run, the baselines of bench/lib/baselines.mjs. autocannon runs
// in a separate process (bench/lib/load.mjs), loopback only. Every target gets a warm-up, then rounds; the
// rounds of all targets are interleaved (round 1 of each, then round 2…) so a burst of other work on the machine
// falls on all of them alike; medians are quoted. Prints a table per database and writes bench/results.json.
// See bench/README.md for what each row measures.
import { fork } from 'node:child_process';
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, URLSearchParams } from 'node:url';
import {
  ADMIN,
  READER,
  createProject,
  login,
  projectDatabaseUrl,
  seedLoginUsers,
  seedReader,
  startServe,
} from './lib/project.mjs';
import { fmtInt, fmtMs, fmtPct, median, table } from './lib/stats.mjs';
import { eventsAvailable, measureSockets } from './lib/ws.mjs';
import { DATA_LABELS, DATA_SIZES, runData } from './lib/data.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const quick = process.argv.includes('--quick');
/** `--data`: only the data-size scenario (bench/lib/data.mjs), its figures in bench/results-data.json. */
const data = process.argv.includes('--data');
const DATA_PLAN = quick
  ? { warmup: 2, count: 10, connections: 10, stallSeconds: 5 }
  : { warmup: 3, count: 20, connections: 10, stallSeconds: 10 };
const PLAN = quick
  ? { warmup: 1, rounds: 3, duration: 2, connections: 10, coldStarts: 2, sockets: 1000, broadcasts: 20 }
  : { warmup: 2, rounds: 5, duration: 3, connections: 10, coldStarts: 3, sockets: 1000, broadcasts: 20 };

/** docs/performance.md "Targets": the figure is compared with `min` (at least), `max` (at most) or `below` (strictly less). */
const TARGETS = [
  { row: 'login', of: 'argon2', min: 0.85, text: 'login/s >= 85% of bare Argon2id verify/s' },
  { row: 'user', of: 'express-auth', min: 0.6, text: 'GET /api/auth/user >= 60% of HS256 + SELECT Express' },
  { row: 'user', metric: 'p99', below: 10, text: 'GET /api/auth/user p99 < 10 ms at 10 connections' },
  { row: 'notes', of: 'user', min: 0.85, text: 'route with permissions >= 85% of GET /api/auth/user' },
  { row: 'write-on', of: 'write-off', min: 0.9, text: 'logged write, activity log on >= 90% of off' },
  { row: 'refresh', of: 'user', min: 0.35, text: 'refresh (rotation) >= 35% of GET /api/auth/user' },
  { row: 'broadcast', metric: 'p99', max: 50, text: 'broadcast to 1,000 sockets: last socket p99 <= 50 ms' },
  { row: 'idle-socket', metric: 'kib', max: 16, text: 'idle socket <= 16 KiB of heap' },
  { row: 'cold-start', metric: 'ms', max: 1500, text: 'cold start to /api/health/live <= 1.5 s' },
];

const LABELS = {
  'express-bare': 'baseline: Express 5, bare route',
  'express-auth': 'baseline: Express 5, HS256 verify + PK SELECT',
  argon2: 'baseline: Argon2id verify (10 in flight)',
  login: 'POST /api/auth/token (login)',
  user: 'GET /api/auth/user',
  notes: 'GET /api/notes/ (permissions: notes.read)',
  'write-on': 'POST /api/notes/:id/archive, activity log on',
  'write-off': 'POST /api/notes/:id/archive, activity log off',
  refresh: 'POST /api/auth/refresh-token (rotation)',
  'user-access-log': 'GET /api/auth/user, log level INFO (access log)',
};

// ------------------------------------------------------------------------------------------------ children

function forkChild(script, args = []) {
  return fork(join(HERE, 'lib', script), args, { stdio: 'inherit' });
}

function ask(child, message, what) {
  return new Promise((resolve, reject) => {
    const onExit = (code) => reject(new Error(`${what} exited with ${code}`));
    child.once('exit', onExit);
    child.once('message', (m) => {
      child.off('exit', onExit);
      if (m?.error) reject(new Error(`${what}: ${m.error}`));
      else resolve(m);
    });
    if (message !== undefined) child.send(message);
  });
}

async function startBaseline(mode, arg) {
  const child = forkChild('baselines.mjs', [mode, ...(arg ? [JSON.stringify(arg)] : [])]);
  const ready = await ask(child, undefined, mode);
  return {
    ...ready,
    child,
    stop: () => new Promise((resolve) => (child.once('exit', resolve), child.send('stop'))),
  };
}

// ------------------------------------------------------------------------------------------------ one database

async function runDatabase(name, databaseUrl) {
  const log = (m) => console.error(`[bench ${name}] ${m}`);
  const project = await createProject({ databaseUrl });
  const env = readFileSync(join(project.dir, '.env'), 'utf8');
  const secret = /^SVC_SECRET_KEY=(.*)$/m.exec(env)[1].trim();
  const stops = [];
  const loader = forkChild('load.mjs');
  const out = { rows: {}, coldStarts: [] };
  try {
    log(`project ${project.dir}`);
    // Cold start: process start to the first 200 of /api/health/live, a fresh process each time.
    for (let i = 0; i < PLAN.coldStarts; i++) {
      const s = await startServe(project.dir);
      out.coldStarts.push(s.coldStartMs);
      await s.stop();
    }
    out.rows['cold-start'] = { ms: median(out.coldStarts), samples: out.coldStarts };
    log(`cold start ${out.coldStarts.map((n) => n.toFixed(0)).join(', ')} ms`);

    const on = await startServe(project.dir, { activity_log_enabled: true });
    stops.push(on.stop);
    const off = await startServe(project.dir, { activity_log_enabled: false });
    stops.push(off.stop);
    const info = await startServe(project.dir, { log_level: 'INFO' });
    stops.push(info.stop);
    const { noteId } = await seedReader(on.base);
    const reader = await login(on.base, READER);
    const tokens = [reader.access_token];
    // Refresh chains: one per connection, plus what rounds ending with a request in flight lose.
    const seedTokens = [];
    const chains = PLAN.connections * (PLAN.rounds + 3);
    for (let i = 0; i < chains; i += 5) {
      const batch = await Promise.all(Array.from({ length: 5 }, () => login(on.base, READER)));
      seedTokens.push(...batch.map((b) => b.refresh_token));
    }

    const bare = await startBaseline('--express-bare');
    stops.push(bare.stop);
    const auth = await startBaseline('--express-auth', {
      secret,
      databaseUrl: projectDatabaseUrl(project.dir),
      table: 'svc_user',
    });
    stops.push(auth.stop);
    const argon2 = forkChild('baselines.mjs', ['--argon2']);
    await ask(argon2, undefined, 'argon2');
    stops.push(async () => argon2.kill());

    const c = PLAN.connections;
    const http = (port, path, extra = {}) => ({
      url: `http://127.0.0.1:${port}${path}`,
      method: 'GET',
      connections: c,
      ...extra,
    });
    // Logins of distinct users: parallel logins of ONE user would trip its lock, whose attempts are counted
    // before the password check (SPEC "Account login lock").
    const loginUsers = await seedLoginUsers(on.base, c);
    const forms = loginUsers.map((u) => new URLSearchParams(u).toString());
    const jobs = {
      'express-bare': http(bare.port, '/bare'),
      'express-auth': http(auth.port, '/me', { tokens }),
      argon2: { argon2: true },
      login: http(on.port, '/api/auth/token', {
        method: 'POST',
        bodies: forms,
        contentType: 'application/x-www-form-urlencoded',
      }),
      user: http(on.port, '/api/auth/user', { tokens }),
      notes: http(on.port, '/api/notes/', { tokens }),
      'write-on': http(on.port, `/api/notes/${noteId}/archive`, { method: 'POST', tokens }),
      'write-off': http(off.port, `/api/notes/${noteId}/archive`, { method: 'POST', tokens }),
      refresh: http(on.port, '/api/auth/refresh-token', { method: 'POST', chain: 'refresh', seedTokens }),
      'user-access-log': http(info.port, '/api/auth/user', { tokens }),
    };
    const run = async (key, seconds) => {
      const job = jobs[key];
      const r = job.argon2
        ? await ask(argon2, { concurrency: c, seconds }, 'argon2')
        : await ask(loader, { ...job, seconds }, 'autocannon');
      if (job.seedTokens) delete job.seedTokens; // handed over once
      return r;
    };
    const rounds = Object.fromEntries(Object.keys(jobs).map((k) => [k, []]));
    log(`warm-up (${PLAN.warmup} s each)`);
    for (const key of Object.keys(jobs)) await run(key, PLAN.warmup);
    for (let i = 0; i < PLAN.rounds; i++) {
      log(`round ${i + 1}/${PLAN.rounds} (${PLAN.duration} s each)`);
      for (const key of Object.keys(jobs)) rounds[key].push(await run(key, PLAN.duration));
    }
    for (const [key, list] of Object.entries(rounds)) {
      const failed = list.reduce((n, r) => n + r.non2xx + r.errors, 0);
      const total = list.reduce((n, r) => n + r.total, 0);
      out.rows[key] = {
        rps: median(list.map((r) => r.rps)),
        p50: median(list.map((r) => r.p50)),
        p99: median(list.map((r) => r.p99)),
        total,
        failed,
        rounds: list.map(({ rps, p50, p99, non2xx, errors }) => ({ rps, p50, p99, non2xx, errors })),
      };
      // A refresh chain loses one token per request in flight when a round ends; anything else is a failure.
      const allowed = key === 'refresh' ? c * (PLAN.rounds + 1) : 0;
      if (failed > allowed) log(`WARNING ${key}: ${failed} failed requests of ${total}`);
    }

    // WebSocket scenarios, when the events feature is there.
    const admin = await login(on.base, ADMIN);
    if (await eventsAvailable(on.base, admin.access_token)) {
      const ws = await startServe(project.dir, {}, { nodeOptions: ['--inspect=127.0.0.1:0'] });
      stops.push(ws.stop);
      const inspectorUrl = /ws:\/\/127\.0\.0\.1:\d+\/[\w-]+/.exec(ws.output())[0];
      const wsAdmin = await login(ws.base, ADMIN);
      log(`WebSocket: ${PLAN.sockets} sockets, ${PLAN.broadcasts} broadcasts`);
      const s = await measureSockets({
        server: ws,
        inspectorUrl,
        adminToken: wsAdmin.access_token,
        trigger: READER,
        sockets: PLAN.sockets,
        broadcasts: PLAN.broadcasts,
      });
      out.sockets = s;
      out.rows.broadcast = {
        p50: s.lastSocketP50,
        p99: s.lastSocketP99,
        complete: s.complete,
        of: s.broadcasts,
      };
      out.rows['idle-socket'] = { kib: s.perSocketBytes / 1024 };
    } else {
      log('events not available (POST /api/core/events/ticket failed): WebSocket scenarios skipped');
    }
  } finally {
    loader.kill();
    for (const stop of stops.reverse()) await stop().catch(() => {});
    project.remove();
  }
  return out;
}

// ------------------------------------------------------------------------------------------------ report

function evaluate(rows) {
  return TARGETS.map((t) => {
    const row = rows[t.row];
    let value;
    if (!row) value = NaN;
    else if (t.of) value = row.rps / rows[t.of]?.rps;
    else value = row[t.metric];
    const met = !Number.isFinite(value)
      ? null
      : t.min !== undefined
        ? value >= t.min
        : t.below !== undefined
          ? value < t.below
          : value <= t.max;
    return { target: t.text, row: t.row, value, met };
  });
}

function print(name, result) {
  const { rows } = result;
  const ratioOf = {};
  for (const t of TARGETS) if (t.of) ratioOf[t.row] = t.of;
  const lines = [['scenario', 'req/s', 'p50', 'p99', 'ratio to baseline', 'baseline']];
  for (const key of Object.keys(LABELS)) {
    const r = rows[key];
    if (!r) continue;
    const base = ratioOf[key] ?? (key === 'user-access-log' ? 'user' : undefined);
    lines.push([
      LABELS[key],
      fmtInt(r.rps),
      fmtMs(r.p50),
      fmtMs(r.p99),
      base ? fmtPct(r.rps / rows[base].rps) : '',
      base ? base : '',
    ]);
  }
  if (rows.broadcast)
    lines.push([
      `WebSocket broadcast, last of ${result.sockets.sockets} sockets`,
      '',
      fmtMs(rows.broadcast.p50),
      fmtMs(rows.broadcast.p99),
      '',
      '',
    ]);
  if (rows['idle-socket'])
    lines.push(['heap per idle socket', `${rows['idle-socket'].kib.toFixed(1)} KiB`, '', '', '', '']);
  lines.push(['cold start to /api/health/live', fmtMs(rows['cold-start'].ms), '', '', '', '']);
  console.log(`\n### ${name}\n`);
  console.log(table(lines));
  console.log('');
  const verdict = [['target', 'value', 'met']];
  for (const e of result.targets) {
    const t = TARGETS.find((x) => x.text === e.target);
    const v = t.of ? fmtPct(e.value) : t.metric === 'kib' ? `${e.value?.toFixed(1)} KiB` : fmtMs(e.value);
    verdict.push([e.target, v, e.met === null ? 'not measured' : e.met ? 'yes' : 'NO']);
  }
  console.log(table(verdict));
}

function printData(name, result) {
  const lines = [['request', 'p50', 'max']];
  for (const [key, label] of Object.entries(DATA_LABELS)) {
    const r = result.rows[key];
    if (r) lines.push([label, fmtMs(r.p50), fmtMs(r.max)]);
  }
  const { alone, withAdmin, withAdminKeyset } = result.stall;
  lines.push([
    'GET /api/auth/user alone, p50 / p99',
    `${fmtMs(alone.p50)} / ${fmtMs(alone.p99)}`,
    fmtMs(alone.max),
  ]);
  lines.push([
    `GET /api/auth/user while an admin loops over the routes above, p50 / p99 (${fmtInt(withAdmin.rps)} req/s, alone ${fmtInt(alone.rps)})`,
    `${fmtMs(withAdmin.p50)} / ${fmtMs(withAdmin.p99)}`,
    fmtMs(withAdmin.max),
  ]);
  if (withAdminKeyset)
    lines.push([
      `… the same loop without page=20000 (OFFSET), p50 / p99 (${fmtInt(withAdminKeyset.rps)} req/s)`,
      `${fmtMs(withAdminKeyset.p50)} / ${fmtMs(withAdminKeyset.p99)}`,
      fmtMs(withAdminKeyset.max),
    ]);
  console.log(
    `\n### ${name}: ${fmtInt(DATA_SIZES.activity)} activity entries, ${fmtInt(DATA_SIZES.users)} users\n`,
  );
  console.log(table(lines));
  const verdict = [['target', 'value', 'met']];
  verdict.push([
    'GET /api/auth/user p99 < 20 ms while the admin routes loop',
    fmtMs(withAdmin.p99),
    withAdmin.p99 < 20 ? 'yes' : 'NO',
  ]);
  for (const key of ['logs', 'logs-search', 'users-search']) {
    const r = result.rows[key];
    if (r) verdict.push([`${DATA_LABELS[key]} p50 < 50 ms`, fmtMs(r.p50), r.p50 < 50 ? 'yes' : 'NO']);
  }
  console.log('');
  console.log(table(verdict));
}

const started = Date.now();
const report = {
  date: new Date().toISOString(),
  mode: `${quick ? 'quick' : 'full'}${data ? ' data' : ''}`,
  plan: data ? DATA_PLAN : PLAN,
  machine: {
    node: process.version,
    cpus: cpus().length,
    cpu: cpus()[0]?.model,
    memoryGiB: Math.round(totalmem() / 2 ** 30),
  },
  loadAverageBefore: loadavg()[0],
  databases: {},
};
const databases = [['file database (SQLite)', undefined]];
if (process.env.SVC_TEST_POSTGRES_URL) {
  // A fresh database for the run, dropped at the end.
  const postgres = (await import('./lib/pg.mjs')).default;
  databases.push(['PostgreSQL', await postgres.create(process.env.SVC_TEST_POSTGRES_URL)]);
}
try {
  for (const [name, url] of databases) {
    try {
      const dbUrl = typeof url === 'object' ? url.url : url;
      if (data) {
        const loader = forkChild('load.mjs');
        try {
          report.databases[name] = await runData(name, dbUrl, {
            plan: DATA_PLAN,
            ask: (job) => ask(loader, job, 'autocannon'),
          });
        } finally {
          loader.kill();
        }
        continue;
      }
      const result = await runDatabase(name, dbUrl);
      result.targets = evaluate(result.rows);
      report.databases[name] = result;
    } catch (error) {
      // One database failing (PostgreSQL unreachable, say) still reports the others.
      console.error(`[bench ${name}] FAILED: ${error?.stack ?? error}`);
      report.databases[name] = { error: String(error?.message ?? error) };
      process.exitCode = 1;
    }
  }
} finally {
  for (const [, url] of databases) if (typeof url === 'object') await url.drop();
}
report.loadAverageAfter = loadavg()[0];
report.seconds = Math.round((Date.now() - started) / 1000);
console.log(
  `${report.date}  node ${report.machine.node}  ${report.machine.cpus} x ${report.machine.cpu}  ${report.mode} ` +
    (data
      ? `(${DATA_PLAN.warmup} warm-up + ${DATA_PLAN.count} sequential requests a route; GET /api/auth/user ` +
        `${DATA_PLAN.stallSeconds} s x ${DATA_PLAN.connections} connections)  `
      : `(warm-up ${PLAN.warmup} s, ${PLAN.rounds} rounds x ${PLAN.duration} s, ${PLAN.connections} connections, medians)  `) +
    `load average ${report.loadAverageBefore.toFixed(2)} before, ${report.loadAverageAfter.toFixed(2)} after; ${report.seconds} s`,
);
for (const [name, result] of Object.entries(report.databases)) {
  if (result.error) console.log(`\n### ${name}\n\nFAILED: ${result.error}`);
  else if (data) printData(name, result);
  else print(name, result);
}
const file = join(HERE, data ? 'results-data.json' : 'results.json');
writeFileSync(`${file}.tmp`, `${JSON.stringify(report, null, 2)}\n`);
renameSync(`${file}.tmp`, file);
