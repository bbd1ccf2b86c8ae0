import { eq } from 'drizzle-orm';
import { enrolTotp } from '../../../../testing/mfa.js';
import { eventually } from '../../../../testing/smtp.js';
import {
  startWebhookReceiver,
  type ReceivedWebhook,
  type WebhookReceiver,
} from '../../../../testing/webhook-receiver.js';
import type { Orm } from '../kernel/db/database.js';
import type { OrganizationInvitationMail } from '../kernel/ports.js';
import { createOrganizationManager } from '../organizations/manage.js';
import type { CoreTables } from '../kernel/db/tables.js';
import { describeEachDatabase, startTestApp, type LoggedInClient, type TestApp } from '../testing/index.js';
import { toUserOut } from '../kernel/user-out.js';
import { createUserStore, type StoredUser } from '../users/store.js';
import type { WebhookTables } from './tables.js';

/**
 * SPEC-3 §3 "Event types": each change a receiver cares about emits its event with the SPEC's data and no
 * secret; and the outbox holds an event exactly when its change committed (the event is written in the change's
 * transaction).
 */
describeEachDatabase('Webhooks: events of every change, in the change’s transaction', (database) => {
  let app: TestApp;
  let admin: LoggedInClient;
  let receiver: WebhookReceiver;
  const secrets: string[] = [];
  const invitations: OrganizationInvitationMail[] = [];
  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    app = await startTestApp({
      database,
      settings: {
        webhooks_enabled: true,
        webhooks_allow_private_targets: true,
        registration_enabled: true,
        mfa_enabled: true,
        login_max_attempts: 2,
        organizations_enabled: true,
      },
      mailer: {
        sendPasswordReset: () => undefined,
        sendEmailVerification: () => undefined,
        sendInvitation: () => undefined,
        sendOrganizationInvitation: (mail) => void invitations.push(mail),
      },
    });
    admin = await app.loginAs(await app.createUser({ username: 'ev_admin', isSuperuser: true }));
    const res = await admin.post('/api/admin/webhooks', { url: receiver.url('/all'), events: ['*'] });
    expect(res.status).toBe(201);
    secrets.push(res.body.data.secret);
  });
  afterAll(async () => {
    await app.close();
    await receiver.close();
  });

  /** Waits for an event of `type` about `userId` (by `data.userId` or `data.id`). */
  async function eventFor(type: string, userId: string): Promise<ReceivedWebhook> {
    const find = () =>
      receiver
        .at('/all')
        .find((r) => r.json?.type === type && (r.json.data.userId ?? r.json.data.id) === userId);
    await eventually(() => find() !== undefined);
    return find()!;
  }
  const typesFor = (userId: string) =>
    receiver
      .at('/all')
      .filter((r) => (r.json?.data.userId ?? r.json?.data.id) === userId)
      .map((r) => r.json.type as string);

  it('emits user.created, user.updated, user.password_changed, user.login, session.revoked, user.deleted with the SPEC data', async () => {
    const reg = await app.post('/api/auth/register', {
      username: 'ev_carol',
      password: 'correct-horse-battery',
      email: 'carol@example.com',
    });
    expect(reg.status).toBe(201);
    const id = reg.body.data.id as string;
    const created = await eventFor('user.created', id);
    const shown = (await admin.get(`/api/admin/user/${id}`)).body.data;
    expect(created.json.data).toEqual(shown);
    expect(created.json).toEqual({
      id: created.headers['webhook-id'],
      type: 'user.created',
      timestamp: expect.stringMatching(/Z$/),
      data: shown,
    });

    const carol = await app.loginAs({ username: 'ev_carol', password: 'correct-horse-battery' });
    const login = await eventFor('user.login', id);
    expect(login.json.data).toEqual({
      userId: id,
      username: 'ev_carol',
      sessionId: expect.stringMatching(/^[0-9a-f-]{36}$/),
      method: 'password',
    });

    expect((await carol.patch('/api/auth/user', { firstName: 'Carol' })).status).toBe(200);
    const updated = await eventFor('user.updated', id);
    expect(updated.json.data).toMatchObject({ id, firstName: 'Carol', username: 'ev_carol' });

    const change = await carol.post('/api/auth/user/password', {
      currentPassword: 'correct-horse-battery',
      newPassword: 'another-horse-battery',
    });
    expect(change.status).toBe(204);
    const changed = await eventFor('user.password_changed', id);
    expect(changed.json.data).toEqual({ userId: id, username: 'ev_carol' });

    const again = await app.loginAs({ username: 'ev_carol', password: 'another-horse-battery' });
    const sessions = (await again.get('/api/auth/sessions')).body.data as { id: string }[];
    expect((await admin.delete(`/api/admin/user/${id}/sessions/${sessions[0]!.id}`)).status).toBe(204);
    const revoked = await eventFor('session.revoked', id);
    expect(revoked.json.data).toEqual({ userId: id, sessionId: sessions[0]!.id });

    expect((await admin.delete(`/api/admin/user/${id}`)).status).toBe(204);
    const deleted = await eventFor('user.deleted', id);
    expect(deleted.json.data).toEqual({ id, username: 'ev_carol' });

    // SPEC-3 §3: a password change emits only user.password_changed (no user.updated with it).
    const order = typesFor(id);
    expect(order.filter((t) => t === 'user.updated')).toHaveLength(1);
  });

  it('emits user.updated for an admin change of flags, user.password_changed alone for an admin password', async () => {
    const dave = await app.createUser({ username: 'ev_dave' });
    expect((await admin.patch(`/api/admin/user/${dave.id}`, { isStaff: true })).status).toBe(200);
    const updated = await eventFor('user.updated', dave.id);
    expect(updated.json.data).toMatchObject({ id: dave.id, isStaff: true });
    expect((await admin.patch(`/api/admin/user/${dave.id}`, { password: 'admin-set-password' })).status).toBe(
      200,
    );
    await eventFor('user.password_changed', dave.id);
    expect(typesFor(dave.id).filter((t) => t === 'user.updated')).toHaveLength(1);
  });

  it('emits user.locked when failed logins lock the account', async () => {
    const erin = await app.createUser({ username: 'ev_erin' });
    for (let i = 0; i < 2; i++) {
      await app.post('/api/auth/token', undefined, {
        form: { username: 'ev_erin', password: 'wrong-password' },
      });
    }
    const locked = await eventFor('user.locked', erin.id);
    expect(locked.json.data).toEqual({ userId: erin.id, username: 'ev_erin' });
  });

  it('emits mfa.enabled and mfa.disabled with the method, and permissions.changed', async () => {
    const frank = await app.createUser({ username: 'ev_frank' });
    await enrolTotp(app, frank);
    const enabled = await eventFor('mfa.enabled', frank.id);
    expect(enabled.json.data).toEqual({ userId: frank.id, method: 'totp' });
    expect((await admin.delete(`/api/admin/user/${frank.id}/mfa`)).status).toBe(204);
    const disabled = await eventFor('mfa.disabled', frank.id);
    expect(disabled.json.data).toEqual({ userId: frank.id, method: 'totp' });

    const group = await admin.post('/api/admin/permissions/groups', { name: 'ev_group', description: '' });
    expect(group.status).toBe(201);
    const put = await admin.put(`/api/admin/permissions/users/${frank.id}/groups`, {
      groupIds: [group.body.data.id],
    });
    expect(put.status).toBe(200);
    const perms = await eventFor('permissions.changed', frank.id);
    expect(perms.json.data).toEqual({ userId: frank.id });
  });

  it('emits the five organization events with the SPEC data, from routes, invitations and svc orgs; none for a refused change', async () => {
    const rt = app.app.runtime;
    const core = rt.tables.core as unknown as CoreTables;
    const people = async (username: string) => {
      const created = await app.createUser({ username, email: `${username}@example.com` });
      await rt.authDb.orm
        .update(core.user)
        .set({ emailVerifiedAt: new Date() })
        .where(eq(core.user.id, created.id));
      return { id: created.id, client: await app.loginAs(created) };
    };
    const owner = await people('ev_org_owner');
    const joiner = await people('ev_org_joiner');
    const cliMember = await app.createUser({ username: 'ev_org_cli' });

    const created = await owner.client.post('/api/organizations', { name: 'Hooks Inc', slug: 'ev-hooks' });
    expect(created.status).toBe(201);
    const organization = { id: created.body.data.id as string, slug: 'ev-hooks', name: 'Hooks Inc' };
    /** The received event of `type` about this organization (and `userId` for member events). */
    async function orgEvent(type: string, userId?: string): Promise<ReceivedWebhook> {
      const find = () =>
        receiver
          .at('/all')
          .find(
            (r) =>
              r.json?.type === type &&
              r.json.data.organization?.id === organization.id &&
              (userId === undefined || r.json.data.userId === userId),
          );
      await eventually(() => find() !== undefined);
      return find()!;
    }
    /** The outbox rows of this organization, as `type userId` (the rows are written in the change's transaction). */
    async function stored(): Promise<string[]> {
      const { webhookEvent: ev } = rt.tables.webhooks as unknown as WebhookTables;
      const rows = await rt.authDb.orm.select().from(ev);
      return rows
        .map((r) => ({
          type: r.type,
          data: JSON.parse(r.data) as { organization?: { id: string }; userId?: string },
        }))
        .filter((r) => r.data.organization?.id === organization.id)
        .map((r) => `${r.type} ${r.data.userId ?? '-'}`)
        .sort();
    }

    const createdEvent = await orgEvent('organization.created');
    expect(createdEvent.json).toEqual({
      id: createdEvent.headers['webhook-id'],
      type: 'organization.created',
      timestamp: expect.stringMatching(/Z$/),
      data: { organization },
    });
    // The owner's membership comes with the organization (SPEC-3 §2), and so does its event.
    expect((await orgEvent('organization.member_added', owner.id)).json.data).toEqual({
      organization,
      userId: owner.id,
      role: 'owner',
    });

    // Invitation accept adds the member.
    const invite = await owner.client.post(`/api/organizations/${organization.id}/invitations`, {
      email: 'ev_org_joiner@example.com',
      role: 'member',
    });
    expect(invite.status).toBe(201);
    const token = new URL(invitations.at(-1)!.url).searchParams.get('token')!;
    expect((await joiner.client.post('/api/organizations/invitations/accept', { token })).status).toBe(200);
    expect((await orgEvent('organization.member_added', joiner.id)).json.data).toEqual({
      organization,
      userId: joiner.id,
      role: 'member',
    });

    const promote = await owner.client.patch(`/api/organizations/${organization.id}/members/${joiner.id}`, {
      role: 'admin',
    });
    expect(promote.status).toBe(200);
    expect((await orgEvent('organization.member_updated', joiner.id)).json.data).toEqual({
      organization,
      userId: joiner.id,
      role: 'admin',
    });

    // `svc orgs add-member` writes through the same service with the standalone outbox.
    const manager = createOrganizationManager({
      db: rt.authDb,
      settings: rt.settings,
      webhooks: rt.ports.get('webhooks'),
    });
    await manager.service.addMember(organization.id, cliMember.id, 'member');
    expect((await orgEvent('organization.member_added', cliMember.id)).json.data).toEqual({
      organization,
      userId: cliMember.id,
      role: 'member',
    });

    // Refused changes (SPEC-3 §2 last-owner rule, decided inside the change's transaction) store no event.
    const before = await stored();
    const leave = await owner.client.delete(`/api/organizations/${organization.id}/members/${owner.id}`);
    expect(leave.status).toBe(400);
    expect(leave.body.detail[0].code).toBe('organization.last_owner');
    const demote = await owner.client.patch(`/api/organizations/${organization.id}/members/${owner.id}`, {
      role: 'member',
    });
    expect(demote.status).toBe(400);
    expect(demote.body.detail[0].code).toBe('organization.last_owner');
    const byAdmin = await joiner.client.delete(`/api/organizations/${organization.id}/members/${owner.id}`);
    expect(byAdmin.status).toBe(403);
    expect(await stored()).toEqual(before);

    expect(
      (await owner.client.delete(`/api/organizations/${organization.id}/members/${joiner.id}`)).status,
    ).toBe(204);
    expect((await orgEvent('organization.member_removed', joiner.id)).json.data).toEqual({
      organization,
      userId: joiner.id,
      role: 'admin',
    });

    expect((await owner.client.delete(`/api/organizations/${organization.id}`)).status).toBe(204);
    expect((await orgEvent('organization.deleted')).json.data).toEqual({ organization });

    expect(await stored()).toEqual(
      [
        'organization.created -',
        `organization.member_added ${owner.id}`,
        `organization.member_added ${joiner.id}`,
        `organization.member_updated ${joiner.id}`,
        `organization.member_added ${cliMember.id}`,
        `organization.member_removed ${joiner.id}`,
        'organization.deleted -',
      ].sort(),
    );
    for (const r of receiver.at('/all')) expect(r.body).not.toContain(token);
  });

  it('never puts a secret, hash, token or code into a body', async () => {
    const bodies = receiver.at('/all').map((r) => r.body);
    expect(bodies.length).toBeGreaterThan(8);
    for (const body of bodies) {
      expect(body).not.toMatch(/\$argon2|\$2[aby]\$|whsec_|svc_pat_|eyJ[A-Za-z0-9_-]{10,}/);
      expect(body).not.toMatch(/password(Hash)?"\s*:|secret|token"\s*:|"code"/i);
      expect(body).not.toContain('correct-horse-battery');
      expect(body).not.toContain('another-horse-battery');
      for (const secret of secrets) expect(body).not.toContain(secret.slice(6));
    }
  });

  describe('the outbox commits and rolls back with its change', () => {
    function tables() {
      const rt = app.app.runtime;
      return {
        core: rt.tables.core as unknown as CoreTables,
        hooks: rt.tables.webhooks as unknown as WebhookTables,
      };
    }
    async function eventsAbout(userId: string): Promise<string[]> {
      const { webhookEvent: ev } = tables().hooks;
      const rows = await app.app.runtime.authDb.orm.select().from(ev);
      return rows.filter((r) => (JSON.parse(r.data) as { id?: string }).id === userId).map((r) => r.type);
    }

    it('stores user.updated when the update commits, and nothing when its transaction fails after the change', async () => {
      const rt = app.app.runtime;
      const { core } = tables();
      const store = createUserStore(rt.authDb, core.user);
      const outbox = rt.ports.get('webhooks');
      const gina = await app.createUser({ username: 'ev_gina' });
      // The users store runs `record` in the update's transaction; failing it after the change and its event
      // must take both back.
      const record = (fail: boolean) => async (tx: Orm, row: StoredUser) => {
        await outbox.record(tx, 'user.updated', toUserOut(row));
        if (fail) throw new Error('the transaction fails after the change and its event');
      };
      await expect(store.update(gina.id, { firstName: 'Rolled' }, record(true))).rejects.toThrow(
        'fails after the change',
      );
      const [after] = await rt.authDb.orm.select().from(core.user).where(eq(core.user.id, gina.id));
      expect(after!.firstName).not.toBe('Rolled');
      expect(await eventsAbout(gina.id)).toEqual([]);

      await store.update(gina.id, { firstName: 'Committed' }, record(false));
      expect(await eventsAbout(gina.id)).toEqual(['user.updated']);
      const event = await eventFor('user.updated', gina.id);
      expect(event.json.data.firstName).toBe('Committed');
      await store.close();
    });
  });
});
