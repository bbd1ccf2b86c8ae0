import { eq } from 'drizzle-orm';
import { eventsUrl, openSocket, ticketOf, type TestSocket } from '../../../../testing/events.js';
import { dbOf } from '../../../../testing/mfa.js';
import type { OrganizationInvitationMail } from '../kernel/ports.js';
import { describeEachDatabase, startTestApp, type LoggedInClient, type TestApp } from '../testing/index.js';
import { organizationMailer } from '../../../../testing/mailer.js';

// SPEC-3 §2: "Deleting a user deletes their memberships", and every removed membership is a change that emits
// `organization_membership_changed` `{organizationId, userId, role: null}` to that user and superusers, as a
// removal or a leaving does; whichever route deletes the account (the admin route or `DELETE /auth/user`).

describeEachDatabase('A user’s deletion announces each membership it removes', (database) => {
  let app: TestApp;
  let root: LoggedInClient;
  let owner: LoggedInClient;
  let sharedOrg = '';
  const mails: OrganizationInvitationMail[] = [];

  async function person(username: string) {
    const created = await app.createUser({ username, email: `${username}@example.com` });
    const { orm, core } = dbOf(app);
    await orm.update(core.user).set({ emailVerifiedAt: new Date() }).where(eq(core.user.id, created.id));
    return app.loginAs(created);
  }

  /** A user who owns an organization of their own and is an admin of the shared one: two memberships. */
  async function memberOfTwo(username: string): Promise<{ client: LoggedInClient; orgs: string[] }> {
    const client = await person(username);
    const own = await client.post('/api/organizations', {
      name: `${username} Co`,
      slug: `${username.replaceAll('_', '-')}-co`,
    });
    expect(own.status).toBe(201);
    const invited = await owner.post(`/api/organizations/${sharedOrg}/invitations`, {
      email: `${username}@example.com`,
      role: 'admin',
    });
    expect(invited.status).toBe(201);
    const token = new URL(mails.at(-1)!.url).searchParams.get('token')!;
    expect((await client.post('/api/organizations/invitations/accept', { token })).status).toBe(200);
    return { client, orgs: [own.body.data.id as string, sharedOrg] };
  }

  async function removalsFor(socket: TestSocket, userId: string, orgs: string[]) {
    for (const organizationId of orgs)
      await socket.waitFor(
        (f) =>
          f.type === 'organization_membership_changed' &&
          f.data.userId === userId &&
          f.data.organizationId === organizationId &&
          f.data.role === null,
      );
    return socket.frames
      .filter((f) => f.type === 'organization_membership_changed' && f.data.userId === userId)
      .map((f) => f.data)
      .filter((d) => d.role === null);
  }

  beforeAll(async () => {
    app = await startTestApp({
      database,
      mailer: organizationMailer(mails),
      settings: {
        organizations_enabled: true,
        self_delete_enabled: true,
        events_broadcast_enabled: true,
        events_allow_query_token: true,
      },
    });
    root = await app.loginAs(await app.createUser({ username: 'ude_root', isSuperuser: true }));
    owner = await person('ude_owner');
    const created = await owner.post('/api/organizations', { name: 'Shared Co', slug: 'ude-shared' });
    expect(created.status).toBe(201);
    sharedOrg = created.body.data.id;
  });
  afterAll(() => app.close());

  it('DELETE /admin/user/{id} emits organization_membership_changed with role null for every membership', async () => {
    const gone = await memberOfTwo('ude_admin_gone');
    const socket = await openSocket(eventsUrl(app.url, { ticket: await ticketOf(root) }));
    try {
      expect((await root.delete(`/api/admin/user/${gone.client.user.id}`)).status).toBe(204);
      const removals = await removalsFor(socket, gone.client.user.id, gone.orgs);
      expect(removals).toHaveLength(2);
      expect(new Set(removals.map((d) => d.organizationId))).toEqual(new Set(gone.orgs));
    } finally {
      await socket.close();
    }
    const members = await owner.get(`/api/organizations/${sharedOrg}/members?search=ude_admin_gone`);
    expect(members.body.data.total).toBe(0);
  });

  it('DELETE /auth/user (self-delete) emits it too, to the superusers', async () => {
    const gone = await memberOfTwo('ude_self_gone');
    const socket = await openSocket(eventsUrl(app.url, { ticket: await ticketOf(root) }));
    try {
      const res = await gone.client.request('DELETE', '/api/auth/user', {
        body: { password: gone.client.user.password },
      });
      expect(res.status).toBe(204);
      const removals = await removalsFor(socket, gone.client.user.id, gone.orgs);
      expect(removals).toHaveLength(2);
    } finally {
      await socket.close();
    }
  });

  it('a refused deletion (last owner) emits nothing and keeps the memberships', async () => {
    const keeper = await person('ude_keeper');
    const org = await keeper.post('/api/organizations', { name: 'Kept Co', slug: 'ude-kept' });
    const other = await memberOfTwo('ude_other');
    // A second member makes the keeper the last owner of an organization with members.
    const invited = await keeper.post(`/api/organizations/${org.body.data.id}/invitations`, {
      email: 'ude_other@example.com',
      role: 'member',
    });
    const token = new URL(mails.at(-1)!.url).searchParams.get('token')!;
    expect(invited.status).toBe(201);
    expect((await other.client.post('/api/organizations/invitations/accept', { token })).status).toBe(200);
    const socket = await openSocket(eventsUrl(app.url, { ticket: await ticketOf(root) }));
    try {
      const res = await root.delete(`/api/admin/user/${keeper.user.id}`);
      expect([res.status, res.body.detail[0].code]).toEqual([400, 'organization.last_owner']);
      // A later event on the same socket: anything the refused deletion emitted would have arrived first.
      expect((await root.delete(`/api/admin/user/${other.client.user.id}`)).status).toBe(204);
      await removalsFor(socket, other.client.user.id, [...other.orgs, org.body.data.id]);
      expect(
        socket.frames.filter(
          (f) => f.type === 'organization_membership_changed' && f.data.userId === keeper.user.id,
        ),
      ).toEqual([]);
    } finally {
      await socket.close();
    }
  });
});
