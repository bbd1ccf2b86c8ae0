import { randomBytes } from 'node:crypto';
import { cpSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { describeEachDatabase, TEST_SECRET_KEY } from '@svc/core/testing';
import { CLI_DIR, REPO_DIR, runCli } from '../../testing/cli-process.js';

const DEMO_DIR = join(REPO_DIR, 'examples/demo');
const CLI_TIMEOUT = 240_000;

/** Every file under `dir`, relative, sorted. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name).slice(dir.length + 1))
    .sort();
}

// docs/cli.md "Migrations": a database created by the revisions committed with the previous release (the demo's
// migrations/, written by the twin sqlite/pg tables before defineTable) must show no drift against the tables
// of this code: `check` passes, `revision --autogenerate` finds nothing to do on either dialect, and the CLI reads
// and writes users on it.
describeEachDatabase('a database made by the previous release, under this code', (database) => {
  let dir: string;
  let env: Record<string, string>;

  beforeAll(() => {
    dir = join(CLI_DIR, '.tmp-test', `upgrade-${randomBytes(5).toString('hex')}`);
    mkdirSync(dir, { recursive: true });
    cpSync(DEMO_DIR, dir, {
      recursive: true,
      filter: (source) => !/node_modules|\.env$|\.db(-shm|-wal)?$/.test(source),
    });
    env = { SVC_SECRET_KEY: TEST_SECRET_KEY, SVC_AUTH_DATABASE_URL: database.url };
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it(
    'upgrades with the committed revisions, then finds no drift for either target or dialect',
    async () => {
      const run = (...args: string[]) => runCli([...args, '--base-dir', dir], { env, cwd: dir });
      const before = filesUnder(join(dir, 'migrations'));

      for (const target of ['auth', 'notes']) {
        const upgraded = await run('migrations', 'upgrade', '--target-name', target);
        expect({ target, code: upgraded.code, stderr: upgraded.stderr }).toEqual({
          target,
          code: 0,
          stderr: '',
        });
        const current = await run('migrations', 'current', '--target-name', target);
        expect(current.code).toBe(0);
        expect(current.stdout).toMatch(/head/);

        const check = await run('migrations', 'check', '--target-name', target);
        expect({ target, code: check.code, stderr: check.stderr }).toEqual({ target, code: 0, stderr: '' });

        const revision = await run(
          'migrations',
          'revision',
          'drift',
          '--autogenerate',
          '--target-name',
          target,
        );
        expect({ target, code: revision.code, stderr: revision.stderr }).toEqual({
          target,
          code: 0,
          stderr: '',
        });
        expect(revision.stdout).toMatch(/nothing to do/);
      }
      // No revision was written for either dialect.
      expect(filesUnder(join(dir, 'migrations'))).toEqual(before);

      // The tables created by the old revisions serve this code's queries.
      const created = await run('users', 'create', 'carol', '--password', 'carol-password-1', '--superuser');
      expect({ code: created.code, stderr: created.stderr }).toEqual({ code: 0, stderr: '' });
      const listed = await run('users', 'ls');
      expect(listed.code).toBe(0);
      expect(listed.stdout).toMatch(/carol/);
    },
    CLI_TIMEOUT,
  );
});
