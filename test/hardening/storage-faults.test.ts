// A file database whose files stop being writable while the service runs (a full or failing disk, a file
// system remounted read-only, an operator's mistake). The fault used here works under root, which ignores
// permission bits: the ext4 immutable attribute (`chattr +i`), which refuses every write, root's included, to a
// file that is already open.
//
// SQLite in WAL mode writes new pages to `<db>-wal` and keeps its index in `<db>-shm`, a file every connection
// maps into memory. A write the file refuses is a "disk I/O error"; SPEC "Errors" gives an unusable database
// 503 db.unavailable, and SPEC "Health and version" makes the readiness probe say so. A store into the mapping
// the kernel refuses is SIGBUS, which kills the process before any JavaScript can run: the server must see the
// fault before SQLite touches the mapping, and answer 503 instead.
import { createSqliteDatabase, startTestApp, type TestApp } from '@svc/core/testing';
import { createLogger, openDatabase, SettingsSchema } from '@svc/core/internal';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CLI_DIR, fetchClosing, serveProject, spawnCli } from '../../testing/cli-process.js';
import { eventually, freePort } from './helpers.js';

const TEST_MS = 120_000;
const UNAVAILABLE = {
  detail: [{ loc: [], msg: expect.any(String), type: 'server_error', code: 'db.unavailable' }],
};

/** `chattr +i` / `-i`; the reason when it fails (not root, or a file system without the attribute). */
function immutable(paths: string[], on: boolean): string {
  const run = spawnSync('chattr', [on ? '+i' : '-i', ...paths], { encoding: 'utf8' });
  if (run.error) return String(run.error);
  return run.status === 0 ? '' : run.stderr.trim() || `chattr exited with ${run.status}`;
}

/** Whether `chattr +i` works in `dir` (a probe file, made immutable and back). */
function immutableUnavailable(dir: string): string {
  const probe = join(dir, 'chattr-probe');
  writeFileSync(probe, '');
  const reason = immutable([probe], true);
  immutable([probe], false);
  rmSync(probe, { force: true });
  return reason;
}

describe('a file database whose -wal file cannot be written [sqlite]', () => {
  let created: ReturnType<typeof createSqliteDatabase>;
  let app: TestApp;
  let token = '';
  let unavailable = '';
  let wal = '';

  beforeAll(async () => {
    created = createSqliteDatabase();
    unavailable = immutableUnavailable(created.dir);
    app = await startTestApp({ database: { dialect: 'sqlite', label: 'sqlite', url: created.url } });
    token = (await app.loginAs(await app.createUser({ username: 'alice' }))).accessToken;
    wal = `${created.url.replace(/^file:/, '')}-wal`;
  });

  afterAll(async () => {
    if (wal && existsSync(wal)) immutable([wal], false); // else the directory cannot be removed
    await app?.close();
    await created?.drop();
  });

  it(
    'answers writes 503 db.unavailable, keeps reads, reports not ready, and recovers once it is writable',
    async () => {
      expect(unavailable).toBe('');
      const alice = app.as(token);
      expect((await alice.patch('/api/auth/user', { firstName: 'Before' })).status).toBe(200);
      expect(existsSync(wal)).toBe(true);

      expect(immutable([wal], true)).toBe('');
      try {
        const write = await alice.patch('/api/auth/user', { firstName: 'Refused' });
        expect({ status: write.status, body: write.body }).toEqual({ status: 503, body: UNAVAILABLE });
        // A login writes its refresh token: the same answer.
        const login = await app.post('/api/auth/token', undefined, {
          form: { username: 'alice', password: 'correct-horse-battery' },
        });
        expect({ status: login.status, body: login.body }).toEqual({ status: 503, body: UNAVAILABLE });
        // Reads need no write: they go on.
        const me = await alice.get('/api/auth/user');
        expect(me.status).toBe(200);
        expect(me.body.data.firstName).toBe('Before');
        const ready = await app.get('/api/health/ready');
        expect(ready.status).toBe(503);
        expect(ready.body.detail[0]).toMatchObject({ code: 'health.not_ready', loc: [] });
        expect((await app.get('/api/health/live')).body).toEqual({ status: 'ok' });
      } finally {
        immutable([wal], false);
      }

      const after = await alice.patch('/api/auth/user', { firstName: 'After' });
      expect(after.status).toBe(200);
      expect(after.body.data.firstName).toBe('After');
      await eventually(async () => ((await app.get('/api/health/ready')).status === 200 ? true : undefined));
    },
    TEST_MS,
  );
});

