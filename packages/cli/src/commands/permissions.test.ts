import { randomBytes } from 'node:crypto';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { defineRouter } from '@svc/core';
import { describeEachDatabase, startTestApp, TEST_SECRET_KEY, type TestApp } from '@svc/core/testing';
import { CLI_DIR, runCli, type CliResult } from '../../../../testing/cli-process.js';

// Each test starts the CLI several times; from the sources (through tsx, when dist is older) a start takes seconds.
const CLI_TIMEOUT_MS = 400_000;

/**
 * The project's routers, once as the project's main.mjs (what `svc permissions sync` reads) and once here for
 * the test server on the same database (what the stored permissions must unlock).
 */
const MAIN_MJS = `import { createApp, defineRouter } from '@svc/core';
const notes = defineRouter({
  prefix: '/notes',
  permissions: ['notes.read'],
  permissionDescriptions: { 'notes.read': 'Read notes', 'notes.export': 'Export notes (checked by a handler)' },
});
notes.get('/', {}, async () => ['first note']);
notes.post('/', { permissions: ['notes.write'] }, async () => ({ saved: true }));
notes.get('/about', { public: true }, async () => ({ service: 'notes' }));
export const app = createApp({ routers: [notes] });
`;

function notesRouter() {
  const notes = defineRouter({ prefix: '/notes', permissions: ['notes.read'] });
  notes.get('/', {}, async () => ['first note']);
  notes.post('/', { permissions: ['notes.write'] }, async () => ({ saved: true }));
  return notes;
}

/** The `svc: ...` lines of a run's stderr. */
const errorLine = (result: CliResult) =>
  result.stderr
    .split('\n')
    .filter((line) => line.startsWith('svc: '))
    .join('\n');

