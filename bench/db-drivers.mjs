#!/usr/bin/env node
// docs/performance.md "File database driver": choose the SQLite file driver by measurement, on the authenticated-request path.
//
//   node bench/db-drivers.mjs [--quick]
//
// For each candidate driver, through drizzle-orm:
//   - a temp SQLite file in WAL mode with a `user` table of 10k rows keyed by uuid text;
//   - an Express 5 route in a child process on 127.0.0.1 (ephemeral port): jsonwebtoken HS256 verify with a
//     KeyObject built once (crypto.createSecretKey) + one primary-key SELECT through a statement prepared once;
//   - autocannon from a separate child process: 10 connections, 2 s warm-up, then 3 rounds of 5 s
//     (--quick: 1 s warm-up, 1 round of 3 s); the median round is quoted (req/s, p50, p99);
//   - the prepared SELECT in a tight loop (queries/s), through drizzle and through the driver alone.
// Once: the same route with a plain string secret (the KeyObject effect), and jsonwebtoken verifies/s both ways.
// Prints a table and writes bench/db-drivers.json. Loopback only; every loop is bounded in time.
import { fork } from 'node:child_process';
import { createSecretKey, randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const require = createRequire(import.meta.url);
const SELF = fileURLToPath(import.meta.url);
const HERE = dirname(SELF);

const ROWS = 10_000;
const TOKENS = 1_000; // tokens for distinct users, rotated per request so the SELECT does not hit one row only
const SECRET = 'bench-secret-at-least-32-bytes-long-0123456789';
const SYNCHRONOUS = 'NORMAL'; // the kernel default (settings.sqlite_synchronous)

/** The candidates. `drizzle` names the drizzle-orm driver each one runs under. */
const DRIVERS = {
  'better-sqlite3': { drizzle: 'drizzle-orm/better-sqlite3', pkg: 'better-sqlite3' },
  'libsql (native)': { drizzle: 'drizzle-orm/better-sqlite3', pkg: 'libsql' },
  '@libsql/client': { drizzle: 'drizzle-orm/libsql', pkg: '@libsql/client' },
};

const mode = process.argv[2];
if (mode === '--server') await runServer(JSON.parse(process.argv[3]));
else if (mode === '--load') await runLoad();
else await main(process.argv.includes('--quick'));

// ---------------------------------------------------------------------------------------------- shared

async function userTable() {
  const { sqliteTable, text, integer } = await import('drizzle-orm/sqlite-core');
  return sqliteTable('user', {
    id: text('id').primaryKey(),
    username: text('username').notNull().unique(),
    email: text('email'),
    passwordHash: text('password_hash').notNull(),
    isActive: integer('is_active', { mode: 'boolean' }).notNull(),
    createdAt: integer('created_at').notNull(),
  });
}

/** Opens `path` with `driver`, sets the kernel's pragmas and returns a drizzle db plus the raw prepared query. */
async function openDriver(driver, path) {
  const { eq, sql } = await import('drizzle-orm');
  const user = await userTable();
  const pragmas = [
    'PRAGMA journal_mode = WAL',
    `PRAGMA synchronous = ${SYNCHRONOUS}`,
    'PRAGMA busy_timeout = 5000',
    'PRAGMA foreign_keys = ON',
  ];
  const rawSql = 'SELECT id, username, email, password_hash, is_active, created_at FROM user WHERE id = ?';
  if (DRIVERS[driver].pkg === '@libsql/client') {
    const { createClient } = await import('@libsql/client');
    const { drizzle } = await import('drizzle-orm/libsql');
    const client = createClient({ url: pathToFileURL(path).href });
    // The client pools connections; per-connection pragmas reach the one connection that plain (non-transaction)
    // calls borrow and give back synchronously. A transaction opens a second connection without them.
    for (const p of pragmas) await client.execute(p);
    const db = drizzle({ client });
    const byId = db
      .select()
      .from(user)
      .where(eq(user.id, sql.placeholder('id')))
      .prepare();
    return {
      db,
      pragmas: await readPragmas((q) => client.execute(q).then((r) => Object.values(r.rows[0])[0])),
      findById: (id) => byId.get({ id }), // a Promise: drizzle-orm/libsql re-sends the SQL on every call
      rawFindById: (id) => client.execute({ sql: rawSql, args: [id] }).then((r) => r.rows[0]),
      async: true,
      close: () => client.close(),
    };
  }
  const Database = require(DRIVERS[driver].pkg);
  const client = new Database(path);
  for (const p of pragmas) client.exec(p);
  const { drizzle } = await import('drizzle-orm/better-sqlite3');
  const db = drizzle({ client }); // libsql's Database speaks the better-sqlite3 API, so drizzle takes it as client
  const byId = db
    .select()
    .from(user)
    .where(eq(user.id, sql.placeholder('id')))
    .prepare();
  const raw = client.prepare(rawSql);
  return {
    db,
    pragmas: await readPragmas(async (q) => Object.values(client.prepare(q).get())[0]),
    findById: (id) => byId.get({ id }),
    rawFindById: (id) => raw.get(id),
    async: false,
    close: () => client.close(),
  };
}

async function readPragmas(get) {
  const out = {};
  for (const name of ['journal_mode', 'synchronous', 'busy_timeout', 'foreign_keys']) {
    out[name] = String(await get(`PRAGMA ${name}`));
  }
  return out;
}

// ---------------------------------------------------------------------------------------------- server child

async function runServer({ driver, path, secret }) {
  const express = (await import('express')).default;
  const jwt = (await import('jsonwebtoken')).default;
  const d = await openDriver(driver, path);
  // docs/performance.md "JWT key": the KeyObject is built once; a string would be turned into a key on every verify
  const key = secret === 'keyobject' ? createSecretKey(Buffer.from(SECRET)) : SECRET;
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  app.get('/api/users/me', async (req, res) => {
    const header = req.headers.authorization ?? '';
    let claims;
    try {
      claims = jwt.verify(header.slice(7), key, { algorithms: ['HS256'] });
    } catch {
      return res.status(401).json({ detail: [{ code: 'auth.invalid_token' }] });
    }
    const row = await d.findById(claims.sub);
    if (!row) return res.status(401).json({ detail: [{ code: 'user.not_found' }] });
    res.json({ id: row.id, username: row.username, email: row.email, is_active: row.isActive });
  });
  const server = app.listen(0, '127.0.0.1', () => {
    process.send({ port: server.address().port, pragmas: d.pragmas });
  });
  process.on('message', (m) => {
    if (m === 'stop') server.close(() => (d.close(), process.exit(0)));
  });
}

// ---------------------------------------------------------------------------------------------- load child

/** Runs autocannon jobs sent by the parent, one at a time, and sends each job's figures back. */
async function runLoad() {
  const autocannon = (await import('autocannon')).default;
  let next = 0;
  process.on('message', async ({ url, tokens, seconds, connections }) => {
    const r = await autocannon({
      url,
      connections,
      duration: seconds,
      // a fresh token (another user) on every request
      requests: [
        {
          method: 'GET',
          setupRequest: (req) => ({
            ...req,
            headers: { authorization: `Bearer ${tokens[next++ % tokens.length]}` },
          }),
        },
      ],
    });
    process.send({
      rps: r.requests.average,
      p50: r.latency.p50,
      p99: r.latency.p99,
      total: r.requests.total,
      non2xx: r.non2xx,
      errors: r.errors + r.timeouts,
    });
  });
}

// ---------------------------------------------------------------------------------------------- main

function median(values) {
  const s = [...values].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

async function seed(path) {
  const Database = require('better-sqlite3');
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.exec(`CREATE TABLE user (
    id TEXT PRIMARY KEY NOT NULL,
    username TEXT NOT NULL UNIQUE,
    email TEXT,
    password_hash TEXT NOT NULL,
    is_active INTEGER NOT NULL,
    created_at INTEGER NOT NULL
  )`);
  const insert = db.prepare('INSERT INTO user VALUES (?, ?, ?, ?, ?, ?)');
  const ids = [];
  db.transaction(() => {
    for (let i = 0; i < ROWS; i++) {
      const id = randomUUID();
      ids.push(id);
      insert.run(
        id,
        `user${i}`,
        `user${i}@example.test`,
        `$argon2id$v=19$m=19456,t=2,p=1$${id}`,
        1,
        Date.now(),
      );
    }
  })();
  db.close();
  return ids;
}

function startServer(driver, path, secret) {
  const child = fork(SELF, ['--server', JSON.stringify({ driver, path, secret })], { stdio: 'inherit' });
  return new Promise((resolve, reject) => {
    child.once('message', (m) => resolve({ child, ...m }));
    child.once('exit', (code) => reject(new Error(`${driver} server exited with ${code}`)));
  });
}

function stopServer(child) {
  return new Promise((resolve) => {
    child.removeAllListeners('exit');
    child.once('exit', resolve);
    child.send('stop');
  });
}

/**
 * Measures every target over HTTP. Rounds are interleaved (round 1 of each target, then round 2…) so a burst of
 * other work on the machine falls on all candidates alike rather than on one.
 */
async function measureHttp(targets, tokens, plan) {
  const loader = fork(SELF, ['--load'], { stdio: 'inherit' });
  const job = (port, seconds) =>
    new Promise((resolve, reject) => {
      loader.once('message', resolve);
      loader.once('exit', (code) => reject(new Error(`autocannon exited with ${code}`)));
      loader.send({
        url: `http://127.0.0.1:${port}/api/users/me`,
        tokens,
        seconds,
        connections: plan.connections,
      });
    }).finally(() => loader.removeAllListeners('exit'));
  const servers = [];
  try {
    for (const t of targets) servers.push(await startServer(t.driver, t.path, t.secret));
    for (const s of servers) await job(s.port, plan.warmup);
    const rounds = servers.map(() => []);
    for (let round = 0; round < plan.rounds; round++) {
      for (const [i, s] of servers.entries()) rounds[i].push(await job(s.port, plan.duration));
    }
    return targets.map((t, i) => {
      const bad = rounds[i].reduce((n, r) => n + r.non2xx + r.errors, 0);
      if (bad) throw new Error(`${t.driver}: ${bad} failed requests`);
      return {
        rps: median(rounds[i].map((r) => r.rps)),
        p50: median(rounds[i].map((r) => r.p50)),
        p99: median(rounds[i].map((r) => r.p99)),
        rounds: rounds[i],
        pragmas: servers[i].pragmas,
      };
    });
  } finally {
    loader.kill();
    for (const s of servers) await stopServer(s.child);
  }
}

/** Calls `fn` with rotating ids for `ms` milliseconds; returns calls per second. */
async function loop(fn, ids, ms, isAsync) {
  for (let i = 0; i < 2000; i++) await fn(ids[i % ids.length]); // warm-up (await on a row is a no-op)
  let n = 0;
  const start = process.hrtime.bigint();
  const end = start + BigInt(ms) * 1_000_000n;
  let now = start;
  while (now < end) {
    for (let i = 0; i < 256; i++, n++) {
      const row = isAsync ? await fn(ids[n % ids.length]) : fn(ids[n % ids.length]);
      if (!row) throw new Error('row not found');
    }
    now = process.hrtime.bigint();
  }
  return (n * 1e9) / Number(now - start);
}

async function main(quick) {
  const plan = quick
    ? { warmup: 1, rounds: 1, duration: 3, connections: 10 }
    : { warmup: 2, rounds: 3, duration: 5, connections: 10 };
  const loopMs = quick ? 300 : 1000;
  const jwt = require('jsonwebtoken');
  const dir = mkdtempSync(join(tmpdir(), 'svc-db-drivers-'));
  const started = Date.now();
  const report = {
    date: new Date().toISOString(),
    node: process.version,
    cpus: cpus().length,
    cpu: cpus()[0]?.model,
    mode: quick ? 'quick' : 'full',
    plan,
    synchronous: SYNCHRONOUS,
    versions: {},
    drivers: {},
  };
  for (const pkg of [
    'better-sqlite3',
    'libsql',
    '@libsql/client',
    'drizzle-orm',
    'express',
    'jsonwebtoken',
    'autocannon',
  ]) {
    report.versions[pkg] = JSON.parse(
      readFileSync(join(HERE, '..', 'node_modules', pkg, 'package.json'), 'utf8'),
    ).version;
  }
  try {
    const key = createSecretKey(Buffer.from(SECRET));
    // one seeded file, copied for every candidate so they all answer the same tokens
    const files = {};
    const names = Object.keys(DRIVERS);
    for (const driver of names) files[driver] = join(dir, `${driver.replace(/\W+/g, '-')}.db`);
    const ids = await seed(files[names[0]]);
    {
      const Database = require('better-sqlite3');
      const first = new Database(files[names[0]]);
      for (const driver of names.slice(1)) first.exec(`VACUUM INTO '${files[driver]}'`);
      first.close();
      for (const driver of names.slice(1)) {
        const db = new Database(files[driver]);
        db.pragma('journal_mode = WAL'); // VACUUM INTO writes a rollback-journal file
        db.close();
      }
    }
    const shuffled = [...ids].sort(() => Math.random() - 0.5);
    const tokens = shuffled
      .slice(0, TOKENS)
      .map((sub) => jwt.sign({ sub }, key, { algorithm: 'HS256', expiresIn: '1h' }));

    // jsonwebtoken alone: KeyObject vs string secret
    report.jwt = {
      keyObjectVerifiesPerSec: await loop(
        (t) => jwt.verify(t, key, { algorithms: ['HS256'] }),
        tokens,
        loopMs,
        false,
      ),
      stringVerifiesPerSec: await loop(
        (t) => jwt.verify(t, SECRET, { algorithms: ['HS256'] }),
        tokens,
        loopMs,
        false,
      ),
    };

    for (const driver of names) {
      const d = await openDriver(driver, files[driver]);
      report.drivers[driver] = {
        drizzle: DRIVERS[driver].drizzle,
        drizzlePreparedPerSec: await loop(d.findById, shuffled, loopMs, d.async),
        rawPerSec: await loop(d.rawFindById, shuffled, loopMs, d.async),
      };
      await d.close();
    }
    const chosen = 'better-sqlite3';
    report.loadAverageBefore = loadavg()[0];
    const targets = [
      ...names.map((driver) => ({ driver, path: files[driver], secret: 'keyobject' })),
      { driver: chosen, path: files[chosen], secret: 'string' },
    ];
    const http = await measureHttp(targets, tokens, plan);
    for (const [i, driver] of names.entries()) report.drivers[driver].http = http[i];
    report.stringSecret = { driver: chosen, http: http[names.length] };
    report.loadAverageAfter = loadavg()[0];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  report.seconds = Math.round((Date.now() - started) / 100) / 10;

  const fmt = (n) => Math.round(n).toLocaleString('en-US');
  const ms = (n) => `${n.toFixed(2)} ms`;
  const rows = [
    ['driver (through drizzle)', 'req/s', 'p50', 'p99', 'drizzle prepared q/s', 'driver alone q/s'],
    ...Object.entries(report.drivers).map(([name, r]) => [
      name,
      fmt(r.http.rps),
      ms(r.http.p50),
      ms(r.http.p99),
      fmt(r.drizzlePreparedPerSec),
      fmt(r.rawPerSec),
    ]),
    [
      `${report.stringSecret.driver}, string secret`,
      fmt(report.stringSecret.http.rps),
      ms(report.stringSecret.http.p50),
      ms(report.stringSecret.http.p99),
      '',
      '',
    ],
  ];
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  const line = (r) => `| ${r.map((c, i) => (i ? c.padStart(widths[i]) : c.padEnd(widths[i]))).join(' | ')} |`;
  console.log(
    `${report.date}  node ${report.node}  ${report.cpus} cores  ${report.mode} (${plan.rounds}x${plan.duration}s, ${plan.connections} connections, median)  load average ${report.loadAverageBefore.toFixed(2)} before, ${report.loadAverageAfter.toFixed(2)} after`,
  );
  console.log(line(rows[0]));
  console.log(`|${widths.map((w, i) => (i ? '-'.repeat(w + 1) + ':' : '-'.repeat(w + 2))).join('|')}|`);
  for (const r of rows.slice(1)) console.log(line(r));
  console.log(
    `jsonwebtoken HS256 verify: ${fmt(report.jwt.keyObjectVerifiesPerSec)}/s with a KeyObject, ` +
      `${fmt(report.jwt.stringVerifiesPerSec)}/s with a string secret`,
  );
  const p = Object.values(report.drivers)[0].http.pragmas;
  console.log(
    `pragmas: journal_mode=${p.journal_mode} synchronous=${p.synchronous} (1 = NORMAL) busy_timeout=${p.busy_timeout} ` +
      `foreign_keys=${p.foreign_keys}; ${report.seconds} s`,
  );
  writeFileSync(join(HERE, 'db-drivers.json'), `${JSON.stringify(report, null, 2)}\n`);
}
