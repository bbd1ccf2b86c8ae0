#!/usr/bin/env node
// docs/performance.md "PostgreSQL round trips": the statements each request sends to PostgreSQL, counted
// from the server's own log. A fresh database of SVC_TEST_POSTGRES_URL gets `log_statement = 'all'` (that
// database only), a project like the bench's serves it, and each scenario runs a few times, one request at a
// time; the log lines of that database between two requests are that request's statements. Needs the
// PostgreSQL server's log file on this machine (root, or the postgres user), default
// /var/log/postgresql/postgresql-<version>-main.log; PG_LOG=<file> names another.
//
//   SVC_TEST_POSTGRES_URL=postgres://postgres@127.0.0.1:5432/postgres node bench/lib/statements.mjs [--show]
//
// --show prints each statement of the last request of each scenario.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import pg from './pg.mjs';
import { ADMIN, READER, ROOT, call, createProject, login, seedReader, startServe } from './project.mjs';
import { sleep } from './stats.mjs';

const postgres = createRequire(join(ROOT, 'packages', 'core', 'package.json'))('postgres');
const adminUrl = process.env.SVC_TEST_POSTGRES_URL;
if (!adminUrl) throw new Error('SVC_TEST_POSTGRES_URL is not set');
const show = process.argv.includes('--show');
const logFile =
  process.env.PG_LOG ??
  join(
    '/var/log/postgresql',
    readdirSync('/var/log/postgresql').find((f) => /^postgresql-[\d.]+-main\.log$/.test(f)),
  );

const database = await pg.create(adminUrl);
const dbName = new URL(database.url).pathname.slice(1);
{
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe(`ALTER DATABASE ${dbName} SET log_statement = 'all'`);
  await admin.end();
}

/** The statements logged for this database since byte `from` of the log (one entry per statement). */
function statementsSince(from) {
  const size = statSync(logFile).size;
  const text = readFileSync(logFile).subarray(from, size).toString('utf8');
  const entries = [];
  for (const line of text.split('\n')) {
    const m = /@(\S+) LOG: {2}(statement|execute [^:]*): (.*)$/.exec(line);
    if (m && m[1] === dbName) entries.push(`${m[2].startsWith('execute') ? m[2] + ': ' : ''}${m[3]}`);
  }
  return entries;
}

const project = await createProject({ databaseUrl: database.url });
const server = await startServe(project.dir, { activity_log_enabled: true });
try {
  await seedReader(server.base);
  const reader = await login(server.base, READER);
  let refresh = reader.refresh_token;
  const scenarios = {
    'POST /api/auth/token (login)': () => login(server.base, READER),
    'POST /api/auth/token (wrong password)': () =>
      call(server.base, 'POST', '/api/auth/token', {
        form: { username: READER.username, password: 'wrong-password-1' },
      }).catch(() => {}),
    'POST /api/auth/refresh-token': async () => {
      const r = await call(server.base, 'POST', '/api/auth/refresh-token', {
        json: { refresh_token: refresh },
      });
      refresh = r.body.refresh_token;
    },
    'GET /api/auth/user': () => call(server.base, 'GET', '/api/auth/user', { token: reader.access_token }),
    'GET /api/notes/ (notes.read)': () =>
      call(server.base, 'GET', '/api/notes/', { token: reader.access_token }),
    'POST /api/auth/password/forgot (unknown address)': () =>
      call(server.base, 'POST', '/api/auth/password/forgot', { json: { email: 'nobody@example.com' } }),
  };
  // The activity log writes behind the answer: its INSERTs land in the next request's window unless the
  // window waits for them (a batch every 250 ms or so); a pause before each count takes them in.
  const settle = () => sleep(600);
  console.log(`| request | statements | of which BEGIN/COMMIT |`);
  console.log(`| --- | ---: | ---: |`);
  for (const [name, run] of Object.entries(scenarios)) {
    const counts = [];
    let last = [];
    for (let i = 0; i < 4; i += 1) {
      await settle();
      const from = statSync(logFile).size;
      await run();
      await settle();
      last = statementsSince(from);
      if (i > 0) counts.push(last); // the first request prepares its statements
    }
    const n = counts.map((c) => c.length);
    const tx = counts.map((c) => c.filter((s) => /^(BEGIN|COMMIT|ROLLBACK)/i.test(s)).length);
    console.log(`| ${name} | ${[...new Set(n)].join(', ')} | ${[...new Set(tx)].join(', ')} |`);
    if (show) for (const s of last) console.log(`    ${s.slice(0, 200)}`);
  }
  void ADMIN;
} finally {
  await server.stop();
  project.remove();
  await database.drop();
}
