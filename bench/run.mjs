#!/usr/bin/env node
// docs/performance.md "Benchmark suite": the benchmark suite.
//
//   pnpm bench [--quick] [--peer] [--out <file>]     (node bench/run.mjs)
//   pnpm bench --cli [--runs N] [--against <bin.js>]  (the CLI's start-up alone, bench/cli-start.mjs)
//
// --peer adds Better Auth (bench/lib/peer.mjs) beside svc to the file database's run; --out writes the
// figures to another file than bench/results.json (the CI smoke test, test/bench/quick.test.ts).
//
// Starts real `svc serve` processes on a copy of the demo project (file database; also PostgreSQL when
// SVC_TEST_POSTGRES_URL is set) and, in the same run, the baselines of bench/lib/baselines.mjs. autocannon runs
// in a separate process (bench/lib/load.mjs), loopback only. Every target gets a warm-up, then rounds; the
// rounds of all targets are interleaved (round 1 of each, then round 2…) so a burst of other work on the machine
// falls on all of them alike; medians are quoted. Prints a table per database and writes bench/results.json.
// See bench/README.md for what each row measures.
import { fork } from 'node:child_process';
import { createSecretKey } from 'node:crypto';
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, URLSearchParams } from 'node:url';
import jwt from 'jsonwebtoken';
import {
  ADMIN,
  READER,
  call,
  createProject,
  login,
  projectDatabaseUrl,
  seedLoginUsers,
  seedReader,
  startServe,
} from './lib/project.mjs';
import { cpuSecondsOf, memoryOf, settle } from './lib/cpu.mjs';
import { fmtInt, fmtMs, fmtPct, fmtUs, median, table } from './lib/stats.mjs';
import { eventsAvailable, measureSockets } from './lib/ws.mjs';
import { DATA_LABELS, DATA_SIZES, runData } from './lib/data.mjs';
import { mintExchangeBodies, startGithubStandIn } from './lib/oauth.mjs';
import { CONSOLE_BUDGET, CONSOLE_SIZES, runConsoleData } from './lib/data-console.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
// `--cli`: only the CLI's start-up (bench/cli-start.mjs, docs/performance.md "The CLI's start"), its figures in
// bench/results-cli.json; it takes `--runs N`, `--against <bin.js>` and `--out <file>`.
if (process.argv.includes('--cli')) {
  await (await import('./cli-start.mjs')).runCliStart(process.argv.slice(2));
  process.exit();
}
// SPEC-3 §3 Webhooks: `--webhooks` runs only the webhook scenario (bench/webhooks.mjs), its figures in
// bench/results-webhooks.json.
if (process.argv.includes('--webhooks')) {
  await (await import('./webhooks.mjs')).runWebhooks(process.argv.slice(2));
  process.exit();
}
// SPEC-3 §6: `--console`: only the admin console's size, gzipped, against its 150 KB budget (bench/console-size.mjs,
// docs/admin-console.md "Size"), its figures in bench/results-console.json.
if (process.argv.includes('--console')) {
  await (await import('./console-size.mjs')).runConsoleSize();
  process.exit();
}
const quick = process.argv.includes('--quick');
/** `--data`: only the data-size scenario (bench/lib/data.mjs), its figures in bench/results-data.json. */
const data = process.argv.includes('--data');
/**
 * `--data --console-sizes [--scale F]`: on PostgreSQL only, the admin console's lists at a million users and ten
 * million activity entries (bench/lib/data-console.mjs), `--scale` a fraction of those sizes (0.1: a tenth).
 */
const consoleSizes = data && process.argv.includes('--console-sizes');
const scaleIndex = process.argv.indexOf('--scale');
const scale = scaleIndex > 0 ? Number(process.argv[scaleIndex + 1]) : 1;
if (!(scale > 0 && scale <= 1)) {
  console.error('--scale takes a number in (0, 1]');
  process.exit(2);
}
/** `--peer`: Better Auth beside svc in the file database's run (docs/performance.md "Beside Better Auth"). */
const peer = process.argv.includes('--peer');
/** `--only sqlite|pg`: one database's run (PostgreSQL still needs SVC_TEST_POSTGRES_URL). */
const onlyIndex = process.argv.indexOf('--only');
const only = onlyIndex > 0 ? process.argv[onlyIndex + 1] : undefined;
if (only !== undefined && only !== 'sqlite' && only !== 'pg') {
  console.error('--only takes sqlite or pg');
  process.exit(2);
}
const outIndex = process.argv.indexOf('--out');
const outFile = outIndex > 0 ? process.argv[outIndex + 1] : undefined;
const DATA_PLAN = consoleSizes
  ? quick
    ? { warmup: 1, count: 5, connections: 10, stallSeconds: 2, routeSeconds: 1 }
    : { warmup: 3, count: 20, connections: 10, stallSeconds: 10, routeSeconds: 6 }
  : quick
    ? { warmup: 2, count: 10, connections: 10, stallSeconds: 5 }
    : { warmup: 3, count: 20, connections: 10, stallSeconds: 10 };
