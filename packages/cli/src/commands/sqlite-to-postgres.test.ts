import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadCoreModules, SettingsSchema } from '@svc/core/internal';
import { createRevision } from '@svc/migrations';
import { createPostgresDatabase, reportSkipped, TEST_POSTGRES_URL } from '@svc/core/testing';
import { rowsOf } from '../../../../testing/project-db.js';
import {
  CLI_DIR,
  REPO_DIR,
  cleanEnv,
  cliInvocation,
  fetchClosing,
  freePort,
  runCli,
  spawnCli,
  listeningUrl,
} from '../../../../testing/cli-process.js';

// docs/deployment.md "From SQLite in development to PostgreSQL in production", followed as written: its shell
// blocks are read from the page and run through bash, the first in a project on a file database under git, the
// second in a clone of that commit with a PostgreSQL URL in the environment (a database of this test's own).
const TMP_DIR = join(CLI_DIR, '.tmp-test');
const SECTION = '### From SQLite in development to PostgreSQL in production';
const ADMIN_PASSWORD = 'correct-horse-battery';
const STEP_TIMEOUT = 300_000;

/** The ```sh blocks of one section (from its heading to the next heading of the same or a higher level). */
function shellBlocksOf(markdown: string, heading: string): string[] {
  const start = markdown.indexOf(`\n${heading}\n`);
  if (start < 0) throw new Error(`docs/deployment.md has no section '${heading}'`);
  const rest = markdown.slice(start + heading.length + 2);
  const end = rest.search(/^#{1,3} /m);
  const section = end < 0 ? rest : rest.slice(0, end);
  return [...section.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((m) => m[1]!);
}

/** A project with a migration target of its own (`notes`, both dialects), like examples/demo. */
const MAIN_MJS = `import { createApp } from '@svc/core';
import * as pg from 'drizzle-orm/pg-core';
import * as sq from 'drizzle-orm/sqlite-core';

const sqliteNotes = sq.sqliteTable('project_note', { id: sq.integer('id').primaryKey(), text: sq.text('text').notNull() });
const pgNotes = pg.pgTable('project_note', { id: pg.serial('id').primaryKey(), text: pg.text('text').notNull() });

export const app = createApp({
  migrationTargets: {
    notes: { tables: (_settings, dialect) => ({ notes: dialect === 'pg' ? pgNotes : sqliteNotes }) },
  },
});
`;

function git(cwd: string, args: string[], env: Record<string, string>): string {
  const result = spawnSync('git', args, { cwd, env, encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`git ${args.join(' ')} failed: ${result.stderr}`);
  return result.stdout;
}

if (!TEST_POSTGRES_URL) {
  describe('docs/deployment.md: SQLite in development, PostgreSQL in production', () =>
    reportSkipped('the SQLite-to-PostgreSQL path of docs/deployment.md', 'SVC_TEST_POSTGRES_URL is not set'));
} else {
  describe('docs/deployment.md: SQLite in development, PostgreSQL in production', () => {
    const root = join(TMP_DIR, `switch-${randomBytes(5).toString('hex')}`);
    const dev = join(root, 'dev');
    const prod = join(root, 'prod');
    const bin = join(root, 'bin');
    let database: { url: string; drop(): Promise<void> };
    let blocks: string[];
    let env: Record<string, string>;

    /** Runs one block of the page through bash, stopping at the first failing command. */
    function runBlock(block: string, cwd: string, extra: Record<string, string>) {
      const result = spawnSync('bash', ['-e', '-c', block], {
        cwd,
        env: { ...env, ...extra },
        encoding: 'utf8',
        timeout: STEP_TIMEOUT,
      });
      return { code: result.status, output: `${result.stdout}${result.stderr}` };
    }

    beforeAll(async () => {
      blocks = shellBlocksOf(readFileSync(join(REPO_DIR, 'docs', 'deployment.md'), 'utf8'), SECTION);
      mkdirSync(dev, { recursive: true });
      mkdirSync(bin);
      // `npx svc …` of the page runs this repository's CLI (built or from source, as every CLI test).
      const { args, env: cliEnv } = cliInvocation();
      const quoted = [process.execPath, ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
      writeFileSync(
        join(bin, 'npx'),
        `#!/bin/sh\n[ "$1" = svc ] || { echo "this test runs only npx svc, not: npx $*" >&2; exit 2; }\nshift\nexec ${quoted} "$@"\n`,
      );
      chmodSync(join(bin, 'npx'), 0o755);
      env = {
        ...cleanEnv(),
        ...cliEnv,
        PATH: `${bin}:${process.env.PATH}`,
        ADMIN_PASSWORD,
        GIT_AUTHOR_NAME: 'svc test',
        GIT_AUTHOR_EMAIL: 'test@example.com',
        GIT_COMMITTER_NAME: 'svc test',
        GIT_COMMITTER_EMAIL: 'test@example.com',
        GIT_CONFIG_NOSYSTEM: '1',
        HOME: root,
      };
      // The project as it stands before the page's steps: its code under version control, secrets ignored.
      writeFileSync(join(dev, 'main.mjs'), MAIN_MJS);
      writeFileSync(join(dev, '.gitignore'), '.env\nauth.db\nauth.db-shm\nauth.db-wal\nnode_modules/\n');
      git(dev, ['init', '--quiet', '--initial-branch=main'], env);
      git(dev, ['add', '.'], env);
      git(dev, ['commit', '--quiet', '-m', 'project'], env);
      database = await createPostgresDatabase();
    }, STEP_TIMEOUT);
    afterAll(async () => {
      await database?.drop();
      rmSync(root, { recursive: true, force: true });
    }, STEP_TIMEOUT);

    it('has two shell blocks: the development machine, then the production host', () => {
      expect(blocks).toHaveLength(2);
      expect(blocks.join('')).not.toMatch(/auth-pg/);
    });

    it(
      'on the development machine: a file database at head, and revisions of both dialects committed',
      async () => {
        const result = runBlock(blocks[0]!, dev, {});
        expect({ code: result.code, output: result.output }).toEqual({ code: 0, output: expect.any(String) });
        const tables = await rowsOf<{ name: string }>(
          'file:auth.db',
          dev,
          "SELECT name FROM sqlite_master WHERE type = 'table'",
        );
        expect(tables.map((t) => t.name)).toEqual(
          expect.arrayContaining(['svc_user', 'svc_migrations_version', 'project_note']),
        );
        const committed = git(dev, ['ls-files', 'migrations'], env).trim().split('\n');
        for (const folder of ['auth/sqlite', 'auth/pg', 'notes/sqlite', 'notes/pg']) {
          expect(
            committed.filter((f) => f.startsWith(`migrations/${folder}/`) && f.endsWith('.sql')),
          ).toHaveLength(1);
        }
        expect(git(dev, ['status', '--porcelain'], env)).toBe('');
      },
      STEP_TIMEOUT,
    );

    it(
      'on the production host: the same commit upgrades PostgreSQL, creates the superuser, and serves it',
      async () => {
        git(root, ['clone', '--quiet', dev, prod], env);
        expect(existsSync(join(prod, '.env'))).toBe(false);
        expect(readdirSync(join(prod, 'migrations', 'auth')).sort()).toEqual(['pg', 'sqlite']);
        const production = {
          SVC_SECRET_KEY: randomBytes(48).toString('base64url'),
          SVC_AUTH_DATABASE_URL: database.url,
        };
        const result = runBlock(blocks[1]!, prod, production);
        expect({ code: result.code, output: result.output }).toEqual({ code: 0, output: expect.any(String) });
        expect(result.output).toMatch(/auth: base -> \S+ \(1 revision applied\)/);
        expect(result.output).toMatch(/notes: base -> \S+ \(1 revision applied\)/);

        const tables = await rowsOf<{ name: string }>(
          database.url,
          prod,
          `SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public'`,
        );
        expect(tables.map((t) => t.name)).toEqual(
          expect.arrayContaining(['svc_user', 'svc_migrations_version', 'project_note']),
        );
        expect(
          await rowsOf(database.url, prod, 'SELECT username, is_superuser, is_staff FROM svc_user'),
        ).toEqual([{ username: 'admin', is_superuser: true, is_staff: true }]);
        for (const target of ['auth', 'notes']) {
          const current = await runCli(['migrations', 'current', '--target-name', target], {
            cwd: prod,
            env: production,
          });
          expect(current.stdout).toMatch(new RegExp(`^${target}: \\S+ \\(head\\)`));
          const check = await runCli(['migrations', 'check', '--target-name', target], {
            cwd: prod,
            env: production,
          });
          expect({ code: check.code, stderr: check.stderr }).toEqual({ code: 0, stderr: '' });
        }
        expect(existsSync(join(prod, 'auth.db'))).toBe(false);

        const server = spawnCli(['serve', '--port', String(await freePort()), '--log-level', 'warning'], {
          cwd: prod,
          env: production,
        });
        server.stdin.end();
        try {
          const url = await listeningUrl(server);
          // fetchClosing: the SIGTERM below then has no idle keep-alive connection to wait for.
          const login = await fetchClosing(`${url}/api/auth/token`, {
            method: 'POST',
            headers: { 'content-type': 'application/x-www-form-urlencoded' },
            body: new URLSearchParams({ username: 'admin', password: ADMIN_PASSWORD }),
          });
          expect(login.status).toBe(200);
          const { access_token: token } = (await login.json()) as { access_token: string };
          const me = await fetchClosing(`${url}/api/auth/user`, {
            headers: { authorization: `Bearer ${token}` },
          });
          expect(me.status).toBe(200);
          expect(await me.json()).toMatchObject({
            data: { username: 'admin', isSuperuser: true, isStaff: true },
          });
        } finally {
          const closed = new Promise((r) => server.once('close', r));
          server.kill('SIGTERM');
          await closed;
        }
      },
      STEP_TIMEOUT,
    );
  });

  describe('a project whose revisions are in the layout of earlier versions (migrations/auth/*.sql)', () => {
    const dir = join(TMP_DIR, `flat-${randomBytes(5).toString('hex')}`);
    const flat = join(dir, 'migrations', 'auth');
    let database: { url: string; drop(): Promise<void> };
    const secret = { SVC_SECRET_KEY: randomBytes(48).toString('base64url') };
    const onPostgres = () => ({ ...secret, SVC_AUTH_DATABASE_URL: database.url });
    const onFile = { ...secret, SVC_AUTH_DATABASE_URL: 'file:auth.db' };

    beforeAll(async () => {
      mkdirSync(dir, { recursive: true });
      writeFileSync(
        join(dir, 'main.mjs'),
        "import { createApp } from '@svc/core';\nexport const app = createApp();\n",
      );
      // What `svc init` wrote before folders per dialect: SQLite revisions directly in the target folder.
      await createRevision({
        dir: flat,
        message: 'initial auth schema',
        dialect: 'sqlite',
        schema: (await loadCoreModules()).buildAuthSchema(SettingsSchema.parse({}), 'sqlite'),
        autogenerate: true,
      });
      database = await createPostgresDatabase();
    }, STEP_TIMEOUT);
    afterAll(async () => {
      await database?.drop();
      rmSync(dir, { recursive: true, force: true });
    }, STEP_TIMEOUT);

    it(
      'still upgrades its file database from the flat folder',
      async () => {
        const result = await runCli(['migrations', 'upgrade'], { cwd: dir, env: onFile });
        expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' });
        expect(result.stdout).toMatch(/auth: base -> \S+ \(1 revision applied\)/);
      },
      STEP_TIMEOUT,
    );

    it(
      'on PostgreSQL says to write the PostgreSQL revisions, and the command it names makes the upgrade work',
      async () => {
        const refused = await runCli(['migrations', 'upgrade'], { cwd: dir, env: onPostgres() });
        expect(refused.code).toBe(1);
        expect(refused.stderr).toBe(
          'svc: no PostgreSQL revisions in migrations/auth/pg (the project has SQLite revisions in migrations/auth): write them where the project is developed with `svc migrations revision "PostgreSQL revisions" --autogenerate --target-name auth` (it writes every dialect\'s), commit them, then upgrade\n',
        );
        expect(refused.stderr).not.toMatch(/target-name auth-pg/);
        const advised = /`svc (migrations revision [^`]+)`/.exec(refused.stderr)![1]!;
        const args = advised.match(/"[^"]*"|\S+/g)!.map((a) => a.replace(/^"|"$/g, ''));
        const revision = await runCli(args, { cwd: dir, env: onFile });
        expect(revision.code).toBe(0);
        expect(revision.stdout).toMatch(/^nothing to do: .* in migrations\/auth; no revision written$/m);
        expect(revision.stdout).toMatch(/^wrote migrations\/auth\/pg\/\S+_postgresql_revisions\.sql/m);
        expect(revision.stdout).toMatch(
          /^note: migrations\/auth keeps revisions in the layout of earlier versions/m,
        );
        const upgraded = await runCli(['migrations', 'upgrade'], { cwd: dir, env: onPostgres() });
        expect({ code: upgraded.code, stderr: upgraded.stderr }).toEqual({ code: 0, stderr: '' });
        // Both databases are at the head of their own dialect's chain.
        for (const env of [onFile, onPostgres()]) {
          const current = await runCli(['migrations', 'current'], { cwd: dir, env });
          expect(current.stdout).toMatch(/^auth: \S+ \(head\)/);
        }
      },
      STEP_TIMEOUT,
    );

    it(
      'refuses a second target name per dialect and says that none is needed',
      async () => {
        const result = await runCli(['migrations', 'upgrade', '--target-name', 'auth-pg'], {
          cwd: dir,
          env: onPostgres(),
        });
        expect(result.code).toBe(1);
        expect(result.stderr).toMatch(
          /^svc: unknown migration target 'auth-pg': the app defines auth; a target needs no second name per dialect: its revisions for each dialect live in migrations\/auth\/sqlite\/ and …\/pg\/, chosen from the database URL\n$/,
        );
      },
      STEP_TIMEOUT,
    );
  });
}
