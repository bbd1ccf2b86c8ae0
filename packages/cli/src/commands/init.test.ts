import { randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';

import { createPostgresDatabase, TEST_POSTGRES_URL, reportSkipped } from '@svc/core/testing';
import { createServer } from 'node:net';
import { Writable } from 'node:stream';
import { createLogger, openDatabase, SettingsSchema, verifyPassword } from '@svc/core/internal';
import { sql } from 'drizzle-orm';
import { CLI_DIR, runCli, spawnCli, type CliResult } from '../testing/cli-process.js';

// The real CLI (built when fresh, else the sources through tsx: testing/cli-process.ts).
const TMP_DIR = join(CLI_DIR, '.tmp-test');
const PASSWORD = 'correct-horse-battery';
const CLI_TIMEOUT = 120_000;

function svc(cwd: string, args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  return runCli(args, { cwd, env });
}

/** A project under packages/cli/.tmp-test (inside the repo, so `@svc/core` resolves) with a main.mjs. */
function createProject(): string {
  const dir = join(TMP_DIR, `init-${randomBytes(5).toString('hex')}`);
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, 'main.mjs'),
    "import { createApp } from '@svc/core';\nexport const app = createApp();\n",
  );
  return dir;
}

/** Every file under `dir` with its size and content hash input (the listing compared across runs). */
function listing(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string) => {
    for (const entry of readdirSync(d, { withFileTypes: true })) {
      const path = join(d, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (!entry.name.startsWith('auth.db')) out[relative(dir, path)] = readFileSync(path, 'utf8');
    }
  };
  walk(dir);
  return out;
}

function dotenvOf(dir: string): Record<string, string> {
  return Object.fromEntries(
    readFileSync(join(dir, '.env'), 'utf8')
      .split('\n')
      .filter((l) => /^[A-Z_]+=/.test(l))
      .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
  );
}

/** Rows of a query on a project's database (SQLite file or PostgreSQL). */
async function rowsOf<T>(url: string, dir: string, query: string): Promise<T[]> {
  const log = createLogger({
    level: 'CRITICAL',
    format: 'text',
    stream: new Writable({ write: (_c, _e, cb) => cb() }),
  });
  const db = openDatabase({ url, settings: SettingsSchema.parse({}), log, baseDir: dir });
  try {
    return await db.all<T>(sql.raw(query) as never); // two drizzle-orm installs may differ in type identity
  } finally {
    await db.close();
  }
}

type UserRow = {
  username: string;
  password_hash: string;
  is_superuser: number | boolean;
  email: string | null;
};
const USERS = 'SELECT username, password_hash, is_superuser, email FROM svc_user';

const sqliteUsers = (dir: string) => rowsOf<UserRow>('file:auth.db', dir, USERS);

async function sqliteTables(dir: string): Promise<string[]> {
  const rows = await rowsOf<{ name: string }>(
    'file:auth.db',
    dir,
    `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'`,
  );
  return rows.map((r) => r.name);
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolvePromise) => server.listen(0, '127.0.0.1', resolvePromise));
  const { port } = server.address() as { port: number };
  await new Promise((resolvePromise) => server.close(resolvePromise));
  return port;
}