// Quick mode is the CI smoke test's (it must finish well under a minute on a busy 2-core machine): every
// scenario runs, its figures are not worth quoting.
const PLAN = quick
  ? { warmup: 0, rounds: 1, duration: 1, connections: 10, coldStarts: 1, sockets: 200, broadcasts: 5 }
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
  // SPEC-3 §1: the exchange replaces the password's hash by the identity's one indexed lookup (its budget: no more
  // than one lookup added to a login's statements), so it is at least as fast as a password login.
  {
    row: 'oauth-exchange',
    of: 'login',
    min: 1,
    text: 'social login exchange >= password login (one indexed lookup, no password hash)',
  },
  // SPEC-3 §2 organizations: the membership check rides in the guard's one query.
  {
    row: 'org-notes',
    of: 'notes',
    min: 0.95,
    text: 'route with organizationPermissions >= 95% of the same with permissions',
  },
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
  'write-sync': 'POST /api/notes/:id/archive, activity_log_sync (entry written before the answer)',
  refresh: 'POST /api/auth/refresh-token (rotation)',
  'user-access-log': 'GET /api/auth/user, log level INFO (access log)',
  'forgot-known': 'POST /api/auth/password/forgot, known address',
  'forgot-unknown': 'POST /api/auth/password/forgot, unknown address',
  pat: 'GET /api/notes/ with a personal access token',
  'user-nosid': 'GET /api/auth/user, access token without sid (no session check)',
  // SPEC-3 §5 and §4 (docs/browser-sessions.md, docs/impersonation.md)
  'user-cookie': 'GET /api/auth/user, the access token in the session cookie (no Authorization)',
  impersonate: 'POST /api/admin/user/{id}/impersonate (a new session and token each)',
  // SPEC-3 §1 (docs/social-login.md)
  'oauth-exchange': 'POST /api/auth/oauth/exchange (social login: a single-use code each)',
  // SPEC-3 §2 organizations
  'org-notes': 'GET /api/org-notes/ (organizationPermissions: notes.read, X-Organization-Id)',
};

/** Rows whose ratio is read against another row of the same run without being a target. */
const RELATIVE = {
  'user-access-log': 'user',
  'forgot-unknown': 'forgot-known',
  pat: 'notes',
  'user-nosid': 'user',
  // docs/activity-log.md "Write-behind and activity_log_sync": what writing the entry before answering costs.
  'write-sync': 'write-on',
  // SPEC-3 §5: the cookie check costs what the bearer check costs (the same query, a cookie read).
  'user-cookie': 'user',
  impersonate: 'refresh',
};

/** `--peer`: who-am-I and password login of svc and Better Auth, each pair in the same interleaved run. */
const PEER_LABELS = {
  'peer-session': 'Better Auth: GET /api/auth/get-session (session cookie)',
  'login-one': 'svc: POST /api/auth/token, one user (login_max_attempts raised)',
  'peer-login': 'Better Auth: POST /api/auth/sign-in/email, one user',
};
const PEER_PAIRS = [
  { svc: 'user', peer: 'peer-session', text: 'who-am-I: GET /api/auth/user against get-session', min: 4 },
  { svc: 'login-one', peer: 'peer-login', text: 'password login, one user', min: 5 },
];

// ------------------------------------------------------------------------------------------------ children

/** `items` in an order fixed by `seed` (Fisher-Yates over mulberry32): the same order every run. */
function shuffled(items, seed) {
  let state = seed >>> 0;
  const random = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const list = [...items];
  for (let i = list.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [list[i], list[j]] = [list[j], list[i]];
  }
  return list;
}

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

/**
 * Better Auth beside svc (`--peer`): its process on a file database in the project's directory, one user
 * signed up, and the session cookie its sign-in sets, sent back as a browser would.
 */
