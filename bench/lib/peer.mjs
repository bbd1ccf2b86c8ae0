#!/usr/bin/env node
// docs/performance.md "Beside Better Auth": the peer svc is compared with, in its own process (forked by
// bench/run.mjs), set up as its documentation shows: `betterAuth({ database: new Database(file) })` on
// better-sqlite3 (the file database driver svc uses), email and password enabled, the handler mounted on
// Express 5 with `app.all('/api/auth/*splat', toNodeHandler(auth))` and its tables created by its own
// `getMigrations`. Rate limiting is off (svc's `auth_rate_limit` is off by default too) and so is telemetry
// (no network here). The file gets the pragmas svc's file database has (WAL, synchronous NORMAL), so both
// store with the same durability.
//
//   node bench/lib/peer.mjs <json {dir, users: [{email, password, name}]}>
//
// Sends {port} once listening and its users exist; stops on the message 'stop'.
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { betterAuth } from 'better-auth';
import { getMigrations } from 'better-auth/db/migration';
import { toNodeHandler } from 'better-auth/node';
import Database from 'better-sqlite3';
import express from 'express';

const { dir, users } = JSON.parse(process.argv[2]);
const database = new Database(join(dir, 'better-auth.sqlite'));
database.pragma('journal_mode = WAL');
database.pragma('synchronous = NORMAL');

const app = express();
app.disable('x-powered-by');
let handler;
app.all('/api/auth/*splat', (req, res) => handler(req, res));
const server = app.listen(0, '127.0.0.1', async () => {
  try {
    const baseURL = `http://127.0.0.1:${server.address().port}`;
    const auth = betterAuth({
      baseURL,
      secret: randomBytes(32).toString('base64url'),
      database,
      emailAndPassword: { enabled: true },
      rateLimit: { enabled: false },
      telemetry: { enabled: false },
    });
    const { runMigrations } = await getMigrations(auth.options);
    await runMigrations();
    for (const body of users) await auth.api.signUpEmail({ body });
    handler = toNodeHandler(auth);
    process.send({ port: server.address().port, base: baseURL });
  } catch (error) {
    process.send({ error: String(error?.stack ?? error) });
  }
});
process.on('message', (m) => {
  if (m === 'stop') server.close(() => (database.close(), process.exit(0)));
});