describe('svc init and svc migrations on a file database', () => {
  let dir: string;
  let first: CliResult;
  beforeAll(async () => {
    dir = createProject();
    first = await svc(dir, [
      'init',
      '--username',
      'admin',
      '--password',
      PASSWORD,
      '--email',
      'admin@example.com',
    ]);
  }, CLI_TIMEOUT);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('creates .env (mode 0600) with a random secret key and the file database URL', () => {
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    expect(statSync(join(dir, '.env')).mode & 0o777).toBe(0o600);
    const env = dotenvOf(dir);
    expect(env.SVC_SECRET_KEY!.length).toBeGreaterThanOrEqual(32);
    expect(env.SVC_AUTH_DATABASE_URL).toBe('file:auth.db');
  });

  it('writes the first revision, upgrades to head and creates the superuser with an Argon2id hash', async () => {
    const files = readdirSync(join(dir, 'migrations', 'auth'));
    expect(files.filter((f) => f.endsWith('.sql'))).toHaveLength(1);
    expect(files.filter((f) => f.endsWith('.snapshot.json'))).toHaveLength(1);
    expect(first.stdout).toMatch(/auth: base -> \S+ \(1 revision applied\)/);
    expect(await sqliteTables(dir)).toEqual(expect.arrayContaining(['svc_user', 'svc_migrations_version']));
    const [admin, ...others] = await sqliteUsers(dir);
    expect(others).toEqual([]);
    expect(admin).toMatchObject({ username: 'admin', is_superuser: 1, email: 'admin@example.com' });
    expect(admin!.password_hash).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
    expect(await verifyPassword(admin!.password_hash, PASSWORD)).toBe(true);
  });

  it(
    'changes nothing when run a second time (.env and every file identical)',
    async () => {
      const before = listing(dir);
      const second = await svc(dir, ['init', '--username', 'admin', '--password', 'another-password-123']);
      expect(second.code).toBe(0);
      expect(second.stdout).toMatch(/\.env: complete/);
      expect(second.stdout).toMatch(/nothing to do/);
      expect(second.stdout).toMatch(/superuser admin exists: left unchanged/);
      expect(listing(dir)).toEqual(before);
      expect(await verifyPassword((await sqliteUsers(dir))[0]!.password_hash, PASSWORD)).toBe(true);
    },
    CLI_TIMEOUT,
  );

  it(
    'reports nothing to do for an autogenerated revision right after, and check passes',
    async () => {
      const before = listing(dir);
      const revision = await svc(dir, ['migrations', 'revision', 'x', '--autogenerate']);
      expect(revision.code).toBe(0);
      expect(revision.stdout).toMatch(/^nothing to do: the schema matches the head revision/);
      expect(listing(dir)).toEqual(before);
      const check = await svc(dir, ['migrations', 'check']);
      expect(check.code).toBe(0);
      expect(check.stdout).toMatch(/the schema matches the head revision/);
    },
    CLI_TIMEOUT,
  );

  it(
    'check exits non-zero when the schema differs from the head revision',
    async () => {
      // A project whose table_prefix changed: every table of the live schema is new to the head snapshot.
      const check = await svc(dir, ['migrations', 'check'], { SVC_TABLE_PREFIX: 'other_' });
      expect(check.code).toBe(1);
      expect(check.stderr).toMatch(/the schema differs from the head revision/);
    },
    CLI_TIMEOUT,
  );

  it(
    'downgrades to base and upgrades to head again (tables gone, then back); current and history follow',
    async () => {
      const down = await svc(dir, ['migrations', 'downgrade', 'base']);
      expect(down.code).toBe(0);
      expect(await sqliteTables(dir)).toEqual(['svc_migrations_version']);
      expect((await svc(dir, ['migrations', 'current'])).stdout).toMatch(/^auth: base \(\d+ behind head/);
      const up = await svc(dir, ['migrations', 'upgrade', 'head']);
      expect(up.code).toBe(0);
      expect(await sqliteTables(dir)).toEqual(
        expect.arrayContaining(['svc_user', 'svc_group', 'svc_migrations_version']),
      );
      expect((await svc(dir, ['migrations', 'current'])).stdout).toMatch(/^auth: \S+ \(head\)/);
      expect((await svc(dir, ['migrations', 'history'])).stdout).toMatch(
        /^base -> \S+ \(head, current\), initial auth schema/,
      );
    },
    CLI_TIMEOUT,
  );

  it(
    'two processes upgrading at once apply the revision once',
    async () => {
      await svc(dir, ['migrations', 'downgrade', 'base']);
      const results = await Promise.all([
        svc(dir, ['migrations', 'upgrade']),
        svc(dir, ['migrations', 'upgrade']),
      ]);
      expect(results.map((r) => r.code)).toEqual([0, 0]);
      const applied = results.filter((r) => /revisions? applied/.test(r.stdout));
      const idle = results.filter((r) => /nothing to do/.test(r.stdout));
      expect([applied.length, idle.length]).toEqual([1, 1]);
    },
    CLI_TIMEOUT,
  );

  it(
    'has no strip-sqlmodel command',
    async () => {
      const result = await svc(dir, ['migrations', 'strip-sqlmodel']);
      expect(result.code).not.toBe(0);
      expect(result.stderr).toMatch(/^svc: /);
    },
    CLI_TIMEOUT,
  );
});

describe('svc init refusals and options', () => {
  const dirs: string[] = [];
  const project = () => {
    const dir = createProject();
    dirs.push(dir);
    return dir;
  };
  afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

  it(
    'refuses when an exported SVC_SECRET_KEY differs from what would go into .env, and writes nothing',
    async () => {
      const dir = project();
      const result = await svc(dir, ['init', '--password', PASSWORD], {
        SVC_SECRET_KEY: 'exported-secret-key-0123456789abcdef0123',
      });
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(
        /^svc: SVC_SECRET_KEY is exported in the environment with a value that differs/,
      );
      expect(readdirSync(dir)).toEqual(['main.mjs']);
    },
    CLI_TIMEOUT,
  );

  it(
    'accepts an exported value equal to the one in .env, and completes .env without overwriting a value',
    async () => {
      const dir = project();
      writeFileSync(join(dir, '.env'), 'SVC_SECRET_KEY=kept-secret-key-0123456789abcdef0123456\nOTHER=1', {
        mode: 0o640,
      });
      const result = await svc(dir, ['init', '--no-user'], {
        SVC_SECRET_KEY: 'kept-secret-key-0123456789abcdef0123456',
      });
      expect(result.code).toBe(0);
      expect(dotenvOf(dir)).toEqual({
        SVC_SECRET_KEY: 'kept-secret-key-0123456789abcdef0123456',
        OTHER: '1',
        SVC_AUTH_DATABASE_URL: 'file:auth.db',
      });
      expect(statSync(join(dir, '.env')).mode & 0o777).toBe(0o640);
    },
    CLI_TIMEOUT,
  );

  it(
    '--no-user sets up everything but creates no user',
    async () => {
      const dir = project();
      const result = await svc(dir, ['init', '--no-user']);
      expect(result.code).toBe(0);
      expect(await sqliteUsers(dir)).toEqual([]);
    },
    CLI_TIMEOUT,
  );

  it(
    'refuses a password below password_min_length, and a missing password when stdin is no terminal',
    async () => {
      const dir = project();
      const short = await svc(dir, ['init', '--password', 'short']);
      expect(short.code).toBe(1);
      expect(short.stderr).toMatch(/at least 12 characters/);
      const missing = await svc(dir, ['init']);
      expect(missing.code).toBe(1);
      expect(missing.stderr).toMatch(/--password is required when stdin is not a terminal/);
      expect(await sqliteUsers(dir)).toEqual([]);
    },
    CLI_TIMEOUT,
  );

  it(
    'migrates a project target of its own in the main database, and refuses an unknown target',
    async () => {
      const dir = project();
      writeFileSync(
        join(dir, 'main.mjs'),
        [
          "import { createApp } from '@svc/core';",
          "import * as sq from 'drizzle-orm/sqlite-core';",
          "const notes = sq.sqliteTable('project_note', { id: sq.integer('id').primaryKey(), text: sq.text('text') });",
          'export const app = createApp({',
          '  migrationTargets: { notes: { tables: () => ({ notes }) } },',
          '});',
          '',
        ].join('\n'),
      );
      expect((await svc(dir, ['init', '--no-user'])).code).toBe(0);
      writeFileSync(
        join(dir, '.env'),
        `${readFileSync(join(dir, '.env'), 'utf8')}SVC_DATABASE_URL=file:main.db\n`,
      );
      const revision = await svc(dir, [
        'migrations',
        'revision',
        'notes',
        '--autogenerate',
        '--target-name',
        'notes',
      ]);
      expect(revision.code).toBe(0);
      expect(readdirSync(join(dir, 'migrations', 'notes')).some((f) => f.endsWith('_notes.sql'))).toBe(true);
      expect((await svc(dir, ['migrations', 'upgrade', '--target-name', 'notes'])).code).toBe(0);
      expect((await svc(dir, ['migrations', 'check', '--target-name', 'notes'])).code).toBe(0);
      const tablesOf = async (file: string) =>
        (
          await rowsOf<{ name: string }>(
            `file:${file}`,
            dir,
            "select name from sqlite_master where type = 'table'",
          )
        ).map((r) => r.name);
      expect(await tablesOf('main.db')).toContain('project_note');
      expect(await tablesOf('auth.db')).not.toContain('project_note');
      const unknown = await svc(dir, ['migrations', 'current', '--target-name', 'bogus']);
      expect(unknown.code).toBe(1);
      expect(unknown.stderr).toMatch(/^svc: unknown migration target 'bogus': the app defines auth, notes/);
    },
    CLI_TIMEOUT,
  );

  it(
    'serve on a database without tables says how to create them, in one line',
    async () => {
      const dir = project();
      writeFileSync(
        join(dir, '.env'),
        `SVC_SECRET_KEY=${'s'.repeat(40)}\nSVC_AUTH_DATABASE_URL=file:auth.db\n`,
      );
      const result = await svc(dir, ['serve', '--port', String(await freePort())]);
      expect(result.code).toBe(1);
      expect(result.stderr.trim().split('\n')).toEqual([
        expect.stringMatching(
          /^svc: the auth database has no tables yet .*run `svc init` or `svc migrations upgrade`/,
        ),
      ]);
    },
    CLI_TIMEOUT,
  );

  it(
    'serve warns when the auth database is behind the head revision',
    async () => {
      const dir = project();
      expect((await svc(dir, ['init', '--no-user'])).code).toBe(0);
      // A hand-written revision the database has not seen (the format is meant to be edited by people).
      const auth = join(dir, 'migrations', 'auth');
      const first = readdirSync(auth).find((f) => f.endsWith('.sql'))!;
      const firstId = /^-- id: (\S+)$/m.exec(readFileSync(join(auth, first), 'utf8'))![1];
      const snapshot = readdirSync(auth).find((f) => f.endsWith('.snapshot.json'))!;
      writeFileSync(
        join(auth, '29991231235959_beef_extra_table.sql'),
        [
          '-- svc migration revision',
          '-- id: 29991231235959_beef',
          `-- parent: ${firstId}`,
          '-- message: extra table',
          '-- dialect: sqlite',
          '-- created: 2999-12-31T23:59:59.000Z',
          `-- snapshot: ${snapshot}`,
          '',
          '-- +svc upgrade',
          'CREATE TABLE extra_thing (id integer);',
          '',
          '-- +svc downgrade',
          'DROP TABLE extra_thing;',
          '',
        ].join('\n'),
      );
      const child = spawnCli(['serve', '--port', String(await freePort()), '--log-level', 'warning'], {
        cwd: dir,
      });
      child.stdin.end();
      try {
        const text = await new Promise<string>((resolveText, reject) => {
          let seen = '';
          child.stderr.on('data', (d: Buffer) => {
            seen += d;
            if (/listening on/.test(seen)) resolveText(seen);
          });
          child.on('close', () => reject(new Error(`serve exited: ${seen}`)));
        });
        expect(text).toMatch(/the auth database is behind: 1 revision\(s\) of migrations\/auth not applied/);
        expect(text).toMatch(/svc migrations upgrade --target-name auth/);
      } finally {
        child.kill('SIGTERM');
      }
    },
    CLI_TIMEOUT,
  );

  it(
    'init then serve: the superuser logs in on the file database',
    async () => {
      const dir = project();
      expect((await svc(dir, ['init', '--username', 'boss', '--password', PASSWORD])).code).toBe(0);
      const child = spawnCli(['serve', '--port', String(await freePort()), '--log-level', 'warning'], {
        cwd: dir,
      });
      try {
        const url = await new Promise<string>((resolveUrl, reject) => {
          let text = '';
          const onData = (d: Buffer) => {
            text += d;
            const match = /listening on (http:\/\/\S+)/.exec(text);
            if (match) resolveUrl(match[1]!);
          };
          child.stdout.on('data', onData);
          child.stderr.on('data', onData);
          child.on('close', () => reject(new Error(`serve exited: ${text}`)));
        });
        const res = await fetch(`${url}/api/auth/token`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ username: 'boss', password: PASSWORD }),
        });
        expect(res.status).toBe(200);
        expect(await res.json()).toMatchObject({ token_type: 'bearer', access_token: expect.any(String) });
      } finally {
        child.kill('SIGTERM');
        await new Promise((r) => child.once('close', r));
      }
    },
    CLI_TIMEOUT,
  );
});

