import { randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';

import { createPostgresDatabase, TEST_POSTGRES_URL, reportSkipped } from '@svc/core/testing';
import { loadSettings, SettingsSchema, verifyPassword } from '@svc/core/internal';
import { rowsOf } from '../../../../testing/project-db.js';
import { STARTER_MAIN_TS } from '../templates/project.js';
import {
  CLI_DIR,
  fetchClosing,
  runCli,
  spawnCli,
  type CliResult,
  freePort,
  listeningUrl,
} from '../../../../testing/cli-process.js';

// The real CLI (built when fresh, else the sources through tsx: the repository's testing/cli-process.ts).
const TMP_DIR = join(CLI_DIR, '.tmp-test');
const PASSWORD = 'correct-horse-battery';
const CLI_TIMEOUT = 120_000;

function svc(cwd: string, args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  return runCli(args, { cwd, env });
}

/** The environment of a CLI process on a PostgreSQL-only install: better-sqlite3 cannot be resolved. */
const WITHOUT_SQLITE_DRIVER = {
  NODE_OPTIONS: `--import ${join(CLI_DIR, '..', '..', 'testing', 'without-better-sqlite3.mjs')}`,
};

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

type UserRow = {
  username: string;
  password_hash: string;
  is_superuser: number | boolean;
  is_staff: number | boolean;
  is_active: number | boolean;
  email: string | null;
};
const USERS = 'SELECT username, password_hash, is_superuser, is_staff, is_active, email FROM svc_user';

const sqliteUsers = (dir: string) => rowsOf<UserRow>('file:auth.db', dir, USERS);

async function sqliteTables(dir: string): Promise<string[]> {
  const rows = await rowsOf<{ name: string }>(
    'file:auth.db',
    dir,
    `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'`,
  );
  return rows.map((r) => r.name);
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

  it('writes no starter file into a project that has its main module', () => {
    expect(readdirSync(dir).sort()).toEqual(['.env', 'auth.db', 'main.mjs', 'migrations']);
    expect(first.stdout).toMatch(/^Next steps:$/m);
  });

  it('writes the first revision, upgrades to head and creates the superuser with an Argon2id hash', async () => {
    // One folder per dialect, so the same checkout also migrates PostgreSQL (docs/cli.md "Layout").
    expect(readdirSync(join(dir, 'migrations', 'auth')).sort()).toEqual(['pg', 'sqlite']);
    for (const dialect of ['sqlite', 'pg']) {
      const files = readdirSync(join(dir, 'migrations', 'auth', dialect));
      expect(files.filter((f) => f.endsWith('.sql'))).toHaveLength(1);
      expect(files.filter((f) => f.endsWith('.snapshot.json'))).toHaveLength(1);
      const text = readFileSync(
        join(
          dir,
          'migrations',
          'auth',
          dialect,
          files.find((f) => f.endsWith('.sql'))!,
        ),
        'utf8',
      );
      expect(text).toMatch(new RegExp(`^-- dialect: ${dialect}$`, 'm'));
    }
    expect(first.stdout).toMatch(/^wrote migrations\/auth\/sqlite\/\S+_initial_auth_schema\.sql/m);
    expect(first.stdout).toMatch(/^wrote migrations\/auth\/pg\/\S+_initial_auth_schema\.sql/m);
    expect(first.stdout).toMatch(/auth: base -> \S+ \(1 revision applied\)/);
    expect(await sqliteTables(dir)).toEqual(expect.arrayContaining(['svc_user', 'svc_migrations_version']));
    const [admin, ...others] = await sqliteUsers(dir);
    expect(others).toEqual([]);
    expect(admin).toMatchObject({
      username: 'admin',
      is_superuser: 1,
      is_staff: 1,
      is_active: 1,
      email: 'admin@example.com',
    });
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
      // The superuser exists: a run from a script needs no password (stdin is a pipe here, not a terminal).
      const third = await svc(dir, ['init']);
      expect({ code: third.code, stderr: third.stderr }).toEqual({ code: 0, stderr: '' });
      expect(third.stdout).toMatch(/superuser admin exists: left unchanged/);
      expect(listing(dir)).toEqual(before);
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
  /**
   * A project set up by one `svc init` run, shared by the tests that start from that state (each `svc init`
   * writes and applies a revision: seconds): made by the first test that asks, with that run's result.
   */
  const initialised = (args: string[]) => {
    let made: Promise<{ dir: string; result: CliResult }> | undefined;
    return () =>
      (made ??= (async () => {
        const dir = project();
        return { dir, result: await svc(dir, ['init', ...args]) };
      })());
  };
  /** `svc init --no-user`: tables, no user. */
  const withoutUser = initialised(['--no-user']);
  /** `svc init` naming the superuser ' ＢＯＳＳ ' (stored as boss) with PASSWORD. */
  const withBoss = initialised(['--username', ' ＢＯＳＳ ', '--password', PASSWORD]);

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
      const { dir, result } = await withoutUser();
      expect(result.code).toBe(0);
      expect(await sqliteUsers(dir)).toEqual([]);
    },
    CLI_TIMEOUT,
  );

  it(
    'refuses a password below password_min_length, and a missing password when stdin is no terminal, before writing anything',
    async () => {
      const dir = project();
      const short = await svc(dir, ['init', '--password', 'short']);
      expect(short.code).toBe(1);
      expect(short.stderr).toBe(
        'svc: the password must be at least 12 characters long (password_min_length)\n',
      );
      expect(readdirSync(dir)).toEqual(['main.mjs']);
      const missing = await svc(dir, ['init']);
      expect(missing.code).toBe(1);
      expect(missing.stderr).toBe(
        'svc: --password is required when stdin is not a terminal (or use --no-user); nothing was written\n',
      );
      expect(missing.stdout).toBe('');
      expect(readdirSync(dir)).toEqual(['main.mjs']);
    },
    CLI_TIMEOUT,
  );

  it(
    'without a terminal and without --password, refuses in an empty directory too: no starter file, no .env',
    async () => {
      const dir = join(TMP_DIR, `empty-${randomBytes(5).toString('hex')}`);
      mkdirSync(dir, { recursive: true });
      dirs.push(dir);
      const result = await svc(dir, ['init', '--username', 'admin']);
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(/^svc: --password is required when stdin is not a terminal/);
      expect(readdirSync(dir)).toEqual([]);
    },
    CLI_TIMEOUT,
  );

  it(
    'names the superuser under the username rule of svc users create: normal form stored, others refused before writing',
    async () => {
      const mixed = project();
      const refused = await svc(mixed, ['init', '--username', '\u0430dmin', '--password', PASSWORD]);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toBe('svc: the username mixes scripts (Cyrillic, Latin): write it in one\n');
      expect(readdirSync(mixed)).toEqual(['main.mjs']);
      const badEmail = await svc(mixed, ['init', '--email', 'not-an-address', '--password', PASSWORD]);
      expect(badEmail.code).toBe(1);
      expect(badEmail.stderr).toBe("svc: 'not-an-address' is not a valid email address\n");
      expect(readdirSync(mixed)).toEqual(['main.mjs']);

      const { dir, result } = await withBoss();
      expect(result.code).toBe(0);
      expect(result.stdout).toMatch(/^created superuser boss$/m);
      expect(result.stdout).toMatch(/log in as boss /);
      expect(await sqliteUsers(dir)).toEqual([
        expect.objectContaining({ username: 'boss', is_superuser: 1, is_staff: 1 }),
      ]);
      // svc users finds it under any spelling init accepted, and agrees about the flags.
      const ls = await svc(dir, ['users', 'ls']);
      expect(ls.stdout).toMatch(/^boss\s+-\s+yes\s+yes\s+yes\s+never$/m);
      const again = await svc(dir, ['init', '--username', 'BOSS']);
      expect(again.code).toBe(0);
      expect(again.stdout).toMatch(/superuser boss exists: left unchanged/);
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
      // Its tables() gives SQLite tables for both dialects: it keeps SQLite revisions only.
      expect(readdirSync(join(dir, 'migrations', 'notes'))).toEqual(['sqlite']);
      expect(
        readdirSync(join(dir, 'migrations', 'notes', 'sqlite')).some((f) => f.endsWith('_notes.sql')),
      ).toBe(true);
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
      // The project of `svc init --no-user` above (nothing changed it before this revision is added).
      const { dir, result } = await withoutUser();
      expect(result.code).toBe(0);
      // A hand-written revision the database has not seen (the format is meant to be edited by people).
      const auth = join(dir, 'migrations', 'auth', 'sqlite');
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
          let grace: NodeJS.Timeout | undefined;
          child.stderr.on('data', (d: Buffer) => {
            seen += d;
            // Log lines are batched (kernel/log, up to 50 ms) while "listening on" is written at once.
            if (/svc migrations upgrade --target-name auth/.test(seen)) {
              clearTimeout(grace);
              resolveText(seen);
            } else if (/listening on/.test(seen)) grace ??= setTimeout(() => resolveText(seen), 2_000);
          });
          child.on('close', () => reject(new Error(`serve exited: ${seen}`)));
        });
        expect(text).toMatch(
          /the auth database is behind: 1 revision\(s\) of migrations\/auth\/sqlite not applied/,
        );
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
      // The project whose superuser boss `svc init` created above (as ' ＢＯＳＳ ', with PASSWORD).
      const { dir, result } = await withBoss();
      expect(result.code).toBe(0);
      const child = spawnCli(['serve', '--port', String(await freePort()), '--log-level', 'warning'], {
        cwd: dir,
      });
      try {
        const url = await listeningUrl(child);
        // fetchClosing: the SIGTERM below then has no idle keep-alive connection to wait for.
        const res = await fetchClosing(`${url}/api/auth/token`, {
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

/** `svc serve` on a free port of the project; resolves once it listens. */
async function startServe(dir: string): Promise<{ url: string; stop(): Promise<void> }> {
  const child = spawnCli(['serve', '--port', String(await freePort()), '--log-level', 'warning'], {
    cwd: dir,
  });
  child.stdin.end();
  const url = await listeningUrl(child);
  return {
    url,
    async stop() {
      const closed = new Promise((r) => child.once('close', r));
      child.kill('SIGTERM');
      await closed;
    },
  };
}

describe('svc init in an empty directory (docs/getting-started.md: the newcomer path)', () => {
  let dir: string;
  let first: CliResult;
  beforeAll(async () => {
    dir = join(TMP_DIR, `new-${randomBytes(5).toString('hex')}`);
    mkdirSync(dir, { recursive: true });
    first = await svc(dir, ['init', '--password', PASSWORD]);
  }, CLI_TIMEOUT);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('writes the starter main.ts, svc.yaml, .gitignore and package.json next to .env and the database', () => {
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    expect(readdirSync(dir).sort()).toEqual([
      '.env',
      '.gitignore',
      'auth.db',
      'main.ts',
      'migrations',
      'package.json',
      'svc.yaml',
    ]);
    expect(readFileSync(join(dir, 'main.ts'), 'utf8')).toBe(STARTER_MAIN_TS);
    expect(readFileSync(join(dir, '.gitignore'), 'utf8').split('\n')).toEqual([
      '# svc init: secrets, the local database, dependencies',
      '.env',
      'auth.db',
      'auth.db-shm',
      'auth.db-wal',
      'node_modules/',
      '',
    ]);
    expect(JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'))).toMatchObject({
      type: 'module',
      private: true,
      scripts: { start: 'svc serve' },
    });
    const yaml = readFileSync(join(dir, 'svc.yaml'), 'utf8');
    for (const name of [
      'app_name',
      'host',
      'port',
      'registration_enabled',
      'mfa_enabled',
      'activity_log_enabled',
      'events_broadcast_enabled',
      'log_format',
    ]) {
      expect(yaml).toMatch(new RegExp(`# .+\\n${name}: `));
    }
    expect(yaml).toMatch(/^# cache_url: redis:\/\//m);
    // What a new user must decide before production, said where they look first (docs/deployment.md "Checklist").
    expect(yaml).toMatch(/# .+0 \(the default\) is no limit.*\n(# .*\n)*auth_rate_limit: 0\n/);
    expect(yaml).toMatch(/^# .*svc serve --forwarded-allow-ips /m);
    expect(yaml).toMatch(/^# .*FORWARDED_ALLOW_IPS/m);
    expect(yaml).not.toMatch(/secret_key:|database_url:/);
    // The YAML loads, and holds the defaults: a project that never edits it runs as without it.
    const defaults = SettingsSchema.parse({ secret_key: dotenvOf(dir).SVC_SECRET_KEY });
    expect(loadSettings({ baseDir: dir, env: {} })).toEqual({
      ...defaults,
      auth_database_url: 'file:auth.db',
    });
  });

  it('prints the next steps with the docs URL and the username, never the password', () => {
    const steps = first.stdout.slice(first.stdout.indexOf('Next steps:'));
    expect(steps).toMatch(/1\. Start the server: +npx svc serve/);
    expect(steps).toContain('http://127.0.0.1:8000/docs/core');
    expect(steps).toContain('http://127.0.0.1:8000/docs)');
    expect(steps).toMatch(/Click "Authorize", log in as admin /);
    expect(steps).toMatch(/GET \/api\/auth\/user, click "Try it out", then "Execute"/);
    expect(steps).toMatch(/svc users create/);
    expect(steps).toMatch(/svc migrations/);
    expect(steps).not.toContain('\u001b['); // plain text, no colours
    expect(first.stdout + first.stderr).not.toContain(PASSWORD);
  });

  it(
    'changes nothing when run a second time (every file identical, the starter now loaded)',
    async () => {
      const before = listing(dir);
      const second = await svc(dir, ['init', '--password', PASSWORD]);
      expect(second.stderr).toBe('');
      expect(second.code).toBe(0);
      expect(second.stdout).not.toMatch(/main\.ts:|svc\.yaml:|\.gitignore:|package\.json:/);
      expect(second.stdout).toMatch(/superuser admin exists: left unchanged/);
      expect(second.stdout).toMatch(/^Next steps:$/m);
      expect(listing(dir)).toEqual(before);
    },
    CLI_TIMEOUT,
  );

  it(
    'serves the starter: the superuser logs in and calls GET /api/auth/user and both example routes',
    async () => {
      const server = await startServe(dir);
      try {
        // fetchClosing: server.stop() (SIGTERM) then has no idle keep-alive connection to wait for.
        const login = await fetchClosing(`${server.url}/api/auth/token`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ grant_type: 'password', username: 'admin', password: PASSWORD }),
        });
        expect(login.status).toBe(200);
        const { access_token: token } = (await login.json()) as { access_token: string };
        const bearer = { authorization: `Bearer ${token}` };
        const me = await fetchClosing(`${server.url}/api/auth/user`, { headers: bearer });
        expect(me.status).toBe(200);
        expect(await me.json()).toMatchObject({ data: { username: 'admin', isSuperuser: true } });
        const about = await fetchClosing(`${server.url}/api/notes/about`);
        expect(about.status).toBe(200);
        expect(await about.json()).toMatchObject({ data: { service: 'notes' } });
        const anonymous = await fetchClosing(`${server.url}/api/notes/`);
        expect(anonymous.status).toBe(401);
        expect(await anonymous.json()).toMatchObject({ detail: [{ code: 'auth.not_authenticated' }] });
        const notes = await fetchClosing(`${server.url}/api/notes/`, { headers: bearer });
        expect(notes.status).toBe(200);
        expect(await notes.json()).toMatchObject({ data: [{ id: 1, text: 'hello admin' }] });
        // What Swagger UI's Authorize needs: the password flow at the token route, on the protected routes.
        const docs = (await (await fetchClosing(`${server.url}/openapi.json`)).json()) as {
          components: { securitySchemes: Record<string, unknown> };
          paths: Record<string, Record<string, { security?: unknown }>>;
        };
        expect(docs.components.securitySchemes.oauth2Password).toMatchObject({
          flows: { password: { tokenUrl: '/api/auth/token' } },
        });
        expect(docs.paths['/api/notes/']!.get!.security).toEqual([
          { oauth2Password: [] },
          { bearerAuth: [] },
        ]);
      } finally {
        await server.stop();
      }
    },
    CLI_TIMEOUT,
  );
});

describe('svc init in a new project with files of its own', () => {
  let dir: string;
  let result: CliResult;
  const manifest = '{\n  "name": "mine",\n  "type": "commonjs"\n}\n';
  const gitignore = 'node_modules\n/.env\ndist/'; // no final newline
  const yaml = 'port: 9123\napi_v1_prefix: /v1\n';
  beforeAll(async () => {
    dir = join(TMP_DIR, `own-${randomBytes(5).toString('hex')}`);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'package.json'), manifest);
    writeFileSync(join(dir, '.gitignore'), gitignore);
    writeFileSync(join(dir, 'svc.yaml'), yaml);
    result = await svc(dir, ['init', '--no-user']);
  }, CLI_TIMEOUT);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('keeps package.json and svc.yaml as they are and adds only the missing .gitignore lines', () => {
    expect(result.code).toBe(0);
    expect(readFileSync(join(dir, 'package.json'), 'utf8')).toBe(manifest);
    expect(readFileSync(join(dir, 'svc.yaml'), 'utf8')).toBe(yaml);
    expect(readFileSync(join(dir, 'main.ts'), 'utf8')).toBe(STARTER_MAIN_TS);
    expect(readFileSync(join(dir, '.gitignore'), 'utf8')).toBe(
      `${gitignore}\n\n# svc init: secrets, the local database, dependencies\nauth.db\nauth.db-shm\nauth.db-wal\n`,
    );
    expect(result.stdout).toMatch(/^\.gitignore: added auth\.db, auth\.db-shm, auth\.db-wal$/m);
  });

  it('warns on stderr with the fix when package.json is not an ES module package, and says so first', () => {
    expect(result.stderr).toBe(
      'svc: warning: package.json has no "type": "module", and main.ts is an ES module: run `npm pkg set type=module` before `svc serve` (svc init does not edit package.json)\n',
    );
    expect(result.stdout).toMatch(/1\. Make the project an ES module: +npm pkg set type=module/);
  });

  it('prints next steps from the settings (port, api_v1_prefix) and how to create the missing user', () => {
    expect(result.stdout).toMatch(/2\. Create a superuser: +npx svc users create <username> --superuser/);
    expect(result.stdout).toContain('Open http://127.0.0.1:9123/docs/core');
    expect(result.stdout).toContain('Open GET /api/v1/auth/user');
  });

  it(
    'a second run changes nothing; once the package is an ES module the starter loads',
    async () => {
      const before = listing(dir);
      const again = await svc(dir, ['init', '--no-user']);
      expect(again.code).toBe(1); // the starter is now loaded, and cannot be while package.json says commonjs
      expect(again.stderr).toMatch(/npm pkg set type=module/);
      expect(listing(dir)).toEqual(before);
      writeFileSync(join(dir, 'package.json'), manifest.replace('commonjs', 'module'));
      const fixed = await svc(dir, ['init', '--no-user']);
      expect(fixed.stderr).toBe('');
      expect(fixed.code).toBe(0);
      expect(fixed.stdout).not.toMatch(/npm pkg set type=module/);
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
        const pgDir = join(dir, 'migrations', 'auth', 'pg');
        const sqlFile = readdirSync(pgDir).find((f) => f.endsWith('.sql'))!;
        expect(readFileSync(join(pgDir, sqlFile), 'utf8')).toMatch(/^-- dialect: pg$/m);
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
      'refuses a --database-url that differs from a URL the user wrote to .env, and changes nothing',
      async () => {
        const own = createProject();
        try {
          const dotenv = `SVC_SECRET_KEY=${'k'.repeat(40)}\nSVC_AUTH_DATABASE_URL=${database.url}\n`;
          writeFileSync(join(own, '.env'), dotenv);
          const result = await svc(own, ['init', '--no-user', '--database-url', 'file:other.db']);
          expect(result.code).toBe(1);
          expect(result.stderr).toMatch(
            /^svc: SVC_AUTH_DATABASE_URL in .env differs from --database-url; svc init never overwrites a value it did not write/,
          );
          expect(readFileSync(join(own, '.env'), 'utf8')).toBe(dotenv);
        } finally {
          rmSync(own, { recursive: true, force: true });
        }
      },
      CLI_TIMEOUT,
    );
  });

  describe('svc init on a PostgreSQL-only install (no better-sqlite3)', () => {
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

    it(
      'refuses the default file database before writing anything, naming --database-url',
      async () => {
        const result = await svc(dir, ['init', '--no-user'], WITHOUT_SQLITE_DRIVER);
        expect(result.code).toBe(1);
        expect(result.stderr).toMatch(
          /^svc: the file database file:auth\.db needs the package better-sqlite3, which is not installed .*\(DB_SQLITE_DRIVER_MISSING\); svc init chose it by default: run `svc init --database-url postgres:\/\/…` for PostgreSQL; nothing was written\n$/,
        );
        expect(readdirSync(dir)).toEqual(['main.mjs']);
      },
      CLI_TIMEOUT,
    );

    it(
      're-run with --database-url replaces the file URL an earlier svc init wrote, keeps its secret key, and sets up PostgreSQL',
      async () => {
        // What an earlier svc init left behind when it wrote .env before the driver was found missing.
        const key = 'init-written-secret-key-0123456789abcdef012345';
        writeFileSync(
          join(dir, '.env'),
          `# written by svc init: secrets, keep out of version control\nSVC_SECRET_KEY=${key}\nSVC_AUTH_DATABASE_URL=file:auth.db\n`,
          { mode: 0o600 },
        );
        const result = await svc(
          dir,
          ['init', '--password', PASSWORD, '--database-url', database.url],
          WITHOUT_SQLITE_DRIVER,
        );
        expect(result.stderr).toBe('');
        expect(result.code).toBe(0);
        expect(result.stdout.split('\n')[0]).toBe(
          '.env: changed SVC_AUTH_DATABASE_URL (written by an earlier svc init)',
        );
        expect(dotenvOf(dir)).toEqual({ SVC_SECRET_KEY: key, SVC_AUTH_DATABASE_URL: database.url });
        const users = await rowsOf<{ username: string }>(database.url, dir, 'SELECT username FROM svc_user');
        expect(users).toEqual([{ username: 'admin' }]);
      },
      CLI_TIMEOUT,
    );
  });
}