// The read worker of a file database (long reads: admin lists, the activity log) has its own connection, which
// maps -shm as well; it must be refused like the server's own while the files refuse writes, and a connection
// must not be opened (the database opened again) on files that refuse writes.
describe('a file database whose -shm and -wal files cannot be written: long reads and new connections [sqlite]', () => {
  let created: ReturnType<typeof createSqliteDatabase>;
  let app: TestApp;
  let admin: ReturnType<TestApp['as']>;
  let unavailable = '';
  let path = '';

  beforeAll(async () => {
    created = createSqliteDatabase();
    unavailable = immutableUnavailable(created.dir);
    app = await startTestApp({ database: { dialect: 'sqlite', label: 'sqlite', url: created.url } });
    admin = app.as(
      (await app.loginAs(await app.createUser({ username: 'root', isSuperuser: true }))).accessToken,
    );
    path = created.url.replace(/^file:/, '');
  });

  afterAll(async () => {
    if (path) immutable([`${path}-wal`, `${path}-shm`].filter(existsSync), false);
    await app?.close();
    await created?.drop();
  });

  it(
    'answers long reads 503 db.unavailable, refuses to open the database again, and recovers',
    async () => {
      expect(unavailable).toBe('');
      // The read worker is open and has the wal-index mapped.
      expect((await admin.get('/api/admin/user/')).status).toBe(200);
      expect(existsSync(`${path}-shm`) && existsSync(`${path}-wal`)).toBe(true);

      expect(immutable([`${path}-wal`, `${path}-shm`], true)).toBe('');
      try {
        await eventually(async () =>
          (await app.get('/api/health/ready')).status === 503 ? true : undefined,
        );
        const list = await admin.get('/api/admin/user/');
        expect({ status: list.status, body: list.body }).toEqual({ status: 503, body: UNAVAILABLE });
        // Opening the database again (the next start, a `svc` command) refuses at once, naming the file.
        const settings = SettingsSchema.parse({});
        const log = createLogger({ level: 'CRITICAL', format: 'text' });
        for (const server of [true, false]) {
          expect(() => openDatabase({ url: created.url, settings, log, server })).toThrow(
            new RegExp(`${path}-shm refuses writes \\(EPERM\\)`),
          );
        }
      } finally {
        immutable([`${path}-wal`, `${path}-shm`], false);
      }

      await eventually(async () => ((await app.get('/api/health/ready')).status === 200 ? true : undefined));
      expect((await admin.get('/api/admin/user/')).status).toBe(200);
    },
    TEST_MS,
  );
});

// The process under test may die (before the fix it does: SIGBUS), so it is a real `svc serve`, not this one.
describe('a file database whose -shm and -wal files cannot be written, svc serve [sqlite]', () => {
  const dir = join(CLI_DIR, '.tmp-test', `storage-${randomBytes(6).toString('hex')}`);
  const db = join(dir, 'auth.db');
  let child: ReturnType<typeof spawnCli> | undefined;

  afterAll(() => {
    immutable([`${db}-wal`, `${db}-shm`].filter(existsSync), false);
    if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  it(
    'stays up: logs the fault and answers 503 db.unavailable and health.not_ready instead of dying of SIGBUS',
    async () => {
      mkdirSync(dir, { recursive: true });
      expect(immutableUnavailable(dir)).toBe('');
      const { port, exit, stderr } = await serveProject(dir, {
        main: `import { createApp } from '@svc/core';\nexport const app = createApp();\n`,
        env: [
          `SVC_AUTH_DATABASE_URL=file:${db}`,
          'SVC_AUTO_CREATE_AUTH_SCHEMA=true',
          'SVC_REGISTRATION_ENABLED=true',
        ],
        started: (serve) => (child = serve),
      });

      const base = `http://127.0.0.1:${port}`;
      const call = async (method: string, path: string, body?: unknown, token?: string) => {
        const headers: Record<string, string> = {};
        if (body !== undefined) headers['Content-Type'] = 'application/json';
        if (token) headers.Authorization = `Bearer ${token}`;
        const res = await fetch(`${base}${path}`, {
          method,
          headers,
          body: body === undefined ? undefined : JSON.stringify(body),
          signal: AbortSignal.timeout(10_000),
        }).catch((error: Error) => {
          throw new Error(`${method} ${path}: ${error.message} (${exit() || 'still running'})`);
        });
        const text = await res.text();
        return { status: res.status, body: text ? JSON.parse(text) : undefined };
      };
      const password = 'correct-horse-battery';
      expect((await call('POST', '/api/auth/register', { username: 'alice', password })).status).toBe(201);
      const login = await fetch(`${base}/api/auth/token`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ username: 'alice', password }).toString(),
      });
      const token = ((await login.json()) as { access_token: string }).access_token;
      expect((await call('GET', '/api/auth/user', undefined, token)).status).toBe(200);
      expect(existsSync(`${db}-shm`) && existsSync(`${db}-wal`)).toBe(true);

      expect(immutable([`${db}-wal`, `${db}-shm`], true)).toBe('');
      const changed = performance.now();
      try {
        // The probe needs no file access, so it is safe to ask before anything else touches the database.
        await eventually(
          async () => ((await call('GET', '/api/health/ready')).status === 503 ? true : undefined),
          10_000,
        );
        const ready = await call('GET', '/api/health/ready');
        expect(ready.body.detail[0]).toMatchObject({ code: 'health.not_ready' });
        expect(await call('GET', '/api/auth/user', undefined, token)).toEqual({
          status: 503,
          body: UNAVAILABLE,
        });
        expect(await call('PATCH', '/api/auth/user', { firstName: 'Refused' }, token)).toEqual({
          status: 503,
          body: UNAVAILABLE,
        });
        expect(await call('GET', '/api/health/live')).toEqual({ status: 200, body: { status: 'ok' } });
        expect(exit()).toBe('');
        // The operator learns why from the log, with the file named. The child's log is written through a
        // buffer (docs/performance.md), so the line may reach the pipe after the 503s above.
        await eventually(async () => (/ERROR.*auth\.db-shm/.test(stderr()) ? true : undefined), 10_000);
        expect(stderr()).toMatch(/ERROR.*auth\.db-shm/);
        const line = stderr()
          .split('\n')
          .find((l) => l.includes('auth.db-shm'));
        process.stderr.write(
          `-shm refused: not ready after ${Math.round(performance.now() - changed)} ms; ${line}\n`,
        );
      } finally {
        immutable([`${db}-wal`, `${db}-shm`], false);
      }

      await eventually(async () =>
        (await call('GET', '/api/health/ready')).status === 200 ? true : undefined,
      );
      const after = await call('PATCH', '/api/auth/user', { firstName: 'After' }, token);
      expect(after.status).toBe(200);
      expect(after.body.data.firstName).toBe('After');
      expect(exit()).toBe('');
    },
    TEST_MS,
  );
});

