import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  describeEachDatabase,
  startTestApp,
  TEST_SECRET_KEY,
  type LoggedInClient,
  type TestApp,
} from '@svc/core/testing';
import { createOrganizationManager, type WebhookTables } from '@svc/core/internal';
import { eq } from 'drizzle-orm';
import { runCli, type CliResult } from '../../../../testing/cli-process.js';
import { eventually } from '../../../../testing/smtp.js';
import { startWebhookReceiver, type WebhookReceiver } from '../../../../testing/webhook-receiver.js';

const CLI_TIMEOUT_MS = 300_000;

/**
 * SPEC-3 §3: a change by any route or command emits its event, stored in the change's transaction. The
 * commands of `svc groups` that change what users hold emit `permissions.changed` for each user reached, and
 * `svc users` deactivations and deletions end organization invitations and emit the `organization.member_removed`
 * of the memberships a deletion takes (docs/organizations.md "Invitations end with the account").
 */
describeEachDatabase('svc groups and svc users: webhook events of their changes', (database) => {
  let dir: string;
  let app: TestApp;
  let admin: LoggedInClient;
  let receiver: WebhookReceiver;
  const svc = async (args: string[]): Promise<CliResult> => {
    const result = await runCli(['--base-dir', dir, ...args]);
    expect({ args, code: result.code, stderr: result.stderr }).toEqual({ args, code: 0, stderr: '' });
    return result;
  };
  /** The outbox rows of `type`, with their data. */
  async function stored(type: string): Promise<Record<string, any>[]> {
    const rt = app.app.runtime;
    const { webhookEvent: ev } = rt.tables.webhooks as unknown as WebhookTables;
    const rows = await rt.authDb.orm.select().from(ev).where(eq(ev.type, type));
    return rows.map((row) => JSON.parse(row.data) as Record<string, any>);
  }
  const changedFor = async (userId: string) =>
    (await stored('permissions.changed')).filter((data) => data.userId === userId).length;

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    app = await startTestApp({
      database,
      settings: { webhooks_enabled: true, webhooks_allow_private_targets: true, organizations_enabled: true },
      mailer: {
        sendPasswordReset: () => undefined,
        sendEmailVerification: () => undefined,
        sendInvitation: () => undefined,
        sendOrganizationInvitation: () => undefined,
      },
    });
    admin = await app.loginAs(await app.createUser({ username: 'cw_root', isSuperuser: true }));
    const hook = await admin.post('/api/admin/webhooks', { url: receiver.url('/cli'), events: ['*'] });
    expect(hook.status).toBe(201);
    dir = mkdtempSync(join(tmpdir(), 'svc-cli-hooks-'));
    writeFileSync(
      join(dir, '.env'),
      [
        `SVC_SECRET_KEY=${TEST_SECRET_KEY}`,
        `SVC_AUTH_DATABASE_URL=${database.url}`,
        'SVC_WEBHOOKS_ENABLED=true',
        'SVC_WEBHOOKS_ALLOW_PRIVATE_TARGETS=true',
        'SVC_LOG_LEVEL=ERROR',
        '',
      ].join('\n'),
    );
  }, CLI_TIMEOUT_MS);
  afterAll(async () => {
    await app?.close();
    await receiver?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it(
    'svc groups add-user, grant, revoke, remove-user and delete emit permissions.changed for each user reached',
    async () => {
      for (const codename of ['cw.read', 'cw.write'])
        expect((await admin.post('/api/admin/permissions/permissions', { codename })).status).toBe(201);
      const alice = await app.createUser({ username: 'cw_alice' });
      const bob = await app.createUser({ username: 'cw_bob' });
      const counts = async () => [await changedFor(alice.id), await changedFor(bob.id)];

      await svc(['groups', 'create', 'cw_readers', '-p', 'cw.read']);
      expect(await counts()).toEqual([0, 0]); // a new group has no member
      await svc(['groups', 'add-user', 'cw_readers', 'cw_alice']);
      await svc(['groups', 'add-user', 'cw_readers', 'cw_alice']); // already a member: no change
      await svc(['groups', 'add-user', 'cw_readers', 'cw_bob']);
      expect(await counts()).toEqual([1, 1]);
      await svc(['groups', 'grant', 'cw_readers', 'cw.write']);
      expect(await counts()).toEqual([2, 2]);
      await svc(['groups', 'revoke', 'cw_readers', 'cw.write']);
      expect(await counts()).toEqual([3, 3]);
      await svc(['groups', 'remove-user', 'cw_readers', 'cw_bob']);
      expect(await counts()).toEqual([3, 4]);
      await svc(['groups', 'delete', 'cw_readers', '--yes']);
      expect(await counts()).toEqual([4, 4]);
      // The running server delivers what the commands stored.
      const delivered = (userId: string) =>
        receiver
          .at('/cli')
          .filter((r) => r.json?.type === 'permissions.changed' && r.json.data.userId === userId).length;
      await eventually(() => delivered(alice.id) === 4 && delivered(bob.id) === 4);
    },
    CLI_TIMEOUT_MS,
  );

  it(
    'svc users create stores user.created with the user as GET /admin/user/{id} shows it',
    async () => {
      await svc([
        'users',
        'create',
        'cw_dana',
        '--password',
        'correct-horse-battery',
        '--email',
        'dana@example.com',
      ]);
      const [data] = (await stored('user.created')).filter((d) => d.username === 'cw_dana');
      expect(data).toBeDefined();
      expect(data).toEqual((await admin.get(`/api/admin/user/${data!.id}`)).body.data);
    },
    CLI_TIMEOUT_MS,
  );

  it(
    'svc users update --no-active ends the invitations the user sent; svc users delete emits organization.member_removed',
    async () => {
      const rt = app.app.runtime;
      const owner = await app.createUser({ username: 'cw_owner' });
      const carol = await app.createUser({ username: 'cw_carol' });
      const erin = await app.createUser({ username: 'cw_erin', email: 'cw_erin@example.com' });
      const ownerClient = await app.loginAs(owner);
      const created = await ownerClient.post('/api/organizations', { name: 'CLI Hooks', slug: 'cli-hooks' });
      expect(created.status).toBe(201);
      const organization = { id: created.body.data.id as string, slug: 'cli-hooks', name: 'CLI Hooks' };
      const manager = createOrganizationManager({ db: rt.authDb, settings: rt.settings });
      await manager.service.addMember(organization.id, carol.id, 'admin');
      await manager.service.addMember(organization.id, erin.id, 'member');
      const carolClient = await app.loginAs(carol);
      const invite = async (by: LoggedInClient, email: string) => {
        const res = await by.post(`/api/organizations/${organization.id}/invitations`, {
          email,
          role: 'member',
        });
        expect(res.status).toBe(201);
        return res.body.data.id as string;
      };
      const byCarol = await invite(carolClient, 'cw_friend@example.com');
      const toOther = await invite(ownerClient, 'cw_other@example.com');
      const pending = async () =>
        (
          (await ownerClient.get(`/api/organizations/${organization.id}/invitations`)).body.data as {
            id: string;
          }[]
        ).map((i) => i.id);
      expect(await pending()).toEqual(expect.arrayContaining([byCarol, toOther]));

      await svc(['users', 'update', 'cw_carol', '--no-active']);
      expect(await pending()).not.toContain(byCarol);
      expect(await pending()).toContain(toOther);

      await svc(['users', 'delete', 'cw_erin', '--yes']);
      expect((await stored('organization.member_removed')).filter((data) => data.userId === erin.id)).toEqual(
        [{ organization, userId: erin.id, role: 'member' }],
      );
      await eventually(() =>
        receiver
          .at('/cli')
          .some((r) => r.json?.type === 'organization.member_removed' && r.json.data.userId === erin.id),
      );
    },
    CLI_TIMEOUT_MS,
  );
});
