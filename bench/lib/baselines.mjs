#!/usr/bin/env node
// docs/performance.md "Benchmark suite": the same-run baselines, each in its own child process (forked by bench/run.mjs).
//
//   --express-bare              an Express 5 route answering a small JSON object
//   --express-auth <json>       an Express 5 route: jsonwebtoken HS256 verify (KeyObject built once, as
//                               packages/core/src/auth/tokens.ts does) + one primary-key SELECT of the user row
//                               through the same driver and drizzle, statement prepared once (as the auth store)
//   --argon2 <json>             bare Argon2id verify at the SPEC parameters, `concurrency` verifies in flight
//
// The servers send {port} once listening and stop on the message 'stop'.
import { createSecretKey } from 'node:crypto';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { ROOT } from './project.mjs';

const requireCore = createRequire(join(ROOT, 'packages', 'core', 'package.json'));
const mode = process.argv[2];
const arg = process.argv[3] ? JSON.parse(process.argv[3]) : {};

async function listen(app, onStop = () => {}) {
  const server = app.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }));
  process.on('message', (m) => {
    if (m === 'stop') server.close(async () => (await onStop(), process.exit(0)));
  });
}

function expressApp() {
  const express = requireCore('express');
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  return app;
}

/** drizzle over the project's auth database, through the driver the kernel uses for its URL. */
async function openUserById({ databaseUrl, table }) {
  const { eq, sql } = requireCore('drizzle-orm');
  if (/^postgres(ql)?:\/\//.test(databaseUrl)) {
    const postgres = requireCore('postgres');
    const { drizzle } = requireCore('drizzle-orm/postgres-js');
    const pgCore = requireCore('drizzle-orm/pg-core');
    const client = postgres(databaseUrl, { max: 10, onnotice: () => {} });
    const cols =
      await client`SELECT column_name FROM information_schema.columns WHERE table_name = ${table} ORDER BY ordinal_position`;
    const t = pgCore.pgTable(
      table,
      Object.fromEntries(cols.map((c) => [c.column_name, pgCore.text(c.column_name)])),
    );
    const q = drizzle({ client })
      .select()
      .from(t)
      .where(eq(t.id, sql.placeholder('id')))
      .prepare('bench_user_by_id');
    return { byId: async (id) => (await q.execute({ id }))[0], close: () => client.end() };
  }
  const Database = requireCore('better-sqlite3');
  const { drizzle } = requireCore('drizzle-orm/better-sqlite3');
  const sq = requireCore('drizzle-orm/sqlite-core');
  const client = new Database(databaseUrl);
  for (const p of ['journal_mode = WAL', 'synchronous = NORMAL', 'busy_timeout = 5000', 'foreign_keys = ON'])
    client.pragma(p);
  const cols = client.prepare(`PRAGMA table_info("${table}")`).all();
  const t = sq.sqliteTable(table, Object.fromEntries(cols.map((c) => [c.name, sq.text(c.name)])));
  const q = drizzle({ client })
    .select()
    .from(t)
    .where(eq(t.id, sql.placeholder('id')))
    .prepare();
  return { byId: async (id) => q.get({ id }), close: () => client.close() };
}

if (mode === '--express-bare') {
  const app = expressApp();
  app.get('/bare', (req, res) => res.json({ ok: true }));
  await listen(app);
} else if (mode === '--express-auth') {
  const jwt = requireCore('jsonwebtoken');
  const key = createSecretKey(Buffer.from(arg.secret));
  const db = await openUserById(arg);
  const app = expressApp();
  app.get('/me', async (req, res) => {
    let claims;
    try {
      claims = jwt.verify((req.headers.authorization ?? '').slice(7), key, { algorithms: ['HS256'] });
    } catch {
      return res.status(401).json({ detail: [{ code: 'auth.token_invalid' }] });
    }
    const row = await db.byId(claims.sub);
    if (!row) return res.status(401).json({ detail: [{ code: 'user.not_found' }] });
    res.json({ id: row.id, username: row.username, email: row.email, is_active: row.is_active });
  });
  await listen(app, () => db.close());
} else if (mode === '--argon2') {
  // SPEC "User": Argon2id, m = 19456 KiB, t = 2, p = 1; the same binding and thread pool as the server.
  const { hash, verify } = requireCore('@node-rs/argon2');
  const options = { algorithm: 2, memoryCost: 19_456, timeCost: 2, parallelism: 1 };
  const stored = await hash('bench-reader-password-1', options);
  process.on('message', async ({ concurrency, seconds }) => {
    let done = 0;
    const latencies = [];
    const end = Date.now() + seconds * 1000;
    const started = process.hrtime.bigint();
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (Date.now() < end) {
          const t0 = process.hrtime.bigint();
          if (!(await verify(stored, 'bench-reader-password-1'))) throw new Error('verify failed');
          latencies.push(Number(process.hrtime.bigint() - t0) / 1e6);
          done++;
        }
      }),
    );
    const elapsed = Number(process.hrtime.bigint() - started) / 1e9;
    latencies.sort((a, b) => a - b);
    const pct = (p) => latencies[Math.min(latencies.length - 1, Math.ceil((p / 100) * latencies.length) - 1)];
    process.send({ rps: done / elapsed, p50: pct(50), p99: pct(99), total: done, non2xx: 0, errors: 0 });
  });
  process.send({ ready: true });
}