// A server killed while it ran leaves both files behind; when they cannot be written before the database is
// opened again (the next start, any `svc` command), SQLite's first store into the mapped -shm would be SIGBUS:
// the open must check first and refuse with an error that names the file.
describe('a file database whose -shm and -wal files cannot be written when svc starts [sqlite]', () => {
  const dir = join(CLI_DIR, '.tmp-test', `storage-start-${randomBytes(6).toString('hex')}`);
  const db = join(dir, 'auth.db');
  let child: ReturnType<typeof spawnCli> | undefined;

  afterAll(() => {
    immutable([`${db}-wal`, `${db}-shm`].filter(existsSync), false);
    if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  /** `svc serve` in `dir`; resolves with its stderr once it listens or has exited. */
  async function serve(port: number) {
    const started = spawnCli(['serve', '--base-dir', dir, '--port', String(port)], { cwd: dir });
    child = started;
    started.stdin.end();
    started.stdout.resume();
    const run = { stderr: '', exit: undefined as { code: number | null; signal: string | null } | undefined };
    started.stderr.on('data', (chunk: Buffer) => (run.stderr += chunk.toString()));
    started.once('exit', (code, signal) => (run.exit = { code, signal }));
    await eventually(async () => (run.exit || /listening/.test(run.stderr) ? true : undefined), 90_000);
    return { child: started, run };
  }

  it(
    'refuses to start with an error naming the file instead of dying of SIGBUS',
    async () => {
      mkdirSync(dir, { recursive: true });
      expect(immutableUnavailable(dir)).toBe('');
      writeFileSync(
        join(dir, 'main.mjs'),
        `import { createApp } from '@svc/core';\nexport const app = createApp();\n`,
      );
      writeFileSync(
        join(dir, '.env'),
        [
          `SVC_SECRET_KEY=${randomBytes(24).toString('hex')}`,
          `SVC_AUTH_DATABASE_URL=file:${db}`,
          'SVC_AUTO_CREATE_AUTH_SCHEMA=true',
          'SVC_REGISTRATION_ENABLED=true',
          '',
        ].join('\n'),
      );
      const port = await freePort();
      const first = await serve(port);
      expect(first.run.exit).toBeUndefined();
      const registered = await fetch(`http://127.0.0.1:${port}/api/auth/register`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ username: 'alice', password: 'correct-horse-battery' }),
      });
      expect(registered.status).toBe(201);
      // Killed: no checkpoint, so -wal and -shm stay behind.
      first.child.kill('SIGKILL');
      await eventually(async () => (first.run.exit ? true : undefined), 10_000);
      expect(existsSync(`${db}-shm`) && existsSync(`${db}-wal`)).toBe(true);

      expect(immutable([`${db}-wal`, `${db}-shm`], true)).toBe('');
      try {
        const second = await serve(port);
        await eventually(async () => (second.run.exit ? true : undefined), 30_000);
        process.stderr.write(`start with -shm and -wal refused: ${JSON.stringify(second.run)}\n`);
        expect(second.run.exit).toEqual({ code: 1, signal: null });
        expect(second.run.stderr).toMatch(/auth\.db-shm/);
        expect(second.run.stderr).toMatch(/not writable|refuses writes/);
      } finally {
        immutable([`${db}-wal`, `${db}-shm`], false);
      }

      // Writable again: the server starts, with the user registered before.
      const third = await serve(port);
      expect(third.run.exit).toBeUndefined();
      // fetchClosing: the SIGTERM below then has no idle keep-alive connection to wait for.
      const login = await fetchClosing(`http://127.0.0.1:${port}/api/auth/token`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ username: 'alice', password: 'correct-horse-battery' }).toString(),
      });
      expect(login.status).toBe(200);
      third.child.kill('SIGTERM');
      await eventually(async () => (third.run.exit ? true : undefined), 10_000);
    },
    TEST_MS,
  );
});