if (!TEST_POSTGRES_URL) {
  describe('svc init --database-url postgres', () =>
    reportSkipped('svc init on PostgreSQL', 'SVC_TEST_POSTGRES_URL is not set'));
} else {
  describe('svc init --database-url postgres', () => {
    let dir: string;
    let database: { url: string; drop(): Promise<void> };
    beforeAll(async () => {
      dir = createProject();
      database = await createPostgresDatabase();
    }, CLI_TIMEOUT);
    afterAll(async () => {
      rmSync(dir, { recursive: true, force: true });
      await database.drop();
    }, CLI_TIMEOUT);

    const query = <T>(text: string) => rowsOf<T>(database.url, dir, text);

    it(
      'writes the URL to .env, migrates the server database and creates the superuser; a second run changes nothing',
      async () => {
        const result = await svc(dir, ['init', '--password', PASSWORD, '--database-url', database.url]);
        expect(result.stderr).toBe('');
        expect(result.code).toBe(0);
        expect(dotenvOf(dir).SVC_AUTH_DATABASE_URL).toBe(database.url);
        const sqlFile = readdirSync(join(dir, 'migrations', 'auth')).find((f) => f.endsWith('.sql'))!;
        expect(readFileSync(join(dir, 'migrations', 'auth', sqlFile), 'utf8')).toMatch(/^-- dialect: pg$/m);
        const users = await query<{ username: string; is_superuser: boolean }>(
          'SELECT username, is_superuser FROM svc_user',
        );
        expect(users).toEqual([{ username: 'admin', is_superuser: true }]);

        const before = listing(dir);
        const again = await svc(dir, ['init', '--password', PASSWORD, '--database-url', database.url]);
        expect(again.code).toBe(0);
        expect(listing(dir)).toEqual(before);
        expect((await svc(dir, ['migrations', 'revision', 'x', '--autogenerate'])).stdout).toMatch(
          /^nothing to do/,
        );
      },
      CLI_TIMEOUT,
    );

    it(
      'downgrade base then upgrade head round-trips; two processes apply the revision once',
      async () => {
        expect((await svc(dir, ['migrations', 'downgrade', 'base'])).code).toBe(0);
        const left = await query<{ name: string }>(
          `SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public'`,
        );
        expect(left.map((r) => r.name)).toEqual(['svc_migrations_version']);
        const results = await Promise.all([
          svc(dir, ['migrations', 'upgrade']),
          svc(dir, ['migrations', 'upgrade']),
        ]);
        expect(results.map((r) => r.code)).toEqual([0, 0]);
        expect(results.filter((r) => /revisions? applied/.test(r.stdout))).toHaveLength(1);
        const back = await query<{ name: string }>(
          `SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public'`,
        );
        expect(back.map((r) => r.name)).toEqual(
          expect.arrayContaining(['svc_user', 'svc_group', 'svc_migrations_version']),
        );
      },
      CLI_TIMEOUT,
    );

    it(
      'refuses a --database-url that differs from the one already in .env',
      async () => {
        const result = await svc(dir, ['init', '--no-user', '--database-url', 'file:other.db']);
        expect(result.code).toBe(1);
        expect(result.stderr).toMatch(/SVC_AUTH_DATABASE_URL in .env differs from --database-url/);
      },
      CLI_TIMEOUT,
    );
  });
}
