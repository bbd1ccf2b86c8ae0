import { randomBytes } from 'node:crypto';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { defineModule, defineRouter } from '@svc/core';
import { describeEachDatabase, startTestApp, TEST_SECRET_KEY, type TestApp } from '@svc/core/testing';
import { CLI_DIR, runCli, type CliResult } from '../../../../testing/cli-process.js';

// Each test starts the CLI several times; from the sources (through tsx, when dist is older) a start takes seconds.
const CLI_TIMEOUT_MS = 400_000;

/**
 * A project whose routes come from a module's setup (docs/modules.md), not from `createApp({ routers })`: once
 * as the project's main.mjs (what the CLI reads) and once here for the test server on the same database.
 */
const MAIN_MJS = `import { createApp, defineModule, defineRouter } from '@svc/core';
export const reportsModule = defineModule({
  name: 'reports',
  setup() {
    const reports = defineRouter({
      prefix: '/reports',
      permissions: ['reports.read'],
      permissionDescriptions: { 'reports.read': 'Read reports' },
    });
    reports.get('/', {}, async () => ['q1']);
    reports.post('/', { permissions: ['reports.write'] }, async () => ({ saved: true }));
    return { routers: [reports] };
  },
});
export const app = createApp({ modules: [reportsModule] });
`;

const reportsModule = defineModule({
  name: 'reports',
  setup() {
    const reports = defineRouter({
      prefix: '/reports',
      permissions: ['reports.read'],
      permissionDescriptions: { 'reports.read': 'Read reports' },
    });
    reports.get('/', {}, async () => ['q1']);
    reports.post('/', { permissions: ['reports.write'] }, async () => ({ saved: true }));
    return { routers: [reports] };
  },
});

/** The `svc: ...` lines of a run's stderr. */
const errorLine = (result: CliResult) =>
  result.stderr
    .split('\n')
    .filter((line) => line.startsWith('svc: '))
    .join('\n');

describeEachDatabase("svc permissions and svc groups read a module's routers", (database) => {
  let dir: string;
  let app: TestApp;
  const svc = (args: string[]) => runCli(['--base-dir', dir, ...args]);

  beforeAll(async () => {
    // Inside the repository, so that main.mjs resolves @svc/core (packages/cli/.tmp-test is git-ignored).
    dir = join(CLI_DIR, '.tmp-test', `permissions-modules-${randomBytes(6).toString('hex')}`);
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
    app = await startTestApp({ database, modules: [reportsModule] });
    await app.createUser({ username: 'root', password: 'root-password-123', isSuperuser: true });
  }, CLI_TIMEOUT_MS);
  afterAll(async () => {
    await app?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it(
    'declare what the applications listing shows; groups create stores a declared codename; --prune keeps those in use',
    async () => {
      const admin = await app.loginAs({ username: 'root', password: 'root-password-123' });
      const stored = async () => {
        const res = await admin.get('/api/admin/permissions/permissions');
        expect(res.status).toBe(200);
        return (res.body.data as { codename: string; description: string }[]).map((p) => [
          p.codename,
          p.description,
        ]);
      };
      // The one source of truth: the routes the app compiled, as the applications listing shows them.
      const listing = await admin.get('/api/admin/permissions/applications');
      expect(listing.status).toBe(200);
      const routes = listing.body.data as { path: string; methods: string[]; permissions: string[] }[];
      expect(routes.map((r) => [r.methods[0], r.path, r.permissions])).toEqual([
        ['GET', '/api/reports/', ['reports.read']],
        ['POST', '/api/reports/', ['reports.read', 'reports.write']],
      ]);

      // A codename the routes declare but not stored yet: groups create stores it, as sync would.
      const writers = await svc(['groups', 'create', 'writers', '-p', 'reports.write']);
      expect(writers).toMatchObject({
        code: 0,
        stdout:
          "added 1 permission the app's routes declare: reports.write\ncreated group 'writers' with reports.write\n",
      });
      expect(await stored()).toEqual([['reports.write', '']]);
      const undeclared = await svc(['groups', 'create', 'printers', '-p', 'reports.print']);
      expect(undeclared.code).toBe(1);
      expect(errorLine(undeclared)).toBe(
        "svc: no permission 'reports.print': no route of the app declares it (svc permissions ls lists the stored ones)",
      );
      expect((await svc(['groups', 'ls'])).stdout).not.toContain('printers');

      const synced = await svc(['permissions', 'sync']);
      expect(synced).toMatchObject({ code: 0, stdout: 'added 1 permission: reports.read\n' });
      expect(await stored()).toEqual([
        ['reports.read', 'Read reports'],
        ['reports.write', ''],
      ]);

      const readers = await svc(['groups', 'create', 'readers', '-p', 'reports.read']);
      expect(readers).toMatchObject({ code: 0, stdout: "created group 'readers' with reports.read\n" });
      const alice = await app.createUser({ username: 'alice' });
      expect((await svc(['groups', 'add-user', 'readers', 'alice'])).code).toBe(0);
      const client = await app.loginAs(alice);
      expect((await client.get('/api/reports')).status).toBe(200);

      // --prune deletes what no route declares, never the codenames the module's routes require.
      const dry = await svc(['permissions', 'sync', '--prune', '--dry-run']);
      expect(dry).toMatchObject({
        code: 0,
        stdout: 'permissions in sync: 2 codenames declared, all stored\n',
      });
      const pruned = await svc(['permissions', 'sync', '--prune']);
      expect(pruned).toMatchObject({
        code: 0,
        stdout: 'permissions in sync: 2 codenames declared, all stored\n',
      });
      expect(await stored()).toEqual([
        ['reports.read', 'Read reports'],
        ['reports.write', ''],
      ]);
      const groups = await svc(['groups', 'ls']);
      expect(groups.stdout.split('\n').slice(2, 4)).toEqual([
        'readers  1        reports.read   -',
        'writers  0        reports.write  -',
      ]);
      expect((await client.get('/api/reports')).status).toBe(200);
    },
    CLI_TIMEOUT_MS,
  );
});
