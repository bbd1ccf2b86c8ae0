import { eq } from 'drizzle-orm';
import { enrolTotp } from '../../../../testing/mfa.js';
import { eventually } from '../../../../testing/smtp.js';
import {
  startWebhookReceiver,
  type ReceivedWebhook,
  type WebhookReceiver,
} from '../../../../testing/webhook-receiver.js';
import { createAccountStore } from '../accounts/store.js';
import type { AccountTables } from '../accounts/tables.js';
import type { Orm } from '../kernel/db/database.js';
import type { AccountMail, OrganizationInvitationMail } from '../kernel/ports.js';
import { createOrganizationManager } from '../organizations/manage.js';
import type { CoreTables } from '../kernel/db/tables.js';
import { describeEachDatabase, startTestApp, type LoggedInClient, type TestApp } from '../testing/index.js';
import { toUserOut } from '../kernel/user-out.js';
import { userUpdatedTogether } from '../kernel/db/user-update.js';
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
  const verifications: AccountMail[] = [];
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
        sendEmailVerification: (mail) => void verifications.push(mail),
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
    // The user as the admin route shows it (on PostgreSQL built from the row as read and the change).
    expect(updated.json.data).toEqual((await admin.get(`/api/admin/user/${id}`)).body.data);

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

  /** The outbox rows of `type` (written in each change's transaction), as the user ids their data names. */
  async function storedFor(type: string): Promise<string[]> {
    const rt = app.app.runtime;
    const { webhookEvent: ev } = rt.tables.webhooks as unknown as WebhookTables;
    const rows = await rt.authDb.orm.select().from(ev).where(eq(ev.type, type));
    return rows.map((r) => (JSON.parse(r.data) as { userId: string }).userId);
  }
  const countOf = (ids: string[], id: string) => ids.filter((x) => x === id).length;

  it('emits permissions.changed for every holder, direct or through a group, when a codename is renamed or deleted', async () => {
    const direct = await app.createUser({ username: 'ev_perm_direct' });
    const viaGroup = await app.createUser({ username: 'ev_perm_group' });
    const both = await app.createUser({ username: 'ev_perm_both' });
    const neither = await app.createUser({ username: 'ev_perm_none' });
    const created = await admin.post('/api/admin/permissions/permissions', { codename: 'ev.reports' });
    expect(created.status).toBe(201);
    const permId = created.body.data.id as number;
    const group = await admin.post('/api/admin/permissions/groups', {
      name: 'ev_reporters',
      description: '',
      permissionIds: [permId],
    });
    expect(group.status).toBe(201);
    for (const user of [viaGroup, both])
      expect(
        (
          await admin.put(`/api/admin/permissions/users/${user.id}/groups`, {
            groupIds: [group.body.data.id],
          })
        ).status,
      ).toBe(200);
    for (const user of [direct, both])
      expect(
        (await admin.put(`/api/admin/permissions/users/${user.id}/permissions`, { permissionIds: [permId] }))
          .status,
      ).toBe(200);
    const holders = [direct, viaGroup, both];
    const before = await storedFor('permissions.changed');

    // A description alone changes nobody's permissions: no event.
    const described = await admin.put(`/api/admin/permissions/permissions/${permId}`, { description: 'x' });
    expect(described.status).toBe(200);
    expect(await storedFor('permissions.changed')).toEqual(before);

    const renamed = await admin.put(`/api/admin/permissions/permissions/${permId}`, {
      codename: 'ev.reports.read',
    });
    expect(renamed.status).toBe(200);
    const afterRename = await storedFor('permissions.changed');
    // Exactly one event per holder (the one holding it twice too), none for the others.
    for (const user of holders) expect(countOf(afterRename, user.id) - countOf(before, user.id)).toBe(1);
    expect(countOf(afterRename, neither.id)).toBe(0);
    expect(afterRename.length - before.length).toBe(3);

    expect((await admin.delete(`/api/admin/permissions/permissions/${permId}`)).status).toBe(204);
    const afterDelete = await storedFor('permissions.changed');
    for (const user of holders) expect(countOf(afterDelete, user.id) - countOf(before, user.id)).toBe(2);
    expect(afterDelete.length - before.length).toBe(6);
    const delivered = () =>
      receiver
        .at('/all')
        .filter((r) => r.json?.type === 'permissions.changed' && r.json.data.userId === both.id);
    await eventually(() => delivered().length >= 3);
    expect(delivered()[0]!.json.data).toEqual({ userId: both.id });
  });

  it('stores many events of one change in a bounded number of statements, and none when its transaction fails', async () => {
    const rt = app.app.runtime;
    const outbox = rt.ports.get('webhooks');
    const { webhookDelivery: d, webhookEvent: ev } = rt.tables.webhooks as unknown as WebhookTables;
    // More than one multi-row insert's worth (INSERT_CHUNK rows), for a permission held by many users.
    const ids = Array.from(
      { length: 1201 },
      (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
    );
    const ofIds = (rows: { data: string }[]) =>
      rows.filter((r) => ids.includes((JSON.parse(r.data) as { userId: string }).userId));
    let statements = 0;
    let inside = { events: 0, deliveries: 0 };
    await expect(
      rt.authDb.transaction(async (tx) => {
        // Counted: one read of the endpoints and ceil(1201 / 500) inserts of events and of deliveries.
        const counting = new Proxy(tx, {
          get(target, key, proxy) {
            if (key === 'select' || key === 'insert') statements++;
            return Reflect.get(target, key, proxy) as unknown;
          },
        });
        await outbox.recordEach(
          counting,
          'permissions.changed',
          ids.map((userId) => ({ userId })),
        );
        const events = ofIds(await tx.select().from(ev).where(eq(ev.type, 'permissions.changed')));
        const deliveries = await tx
          .select({ id: d.id, data: ev.data })
          .from(d)
          .innerJoin(ev, eq(ev.id, d.eventId))
          .where(eq(ev.type, 'permissions.changed'));
        inside = { events: events.length, deliveries: ofIds(deliveries).length };
        // The change fails after its events: they go with it (and no receiver is flooded by this test).
        throw new Error('the change fails after its events');
      }),
    ).rejects.toThrow('fails after its events');
    expect(statements).toBe(1 + 3 + 3);
    // One endpoint subscribes (this suite's `["*"]`): one event and one delivery per user.
    expect(inside).toEqual({ events: 1201, deliveries: 1201 });
    expect(ofIds(await rt.authDb.orm.select().from(ev))).toEqual([]);
  });

  it('emits user.updated when an email verification completes, with emailVerifiedAt set', async () => {
    const vera = await app.createUser({ username: 'ev_vera', email: 'vera@example.com' });
    const client = await app.loginAs(vera);
    expect((await client.post('/api/auth/user/email/verify-request')).status).toBe(202);
    await eventually(() => verifications.some((m) => m.email === 'vera@example.com'));
    const mail = verifications.find((m) => m.email === 'vera@example.com')!;
    const token = new URL(mail.url).searchParams.get('token')!;
    expect(typesFor(vera.id)).not.toContain('user.updated');
    expect((await app.post('/api/auth/email/verify', { token })).status).toBe(204);
    const updated = await eventFor('user.updated', vera.id);
    const shown = (await admin.get(`/api/admin/user/${vera.id}`)).body.data;
    expect(shown.emailVerifiedAt).not.toBeNull();
    expect(updated.json.data).toEqual(shown);
    // The token is used once: a second presentation changes nothing and emits nothing.
    expect((await app.post('/api/auth/email/verify', { token })).status).toBe(400);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(typesFor(vera.id).filter((t) => t === 'user.updated')).toHaveLength(1);
  });

  it('emits organization.member_removed for each membership a user deletion takes, in the deletion’s transaction', async () => {
    const rt = app.app.runtime;
    const core = rt.tables.core as unknown as CoreTables;
    const owner = await app.createUser({ username: 'ev_del_owner' });
    const leaver = await app.createUser({ username: 'ev_del_member' });
    const ownerClient = await app.loginAs(owner);
    const manager = createOrganizationManager({ db: rt.authDb, settings: rt.settings });
    const orgs: { id: string; slug: string; name: string }[] = [];
    for (const [slug, name, role] of [
      ['ev-del-one', 'Del One', 'member'],
      ['ev-del-two', 'Del Two', 'admin'],
    ] as const) {
      const res = await ownerClient.post('/api/organizations', { name, slug });
      expect(res.status).toBe(201);
      orgs.push({ id: res.body.data.id, slug, name });
      await manager.service.addMember(res.body.data.id, leaver.id, role);
    }
    const removedOf = async () => {
      const { webhookEvent: ev } = rt.tables.webhooks as unknown as WebhookTables;
      const rows = await rt.authDb.orm.select().from(ev).where(eq(ev.type, 'organization.member_removed'));
      return rows.map((r) => JSON.parse(r.data)).filter((data) => data.userId === leaver.id);
    };

    // A deletion whose transaction fails after the change stores none of the events and keeps the memberships.
    const store = createUserStore(rt.authDb, core.user);
    const organizations = rt.ports.get('organizations');
    await expect(
      store.delete(
        leaver.id,
        async () => {
          throw new Error('the deletion fails after the change');
        },
        (tx) => organizations.beforeUserDeleted(tx, leaver.id),
      ),
    ).rejects.toThrow('fails after the change');
    expect(await removedOf()).toEqual([]);
    expect((await ownerClient.get(`/api/organizations/${orgs[0]!.id}/members`)).body.data.total).toBe(2);
    await store.close();

    expect((await admin.delete(`/api/admin/user/${leaver.id}`)).status).toBe(204);
    expect(await removedOf()).toEqual(
      expect.arrayContaining([
        { organization: orgs[0], userId: leaver.id, role: 'member' },
        { organization: orgs[1], userId: leaver.id, role: 'admin' },
      ]),
    );
    expect(await removedOf()).toHaveLength(2);
    await eventually(
      () =>
        receiver
          .at('/all')
          .filter((r) => r.json?.type === 'organization.member_removed' && r.json.data.userId === leaver.id)
          .length === 2,
    );
    // The owner's memberships stay; the organizations lost one member each.
    for (const org of orgs)
      expect((await ownerClient.get(`/api/organizations/${org.id}/members`)).body.data.total).toBe(1);
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

    it('an admin edit stores the user as GET shows it, in one statement on PostgreSQL, nothing when it fails', async () => {
      const rt = app.app.runtime;
      const { core } = tables();
      const outbox = rt.ports.get('webhooks');
      // The one-statement path exists where it saves round trips (PostgreSQL); SQLite's transaction is local.
      expect(outbox.recordWith !== undefined).toBe(database.dialect === 'pg');
      const hana = await app.createUser({ username: 'ev_hana', email: 'hana@example.com' });
      expect(
        (await admin.patch(`/api/admin/user/${hana.id}`, { lastName: 'Edited', isStaff: true })).status,
      ).toBe(200);
      const shown = (await admin.get(`/api/admin/user/${hana.id}`)).body.data;
      expect((await eventFor('user.updated', hana.id)).json.data).toEqual(shown);

      // The row as read matches the guard (timestamps included; the field being set may differ, as when
      // another edit of it came in between): PostgreSQL takes the one statement, without the transaction's
      // `record`; SQLite the transaction.
      const store = createUserStore(rt.authDb, core.user);
      const [read] = await rt.authDb.orm.select().from(core.user).where(eq(core.user.id, hana.id));
      await rt.authDb.orm
        .update(core.user)
        .set({ lastLoginAt: new Date('2026-01-01T00:00:00.123Z'), emailVerifiedAt: new Date() })
        .where(eq(core.user.id, hana.id));
      const [row] = await rt.authDb.orm.select().from(core.user).where(eq(core.user.id, hana.id));
      expect(row!.lastLoginAt).not.toEqual(read!.lastLoginAt);
      let transactionRecorded = 0;
      const direct = await store.update(
        hana.id,
        { firstName: 'Direct' },
        async (tx, updated) => {
          transactionRecorded++;
          await outbox.record(tx, 'user.updated', toUserOut(updated));
        },
        userUpdatedTogether(outbox, { ...row!, firstName: 'Edited meanwhile' }, { firstName: 'Direct' }),
      );
      expect(direct).toMatchObject({ done: { firstName: 'Direct' } });
      expect(transactionRecorded).toBe(database.dialect === 'pg' ? 0 : 1);
      expect(await eventsAbout(hana.id)).toEqual(['user.updated', 'user.updated']);
      const [afterDirect] = await rt.authDb.orm.select().from(core.user).where(eq(core.user.id, hana.id));

      // A change the database refuses (an address another user holds) stores neither the change nor its event:
      // one statement is atomic. (The path exists on PostgreSQL only; SQLite's refusal is the transaction's.)
      if (database.dialect === 'pg') {
        await app.createUser({ username: 'ev_ida', email: 'ida@example.com' });
        await expect(
          store.update(
            hana.id,
            { email: 'ida@example.com' },
            () => Promise.resolve(),
            userUpdatedTogether(outbox, afterDirect!, { email: 'ida@example.com' }),
          ),
        ).rejects.toThrow();
        expect(await eventsAbout(hana.id)).toEqual(['user.updated', 'user.updated']);
      }

      // The row changed since it was read (a login stamped lastLoginAt): the event is built from the row as it
      // is, not from the stale one.
      const stale = { ...afterDirect!, lastLoginAt: null };
      await rt.authDb.orm
        .update(core.user)
        .set({ lastLoginAt: new Date('2026-01-02T03:04:05.678Z') })
        .where(eq(core.user.id, hana.id));
      const changes = { firstName: 'Fresh' };
      const outcome = await store.update(
        hana.id,
        changes,
        (tx, updated) => outbox.record(tx, 'user.updated', toUserOut(updated)),
        userUpdatedTogether(outbox, stale, changes),
      );
      expect(outcome).toMatchObject({ done: { firstName: 'Fresh' } });
      await eventually(() =>
        receiver.at('/all').some((r) => r.json?.type === 'user.updated' && r.json.data.firstName === 'Fresh'),
      );
      const fresh = receiver
        .at('/all')
        .find((r) => r.json?.type === 'user.updated' && r.json.data.firstName === 'Fresh')!;
      expect(fresh.json.data.lastLoginAt).toBe('2026-01-02T03:04:05.678Z');
      expect(await eventsAbout(hana.id)).toEqual(['user.updated', 'user.updated', 'user.updated']);
      await store.close();
    });

    it('an invitation or a registration stores user.created as GET shows it, in one statement on PostgreSQL, nothing when refused', async () => {
      const rt = app.app.runtime;
      const { core } = tables();
      const outbox = rt.ports.get('webhooks');
      // Through the routes: an invitation without groups (one statement on PostgreSQL), one with a group (its
      // transaction) and a registration; each event is the user as the admin route shows it.
      const group = await admin.post('/api/admin/permissions/groups', { name: 'ev_invited' });
      expect(group.status).toBe(201);
      const created: string[] = [];
      for (const body of [
        { email: 'ev-jade@example.com', firstName: 'Jade' },
        { email: 'ev-kim@example.com', groupIds: [group.body.data.id] },
      ]) {
        const invited = await admin.post('/api/admin/user/invite', body);
        expect(invited.status).toBe(201);
        created.push(invited.body.data.id);
      }
      const registered = await app.post('/api/auth/register', {
        username: 'ev_lou',
        password: 'correct-horse-battery',
        email: 'lou@example.com',
      });
      expect(registered.status).toBe(201);
      created.push(registered.body.data.id);
      for (const id of created) {
        const shown = (await admin.get(`/api/admin/user/${id}`)).body.data;
        expect((await eventFor('user.created', id)).json.data).toEqual(shown);
        expect(await eventsAbout(id)).toEqual(['user.created']);
      }

      // The store's choice: on PostgreSQL the insert carries its event (the transaction's `record` is not
      // called); SQLite runs the transaction.
      const accounts = createAccountStore(rt.authDb, rt.tables.accounts as unknown as AccountTables, core);
      let transactionRecorded = 0;
      const record = async (tx: Orm, row: StoredUser) => {
        transactionRecorded++;
        await outbox.record(tx, 'user.created', toUserOut(row));
      };
      const values = { firstName: '', lastName: '', isStaff: false, groupIds: [] };
      const mia = await accounts.insertInvited(
        { ...values, username: 'ev_mia', email: 'mia@example.com' },
        record,
        outbox.recordWith,
      );
      expect(transactionRecorded).toBe(database.dialect === 'pg' ? 0 : 1);
      expect(mia).toMatchObject({ username: 'ev_mia', email: 'mia@example.com', isActive: true });
      expect((await eventFor('user.created', mia.id)).json.data).toEqual(
        (await admin.get(`/api/admin/user/${mia.id}`)).body.data,
      );

      // An insert the database refuses (the name is taken) stores no event and no user: one statement is atomic.
      const before = await rt.authDb.orm.select().from(tables().hooks.webhookEvent);
      // Refused whatever the driver rejects with (what is stored is the point, checked below).
      const refused = await accounts
        .insertInvited(
          { ...values, username: 'ev_mia', email: 'mia-again@example.com' },
          record,
          outbox.recordWith,
        )
        .then(
          () => 'inserted',
          () => 'refused',
        );
      expect(refused).toBe('refused');
      expect(await rt.authDb.orm.select().from(tables().hooks.webhookEvent)).toHaveLength(before.length);
      expect(
        await rt.authDb.orm.select().from(core.user).where(eq(core.user.email, 'mia-again@example.com')),
      ).toEqual([]);
    });
  });
});