async function startPeer(dir, user) {
  const child = fork(join(HERE, 'lib', 'peer.mjs'), [JSON.stringify({ dir, users: [user] })], {
    stdio: 'inherit',
  });
  const { port, base } = await ask(child, undefined, 'Better Auth');
  const res = await fetch(`${base}/api/auth/sign-in/email`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: base },
    body: JSON.stringify({ email: user.email, password: user.password }),
  });
  if (res.status !== 200) throw new Error(`Better Auth sign-in: ${res.status} ${await res.text()}`);
  const cookie = res.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ');
  return {
    child,
    port,
    base,
    cookie,
    stop: () => new Promise((resolve) => (child.once('exit', resolve), child.send('stop'))),
  };
}

/** The user of the forgot-password scenario: an account with an address (its mail is only logged). */
const FORGOT_USER = {
  username: 'bench-forgot',
  password: 'bench-forgot-password-1',
  email: 'bench-forgot@example.com',
};
/** The one user whose parallel logins `--peer` compares (svc side; Better Auth signs up the same). */
const PEER_USER = { username: 'bench-peer', password: 'bench-peer-password-1' };

async function runDatabase(name, databaseUrl, { withPeer = false } = {}) {
  const t0 = Date.now();
  const log = (m) => console.error(`[bench ${name} ${((Date.now() - t0) / 1000).toFixed(0)} s] ${m}`);
  const project = await createProject({ databaseUrl });
  const env = readFileSync(join(project.dir, '.env'), 'utf8');
  const secret = /^SVC_SECRET_KEY=(.*)$/m.exec(env)[1].trim();
  const stops = [];
  const loader = forkChild('load.mjs');
  const out = { rows: {}, coldStarts: [], orders: [] };
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

    // SPEC-3 §1: the row oauth-exchange signs in through a loopback stand-in for GitHub (bench/lib/oauth.mjs).
    const github = await startGithubStandIn();
    stops.push(github.stop);
    // The servers start side by side (each is stopped at the end even when another failed to start).
    const started = await Promise.allSettled([
      startServe(project.dir, {
        activity_log_enabled: true,
        personal_tokens_enabled: true,
        // SPEC-3 §4 and §5: the rows user-cookie and impersonate.
        cookie_sessions_enabled: true,
        impersonation_enabled: true,
        ...github.settings,
      }),
      startServe(project.dir, { activity_log_enabled: false }),
      startServe(project.dir, { log_level: 'INFO' }),
      startServe(project.dir, { activity_log_enabled: true, activity_log_sync: true }),
    ]);
    for (const s of started) if (s.status === 'fulfilled') stops.push(s.value.stop);
    for (const s of started) if (s.status === 'rejected') throw s.reason;
    const [on, off, info, sync] = started.map((s) => s.value);
    const { noteId } = await seedReader(on.base);
    await call(on.base, 'POST', '/api/auth/register', { json: FORGOT_USER });
    const reader = await login(on.base, READER);
    const tokens = [reader.access_token];
    // Refresh chains: one per connection, plus what rounds ending with a request in flight lose.
    const seedTokens = [];
    const chains = PLAN.connections * (PLAN.rounds + (quick ? 1 : 3));
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

    // --peer: Better Auth, and a svc server whose lock allows one user's parallel logins (SPEC "Account
    // login lock" counts attempts before the password check).
    let one;
    let better;
    if (withPeer) {
      one = await startServe(project.dir, { login_max_attempts: 1_000_000 });
      stops.push(one.stop);
      await call(one.base, 'POST', '/api/auth/register', { json: PEER_USER });
      better = await startPeer(project.dir, {
        email: 'bench-peer@example.com',
        password: PEER_USER.password,
        name: PEER_USER.username,
      });
      stops.push(better.stop);
    }

    // PostgreSQL: the CPU of the database's backend processes too (`pg_stat_activity`, then /proc).
    let dbCpu;
    if (databaseUrl) {
      const postgres = (await import('./lib/pg.mjs')).default.client(databaseUrl);
      stops.push(() => postgres.end());
      dbCpu = async () => {
        const rows =
          await postgres`SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`;
        return new Map(rows.map(({ pid }) => [pid, cpuSecondsOf(pid)]).filter(([, s]) => Number.isFinite(s)));
      };
    }

    const c = PLAN.connections;
    const servers = new Map([
      [bare.port, bare.child.pid],
      [auth.port, auth.child.pid],
      [on.port, on.pid],
      [off.port, off.pid],
      [info.port, info.pid],
      [sync.port, sync.pid],
      ...(one ? [[one.port, one.pid]] : []),
      ...(better ? [[better.port, better.child.pid]] : []),
    ]);
    const http = (port, path, extra = {}) => ({
      url: `http://127.0.0.1:${port}${path}`,
      method: 'GET',
      connections: c,
      pid: servers.get(port),
      ...extra,
    });
    const json = (body) => ({ method: 'POST', contentType: 'application/json', body: JSON.stringify(body) });
    // Logins of distinct users: parallel logins of ONE user would trip its lock, whose attempts are counted
    // before the password check (SPEC "Account login lock").
    const loginUsers = await seedLoginUsers(on.base, c);
    const forms = loginUsers.map((u) => new URLSearchParams(u).toString());
    // SPEC-2 "Personal access tokens": one of the reader's, holding notes.read, on the permission route.
    const pat = await call(on.base, 'POST', '/api/auth/tokens', {
      token: reader.access_token,
      json: { name: 'bench', permissions: ['notes.read'] },
    }).then(
      (r) => r.body.token,
      (error) => log(`personal access tokens not available (${error.message}): row skipped`),
    );
    // SPEC-2 "Sessions": a token with `sid` has its session checked on every request; the same claims
    // without `sid` (a token issued before sessions, valid until it expires) show what the check costs.
    const claims = jwt.decode(reader.access_token);
    const noSid =
      claims?.sid &&
      jwt.sign(
        Object.fromEntries(Object.entries(claims).filter(([k]) => k !== 'sid')),
        createSecretKey(Buffer.from(secret)),
        { algorithm: 'HS256' },
      );

    // SPEC-3 §5: the reader's own access token as the browser sends it (public_url is empty: Secure, `__Host-`);
    // SPEC-3 §4: the demo's admin impersonating the reader, one new session a request.
    const cookieJob = http(on.port, '/api/auth/user', {
      headers: { cookie: `__Host-svc_session=${reader.access_token}` },
    });
    const impersonator = await login(on.base, ADMIN);
    const impersonateJob = http(on.port, `/api/admin/user/${claims.sub}/impersonate`, {
      ...json({ reason: 'bench' }),
      tokens: [impersonator.access_token],
    });
    // SPEC-3 §2 organizations: an organization the reader owns (owners hold notes.read, demo organizationRoles).
    const orgId = await call(on.base, 'POST', '/api/organizations', {
      token: reader.access_token,
      json: { name: 'Bench', slug: 'bench-org' },
    }).then(
      (r) => r.body.id,
      (error) => log(`organizations not available (${error.message}): row skipped`),
    );

    const jobs = {
      'express-bare': http(bare.port, '/bare'),
      'express-auth': http(auth.port, '/me', { tokens }),
      argon2: { argon2: true, pid: argon2.pid },
      login: http(on.port, '/api/auth/token', {
        method: 'POST',
        bodies: forms,
        contentType: 'application/x-www-form-urlencoded',
      }),
      user: http(on.port, '/api/auth/user', { tokens }),
      notes: http(on.port, '/api/notes/', { tokens }),
      'write-on': http(on.port, `/api/notes/${noteId}/archive`, { method: 'POST', tokens }),
      'write-off': http(off.port, `/api/notes/${noteId}/archive`, { method: 'POST', tokens }),
      'write-sync': http(sync.port, `/api/notes/${noteId}/archive`, { method: 'POST', tokens }),
      refresh: http(on.port, '/api/auth/refresh-token', { method: 'POST', chain: 'refresh', seedTokens }),
      'user-access-log': http(info.port, '/api/auth/user', { tokens }),
      // SPEC-2 "Password reset": 202 at once for any address, the lookup after the answer; the known
      // address is in its mail cooldown after the first request, as an address asked for repeatedly is.
      'forgot-known': http(on.port, '/api/auth/password/forgot', json({ email: FORGOT_USER.email })),
      'forgot-unknown': http(on.port, '/api/auth/password/forgot', json({ email: 'nobody@example.com' })),
      ...(pat ? { pat: http(on.port, '/api/notes/', { tokens: [pat] }) } : {}),
      ...(orgId
        ? {
            'org-notes': http(on.port, '/api/org-notes/', {
              tokens,
              headers: { 'x-organization-id': orgId },
            }),
          }
        : {}),
      ...(noSid ? { 'user-nosid': http(on.port, '/api/auth/user', { tokens: [noSid] }) } : {}),
      'user-cookie': cookieJob,
      impersonate: impersonateJob,
      // SPEC-3 §1: one single-use code a request, made before each round (bench/lib/oauth.mjs), of `c` users as
      // the login row's: the round ends when its codes are spent or its time is up.
      'oauth-exchange': http(on.port, '/api/auth/oauth/exchange', {
        method: 'POST',
        contentType: 'application/json',
        prepare: async (seconds, rate) =>
          mintExchangeBodies(on.base, Math.min(Math.ceil(seconds * rate * 1.5), 20_000), c),
      }),
    };
    if (withPeer) {
      const origin = { origin: better.base };
      jobs['peer-session'] = http(better.port, '/api/auth/get-session', {
        headers: { ...origin, cookie: better.cookie },
      });
      // Better Auth answers a login in about 0.1 s of CPU: a round of both logins lasts 4 s at least, so that
      // a quick round has answers to count.
      jobs['login-one'] = http(one.port, '/api/auth/token', {
        minSeconds: 4,
        method: 'POST',
        contentType: 'application/x-www-form-urlencoded',
        body: new URLSearchParams(PEER_USER).toString(),
      });
      jobs['peer-login'] = http(better.port, '/api/auth/sign-in/email', {
        ...json({ email: 'bench-peer@example.com', password: PEER_USER.password }),
        headers: origin,
        minSeconds: 4,
      });
    }
    /** The last round's rate of each job that makes its request bodies per round (`prepare`). */
    const rates = {};
    const run = async (key, seconds) => {
      const { pid, minSeconds = 0, prepare, ...job } = jobs[key];
      seconds = Math.max(seconds, minSeconds);
      if (prepare) {
        // Single-use bodies, made before the round (not in its figures); `amount` stops at the last one.
        job.bodies = await prepare(seconds, rates[key] ?? 500);
        job.amount = job.bodies.length;
        await settle(pid);
      }
      const dbBefore = await dbCpu?.();
      const cpuBefore = cpuSecondsOf(pid);
      const r = job.argon2
        ? await ask(argon2, { concurrency: c, seconds }, 'argon2')
        : await ask(loader, { ...job, seconds }, 'autocannon');
      // Server CPU per request: the process (threads and children included) over the round, divided by the
      // requests answered in it.
      r.cpu = (cpuSecondsOf(pid) - cpuBefore) / r.total;
      if (dbCpu) {
        // Only one job runs at a time: what the database's backends spent meanwhile is that job's.
        const after = await dbCpu();
        let spent = 0;
        for (const [backend, seconds] of after) spent += seconds - (dbBefore.get(backend) ?? 0);
        r.dbCpu = spent / r.total;
      }
      if (jobs[key].seedTokens) delete jobs[key].seedTokens; // handed over once
      if (prepare) rates[key] = r.rps;
      // The requests still in flight when the load stopped end before the next target's round starts: the
      // logins' hashes used to fall on the round after them (`user`, counted in its CPU per request).
      await settle(pid);
      return r;
    };
    const rounds = Object.fromEntries(Object.keys(jobs).map((k) => [k, []]));
    if (PLAN.warmup > 0) {
      log(`warm-up (${PLAN.warmup} s each)`);
      for (const key of Object.keys(jobs)) await run(key, PLAN.warmup);
    }
    for (let i = 0; i < PLAN.rounds; i++) {
      log(`round ${i + 1}/${PLAN.rounds} (${PLAN.duration} s each)`);
      // Each round runs the targets in another order, so that no target always follows the same one: what
      // a round leaves behind (a WAL to read through after the logins' writes, caches of another shape)
      // falls on different targets. Starting each round at another target kept the cyclic order, so
      // `GET /api/auth/user` still followed the login round in four rounds of five.
      const keys = shuffled(Object.keys(jobs), i + 1);
      out.orders.push(keys);
      for (const key of keys) rounds[key].push(await run(key, PLAN.duration));
    }
    for (const [key, list] of Object.entries(rounds)) {
      const failed = list.reduce((n, r) => n + r.non2xx + r.errors, 0);
      const total = list.reduce((n, r) => n + r.total, 0);
      out.rows[key] = {
        rps: median(list.map((r) => r.rps)),
        p50: median(list.map((r) => r.p50)),
        p99: median(list.map((r) => r.p99)),
        cpu: median(list.map((r) => r.cpu)),
        ...(dbCpu ? { dbCpu: median(list.map((r) => r.dbCpu)) } : {}),
        total,
        failed,
        rounds: list.map(({ rps, p50, p99, cpu, dbCpu, non2xx, errors }) => ({
          rps,
          p50,
          p99,
          cpu,
          dbCpu,
          non2xx,
          errors,
        })),
      };
      // A refresh chain loses one token per request in flight when a round ends; anything else is a failure.
      const allowed = key === 'refresh' ? c * (PLAN.rounds + 1) : 0;
      if (failed > allowed) log(`WARNING ${key}: ${failed} failed requests of ${total}`);
    }

    // docs/performance.md "Sizing": the instance that served the logins, refreshes and checks, after them.
    out.memory = memoryOf(on.pid);
    out.sizing = sizingOf(out.rows, out.memory);

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

/**
 * docs/performance.md "Sizing", the way Keycloak's sizing guide states it (password logins per second per vCPU):
 * requests per second that one core of the server sustains, from its CPU per request (all its threads, the
 * Argon2 pool included), beside bare Argon2id at the same parameters in the same run; what PostgreSQL's
 * backends spend for 100 logins a second, in cores; and the memory of the instance.
 */
function sizingOf(rows, memory) {
  const perCore = (key) => (rows[key]?.cpu > 0 ? 1 / rows[key].cpu : undefined);
  return {
    loginsPerCore: perCore('login'),
    argon2PerCore: perCore('argon2'),
    loginOfArgon2: perCore('login') / perCore('argon2'),
    refreshesPerCore: perCore('refresh'),
    checksPerCore: perCore('user'),
    ...(rows.login?.dbCpu !== undefined ? { postgresCoresPer100Logins: rows.login.dbCpu * 100 } : {}),
    rssMiB: memory.rssMiB,
    peakMiB: memory.peakMiB,
  };
}

function printSizing(sizing) {
  const lines = [
    ['per core of the server', 'requests/s'],
    ['password logins (POST /api/auth/token)', fmtInt(sizing.loginsPerCore)],
    ['bare Argon2id verify, same parameters', fmtInt(sizing.argon2PerCore)],
    ['logins of bare Argon2id', fmtPct(sizing.loginOfArgon2)],
    ['refreshes (POST /api/auth/refresh-token)', fmtInt(sizing.refreshesPerCore)],
    ['token checks (GET /api/auth/user)', fmtInt(sizing.checksPerCore)],
  ];
  if (sizing.postgresCoresPer100Logins !== undefined)
    lines.push(['PostgreSQL cores per 100 logins/s', sizing.postgresCoresPer100Logins.toFixed(2)]);
  lines.push([
    'memory of the instance after the rounds (peak)',
    `${Math.round(sizing.rssMiB)} MiB (${Math.round(sizing.peakMiB)} MiB)`,
  ]);
  console.log('');
  console.log(table(lines));
}

function print(name, result) {
  const { rows } = result;
  const ratioOf = {};
  for (const t of TARGETS) if (t.of) ratioOf[t.row] = t.of;
  const withDb = Object.values(rows).some((r) => r.dbCpu !== undefined);
  const lines = [
    [
      'scenario',
      'req/s',
      'p50',
      'p99',
      'server CPU / request',
      ...(withDb ? ['PostgreSQL CPU / request'] : []),
      'ratio to baseline',
      'baseline',
    ],
  ];
  const pad = withDb ? [''] : [];
  for (const key of Object.keys(LABELS)) {
    const r = rows[key];
    if (!r) continue;
    const base = ratioOf[key] ?? RELATIVE[key];
    lines.push([
      LABELS[key],
      fmtInt(r.rps),
      fmtMs(r.p50),
      fmtMs(r.p99),
      fmtUs(r.cpu),
      ...(withDb ? [r.dbCpu === undefined ? '' : fmtUs(r.dbCpu)] : []),
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
      ...pad,
      '',
      '',
    ]);
  if (rows['idle-socket'])
    lines.push([
      'heap per idle socket',
      `${rows['idle-socket'].kib.toFixed(1)} KiB`,
      '',
      '',
      '',
      ...pad,
      '',
      '',
    ]);
  lines.push(['cold start to /api/health/live', fmtMs(rows['cold-start'].ms), '', '', '', ...pad, '', '']);
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
  if (result.sizing) printSizing(result.sizing);
  if (result.peer) printPeer(result);
}

/** `--peer`: svc's and Better Auth's rows and the ratios of each pair (svc req/s over Better Auth's). */
function printPeer({ rows, peer }) {
  const lines = [['scenario', 'req/s', 'p50', 'p99', 'server CPU / request']];
  for (const key of ['user', 'peer-session', 'login-one', 'peer-login']) {
    const r = rows[key];
    lines.push([
      PEER_LABELS[key] ?? `svc: ${LABELS[key]}`,
      fmtInt(r.rps),
      fmtMs(r.p50),
      fmtMs(r.p99),
      fmtUs(r.cpu),
    ]);
  }
  console.log(`\n### Beside Better Auth ${peer.version} (file database, better-sqlite3)\n`);
  console.log(table(lines));
  console.log('');
  const verdict = [['svc against Better Auth', 'req/s', 'CPU per request', 'target', 'met']];
  for (const p of peer.pairs)
    verdict.push([
      p.text,
      `${p.ratio.toFixed(1)}x`,
      `${p.cpuRatio.toFixed(1)}x`,
      `>= ${p.min}x`,
      p.met ? 'yes' : 'NO',
    ]);
  console.log(table(verdict));
}

/** The ratios of PEER_PAIRS: req/s of svc over Better Auth's, and Better Auth's CPU per request over svc's. */
function evaluatePeer(rows) {
  const { version } = JSON.parse(
    readFileSync(join(HERE, 'node_modules', 'better-auth', 'package.json'), 'utf8'),
  );
  const pairs = PEER_PAIRS.map((p) => {
    const ratio = rows[p.svc].rps / rows[p.peer].rps;
    return { ...p, ratio, cpuRatio: rows[p.peer].cpu / rows[p.svc].cpu, met: ratio >= p.min };
  });
  return { version, pairs };
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

/** The console's sizes times `factor` (users, activity, group members, webhook events; the small tables kept). */
function scaledConsoleSizes(factor) {
  const scaled = { ...CONSOLE_SIZES };
  for (const key of ['users', 'activity', 'groupMembers', 'webhookEvents'])
    scaled[key] = Math.max(1000, Math.round(CONSOLE_SIZES[key] * factor));
  return scaled;
}

function printConsoleData(name, result) {
  const { sizes } = result;
  console.log(
    `\n### ${name}: the console's lists at ${fmtInt(sizes.users)} users, ${fmtInt(sizes.activity)} activity entries ` +
      (result.reused
        ? '(the database of an earlier run)\n'
        : `(seeded in ${fmtInt(result.seedMs / 1000)} s; text indexes ${fmtInt((result.textIndexMs ?? 0) / 1000)} s)\n`),
  );
  const passes = [
    [
      `other users at ${fmtInt(result.rate)} req/s (half of what the server answers alone)`,
      result.rows,
      result.summary,
    ],
    [
      'other users saturating (10 connections, as fast as answered)',
      result.rowsSaturated,
      result.summarySaturated,
    ],
  ];
  const { alone, aloneAtRate } = result.stall;
  if (result.clicks) {
    const c = result.clicks;
    console.log(
      `an administrator clicking through the lists (${fmtInt(c.pages)} pages, ${c.pauseMs} ms between an answer and the next click; pages p50 ${fmtMs(c.p50)}, max ${fmtMs(c.max)}), other users at ${fmtInt(result.rate)} req/s: ` +
        `GET /api/auth/user p50 ${fmtMs(c.userP50)} / p99 ${fmtMs(c.userP99)} (< ${CONSOLE_BUDGET.userP99Ms} ms: ${c.userP99 < CONSOLE_BUDGET.userP99Ms ? 'yes' : 'NO'}); ` +
        `alone at that rate p99 ${fmtMs(aloneAtRate?.p99)}\n`,
    );
  }
  for (const [title, rows, summary] of passes) {
    if (!rows || !summary) continue;
    console.log(`${title}:\n`);
    const lines = [
      ['console call (one admin request at a time)', 'p50', 'p95', 'max', 'GET /api/auth/user p99'],
    ];
    for (const [key, r] of Object.entries(rows))
      lines.push([
        `${result.labels[key]}${r.status === 200 ? '' : ` (${r.status})`}`,
        fmtMs(r.p50),
        fmtMs(r.p95),
        fmtMs(r.max),
        fmtMs(r.userP99),
      ]);
    const baseline = rows === result.rows ? aloneAtRate : alone;
    if (baseline)
      lines.push([
        'GET /api/auth/user alone (no admin)',
        fmtMs(baseline.p50),
        '-',
        fmtMs(baseline.max),
        fmtMs(baseline.p99),
      ]);
    console.log(table(lines));
    console.log(
      `\nbudget: every list p95 < ${CONSOLE_BUDGET.listP95Ms} ms: ${summary.overBudget.length === 0 ? 'yes' : `NO (${summary.overBudget.join(', ')})`}` +
        `; GET /api/auth/user p99 < ${CONSOLE_BUDGET.userP99Ms} ms during every list: ${summary.userP99Max < CONSOLE_BUDGET.userP99Ms ? 'yes' : `NO (max ${summary.userP99Max} ms)`}\n`,
    );
  }
}

const started = Date.now();
const report = {
  date: new Date().toISOString(),
  mode: `${quick ? 'quick' : 'full'}${data ? ' data' : ''}${consoleSizes ? ' console-sizes' : ''}${peer ? ' peer' : ''}`,
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
const databases = only === 'pg' || consoleSizes ? [] : [['file database (SQLite)', undefined]];
if ((only === 'pg' || consoleSizes) && !process.env.SVC_TEST_POSTGRES_URL) {
  console.error(`${consoleSizes ? '--console-sizes' : '--only pg'} needs SVC_TEST_POSTGRES_URL`);
  process.exit(2);
}
/**
 * `--data --console-sizes --reuse-project DIR`: the lists measured again on a project and database an earlier run
 * kept (`--keep-database`), without seeding them again (about ten minutes at the full sizes).
 */
const reuseIndex = process.argv.indexOf('--reuse-project');
const reuseProject = consoleSizes && reuseIndex > 0 ? process.argv[reuseIndex + 1] : undefined;
if (reuseProject) {
  const env = readFileSync(join(reuseProject, '.env'), 'utf8');
  const url = /^SVC_AUTH_DATABASE_URL=(.*)$/m.exec(env)?.[1];
  if (!url) throw new Error(`no SVC_AUTH_DATABASE_URL in ${reuseProject}/.env`);
  databases.push(['PostgreSQL', { url, drop: async () => undefined }]);
} else if (process.env.SVC_TEST_POSTGRES_URL && only !== 'sqlite') {
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
          const options = { plan: DATA_PLAN, ask: (job) => ask(loader, job, 'autocannon') };
          report.databases[name] = consoleSizes
            ? await runConsoleData(name, dbUrl, {
                ...options,
                sizes: scaledConsoleSizes(scale),
                keep: process.argv.includes('--keep-database'),
                reuse: reuseProject,
              })
            : await runData(name, dbUrl, options);
        } finally {
          loader.kill();
        }
        continue;
      }
      const withPeer = peer && dbUrl === undefined;
      const result = await runDatabase(name, dbUrl, { withPeer });
      result.targets = evaluate(result.rows);
      if (withPeer) result.peer = evaluatePeer(result.rows);
      report.databases[name] = result;
    } catch (error) {
      // One database failing (PostgreSQL unreachable, say) still reports the others.
      console.error(`[bench ${name}] FAILED: ${error?.stack ?? error}`);
      report.databases[name] = { error: String(error?.message ?? error) };
      process.exitCode = 1;
    }
  }
} finally {
  // `--keep-database`: the seeded PostgreSQL database stays (its URL printed) for EXPLAIN ANALYZE by hand.
  for (const [, url] of databases) {
    if (typeof url !== 'object') continue;
    if (process.argv.includes('--keep-database')) console.error(`kept the database ${url.url}`);
    else await url.drop();
  }
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
  else if (consoleSizes) printConsoleData(name, result);
  else if (data) printData(name, result);
  else print(name, result);
}
const file = outFile ?? join(HERE, data ? 'results-data.json' : 'results.json');
writeFileSync(`${file}.tmp`, `${JSON.stringify(report, null, 2)}\n`);
renameSync(`${file}.tmp`, file);