describeEachDatabase('svc permissions and svc groups', (database) => {
  let dir: string;
  let app: TestApp;
  const svc = (args: string[], options: { input?: string; env?: Record<string, string> } = {}) =>
    runCli(['--base-dir', dir, ...args], options);
  const stored = async () => {
    const admin = await app.loginAs({ username: 'root', password: 'root-password-123' });
    const res = await admin.get('/api/admin/permissions/permissions');
    expect(res.status).toBe(200);
    return (res.body.data as { codename: string; description: string }[]).map((p) => [
      p.codename,
      p.description,
    ]);
  };

  beforeAll(async () => {
    // Inside the repository, so that main.mjs resolves @svc/core (packages/cli/.tmp-test is git-ignored).
    dir = join(CLI_DIR, '.tmp-test', `permissions-${randomBytes(6).toString('hex')}`);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'main.mjs'), MAIN_MJS);
    writeFileSync(
      join(dir, '.env'),
      [
        `SVC_SECRET_KEY=${TEST_SECRET_KEY}`,
        `SVC_AUTH_DATABASE_URL=${database.url}`,
        // No auto_create_auth_schema: the test server below creates the tables on this database, and each CLI
        // run would otherwise load drizzle-kit and diff the whole schema first (a second a run, twice for a
        // command that starts the app), as no project made by `svc init` does.
        'SVC_LOG_LEVEL=ERROR',
        '',
      ].join('\n'),
    );
    app = await startTestApp({ database, routers: [notesRouter()] });
    await app.createUser({ username: 'root', password: 'root-password-123', isSuperuser: true });
  }, CLI_TIMEOUT_MS);
  afterAll(async () => {
    await app?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it(
    'sync creates the codenames the routers declare with their descriptions, then reports them in sync',
    async () => {
      expect(await stored()).toEqual([]);
      const dry = await svc(['permissions', 'sync', '--dry-run', '--app', 'main:app']);
      expect(dry).toMatchObject({
        code: 0,
        stdout: 'would add 3 permissions: notes.export, notes.read and notes.write\n',
      });
      expect(await stored()).toEqual([]);

      const res = await svc(['permissions', 'sync']);
      expect(res).toMatchObject({
        code: 0,
        stdout: 'added 3 permissions: notes.export, notes.read and notes.write\n',
      });
      expect(await stored()).toEqual([
        ['notes.export', 'Export notes (checked by a handler)'],
        ['notes.read', 'Read notes'],
        ['notes.write', ''],
      ]);
      const again = await svc(['permissions', 'sync']);
      expect(again).toMatchObject({
        code: 0,
        stdout: 'permissions in sync: 3 codenames declared, all stored\n',
      });
      const ls = await svc(['permissions', 'ls']);
      expect(ls.code).toBe(0);
      expect(ls.stdout.split('\n').slice(2, 5)).toEqual([
        'notes.export  Export notes (checked by a handler)',
        'notes.read    Read notes',
        'notes.write   -',
      ]);
    },
    CLI_TIMEOUT_MS,
  );

  it(
    'sync restores a router description an admin changed, reports undeclared codenames and prunes them on request',
    async () => {
      const admin = await app.loginAs({ username: 'root', password: 'root-password-123' });
      const legacy = await admin.post('/api/admin/permissions/permissions', {
        codename: 'legacy.export',
        description: 'From an older version',
      });
      expect(legacy.status).toBe(201);
      const list = (await admin.get('/api/admin/permissions/permissions')).body.data as {
        id: number;
        codename: string;
      }[];
      const read = list.find((p) => p.codename === 'notes.read')!;
      const edited = await admin.put(`/api/admin/permissions/permissions/${read.id}`, {
        description: 'edited',
      });
      expect(edited.status).toBe(200);

      const res = await svc(['permissions', 'sync']);
      expect(res).toMatchObject({
        code: 0,
        stdout:
          'updated the description of notes.read\n' +
          'stored but declared by no router: legacy.export (kept; --prune deletes them)\n',
      });
      expect((await stored()).map(([codename]) => codename)).toContain('legacy.export');

      const dry = await svc(['permissions', 'sync', '--prune', '--dry-run']);
      expect(dry.stdout).toBe(
        'would delete 1 permission no router declares: legacy.export (and their links)\n',
      );
      expect((await stored()).map(([codename]) => codename)).toContain('legacy.export');

      const pruned = await svc(['permissions', 'sync', '--prune']);
      expect(pruned).toMatchObject({
        code: 0,
        stdout: 'deleted 1 permission no router declares: legacy.export (and their links)\n',
      });
      expect(await stored()).toEqual([
        ['notes.export', 'Export notes (checked by a handler)'],
        ['notes.read', 'Read notes'],
        ['notes.write', ''],
      ]);
    },
    CLI_TIMEOUT_MS,
  );

  it(
    'groups: create with a permission, add a user, grant, revoke, remove: the server follows each step',
    async () => {
      // The codenames exist (the first test synced them; stored here through the admin API when it did not run,
      // without a CLI process for a step this test does not check).
      const root = await app.loginAs({ username: 'root', password: 'root-password-123' });
      const have = (await stored()).map(([codename]) => codename);
      for (const codename of ['notes.read', 'notes.write'].filter((c) => !have.includes(c))) {
        const made = await root.post('/api/admin/permissions/permissions', { codename, description: '' });
        expect(made.status).toBe(201);
      }
      const alice = await app.createUser({ username: 'alice' });
      const client = await app.loginAs(alice);
      expect((await client.get('/api/notes')).status).toBe(403);

      const created = await svc(['groups', 'create', 'editors', '-p', 'notes.read', '--description', 'Edit']);
      expect(created).toMatchObject({ code: 0, stdout: "created group 'editors' with notes.read\n" });
      const added = await svc(['groups', 'add-user', 'editors', 'Alice']);
      expect(added).toMatchObject({ code: 0, stdout: "added user 'alice' to group 'editors'\n" });
      expect((await svc(['groups', 'add-user', 'editors', 'alice'])).stdout).toBe(
        "user 'alice' already is in group 'editors'\n",
      );
      expect((await client.get('/api/notes')).status).toBe(200);
      expect((await client.post('/api/notes', {})).status).toBe(403);

      const granted = await svc(['groups', 'grant', 'editors', 'notes.write', 'notes.read']);
      expect(granted).toMatchObject({
        code: 0,
        stdout: "granted notes.write to group 'editors'\ngroup 'editors' already had notes.read\n",
      });
      expect((await client.post('/api/notes', {})).status).toBe(200);

      const ls = await svc(['groups', 'ls']);
      expect(ls.code).toBe(0);
      expect(ls.stdout.split('\n')[0]).toBe('NAME     MEMBERS  PERMISSIONS             DESCRIPTION');
      expect(ls.stdout.split('\n')[2]).toBe('editors  1        notes.read,notes.write  Edit');

      const revoked = await svc(['groups', 'revoke', 'editors', 'notes.write']);
      expect(revoked).toMatchObject({ code: 0, stdout: "revoked notes.write from group 'editors'\n" });
      expect((await client.post('/api/notes', {})).status).toBe(403);

      const removed = await svc(['groups', 'remove-user', 'editors', 'alice']);
      expect(removed).toMatchObject({ code: 0, stdout: "removed user 'alice' from group 'editors'\n" });
      expect((await client.get('/api/notes')).status).toBe(403);

      const deleted = await svc(['groups', 'delete', 'editors', '--yes']);
      expect(deleted).toMatchObject({ code: 0, stdout: "deleted group 'editors'\n" });
      expect((await svc(['groups', 'ls'])).stdout).toBe('no groups\n');
    },
    CLI_TIMEOUT_MS,
  );

  it(
    'refuses unknown groups, users and codenames and a duplicate group with exit 1 and one line',
    async () => {
      // The group the refusals meet, made through the admin API (svc groups create is the previous test's).
      const root = await app.loginAs({ username: 'root', password: 'root-password-123' });
      const readers = await root.post('/api/admin/permissions/groups', {
        name: 'readers',
        description: '',
        permissionIds: [],
      });
      expect(readers.status).toBe(201);
      const duplicate = await svc(['groups', 'create', ' readers ']);
      expect(duplicate.code).toBe(1);
      expect(errorLine(duplicate)).toBe("svc: group 'readers' already exists");

      const unknownGroup = await svc(['groups', 'grant', 'writers', 'notes.read']);
      expect(unknownGroup.code).toBe(1);
      expect(errorLine(unknownGroup)).toBe("svc: group 'writers' does not exist (svc groups ls lists them)");

      const unknownPermission = await svc(['groups', 'grant', 'readers', 'notes.read', 'notes.print']);
      expect(unknownPermission.code).toBe(1);
      expect(errorLine(unknownPermission)).toBe(
        "svc: no permission 'notes.print': no route of the app declares it (svc permissions ls lists the stored ones)",
      );

      const unknownUser = await svc(['groups', 'add-user', 'readers', 'nobody']);
      expect(unknownUser.code).toBe(1);
      expect(errorLine(unknownUser)).toBe("svc: user 'nobody' does not exist");

      const notConfirmed = await svc(['groups', 'delete', 'readers'], { input: 'n\n' });
      expect(notConfirmed.code).toBe(1);
      expect(errorLine(notConfirmed)).toBe(
        'svc: not deleted: not confirmed (use --yes to skip the question)',
      );

      // log_format=json: the refusal is one JSON record like every other line of the process.
      const json = await svc(['groups', 'add-user', 'readers', 'nobody'], {
        env: { SVC_LOG_FORMAT: 'json' },
      });
      expect(json.code).toBe(1);
      const record = JSON.parse(json.stderr.trim().split('\n').at(-1)!);
      expect(record).toMatchObject({ logger: 'svc.cli', message: "user 'nobody' does not exist" });
      expect(String(record.level).toLowerCase()).toBe('error');
    },
    CLI_TIMEOUT_MS,
  );

  it(
    'sync refuses a codename the column cannot hold, and an app that cannot be loaded',
    async () => {
      const other = join(dir, 'bad');
      mkdirSync(other, { recursive: true });
      writeFileSync(
        join(other, '.env'),
        `SVC_SECRET_KEY=${TEST_SECRET_KEY}\nSVC_AUTH_DATABASE_URL=${database.url}\n`,
      );
      writeFileSync(
        join(other, 'main.mjs'),
        `import { createApp, defineRouter } from '@svc/core';
const r = defineRouter({ prefix: '/r' });
r.get('/', { permissions: ['${'x'.repeat(151)}'] }, async () => 1);
export const app = createApp({ routers: [r] });
`,
      );
      const res = await runCli(['--base-dir', other, 'permissions', 'sync']);
      expect(res.code).toBe(1);
      expect(errorLine(res)).toMatch(/^svc: cannot sync: codename 'x{40}…' is longer than 150 characters$/);

      const missing = await runCli(['--base-dir', other, 'permissions', 'sync', '--app', 'nope:app']);
      expect(missing.code).toBe(1);
      expect(errorLine(missing)).toMatch(/^svc: .*nope/);
    },
    CLI_TIMEOUT_MS,
  );
});
