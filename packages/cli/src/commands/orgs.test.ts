import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeEachDatabase, startTestApp, TEST_SECRET_KEY, type TestApp } from '@svc/core/testing';
import { runCli, type CliResult } from '../../../../testing/cli-process.js';

const CLI_TIMEOUT_MS = 120_000;

/** SPEC-3 §2: `svc orgs` on a server's database, with the rules of the routes (few spawns: ~1 s each). */
describeEachDatabase('svc orgs', (database) => {
  let dir: string;
  let app: TestApp;
  const svc = (args: string[], input = ''): Promise<CliResult> =>
    runCli(['--base-dir', dir, ...args], { input });

  beforeAll(async () => {
    app = await startTestApp({ database, settings: { organizations_enabled: true } });
    dir = mkdtempSync(join(tmpdir(), 'svc-cli-orgs-'));
    writeFileSync(
      join(dir, '.env'),
      [
        `SVC_SECRET_KEY=${TEST_SECRET_KEY}`,
        `SVC_AUTH_DATABASE_URL=${database.url}`,
        'SVC_LOG_LEVEL=ERROR',
        '',
      ].join('\n'),
    );
  }, CLI_TIMEOUT_MS);
  afterAll(async () => {
    await app.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it(
    'creates, adds members, keeps the last owner, shows, and deletes; users delete keeps an owner too',
    async () => {
      const alice = await app.createUser({ username: 'cli_alice' });
      const bob = await app.createUser({ username: 'cli_bob' });
      const created = await svc(['orgs', 'create', 'cli-acme', '--name', 'Acme CLI', '--owner', 'cli_alice']);
      expect([created.code, created.stderr]).toEqual([0, '']);
      expect(created.stdout).toMatch(/^created organization 'cli-acme' \(.+\) owned by 'cli_alice'\n$/);
      const added = await svc(['orgs', 'add-member', 'cli-acme', 'cli_bob', '--role', 'admin']);
      expect(added.stdout).toBe("'cli_bob' is admin of 'cli-acme'\n");
      // The routes see what the CLI stored.
      const asBob = await app.loginAs(bob);
      const mine = await asBob.get('/api/organizations');
      expect(mine.body.data).toEqual([expect.objectContaining({ slug: 'cli-acme', role: 'admin' })]);

      const refused = await svc(['orgs', 'set-role', 'cli-acme', 'cli_alice', 'member']);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain('(organization.last_owner)');
      const deleteOwner = await svc(['users', 'delete', 'cli_alice', '--yes']);
      expect(deleteOwner.code).toBe(1);
      expect(deleteOwner.stderr).toContain("only owner of 'cli-acme'");
      expect(alice.id).toBeTruthy();

      const shown = await svc(['orgs', 'show', 'cli-acme']);
      expect(shown.stdout).toContain('2 members');
      expect(shown.stdout).toMatch(/cli_alice\s+owner/);
      expect(shown.stdout).toMatch(/cli_bob\s+admin/);

      const deleted = await svc(['orgs', 'delete', 'cli-acme', '--yes']);
      expect(deleted.stdout).toBe("deleted organization 'cli-acme'\n");
      expect((await asBob.get('/api/organizations')).body.data).toEqual([]);
    },
    CLI_TIMEOUT_MS,
  );
});
