import { eq } from 'drizzle-orm';
import { dbOf } from '../../../../testing/mfa.js';
import type { OrganizationInvitationMail } from '../kernel/ports.js';
import { describeEachDatabase, startTestApp, type LoggedInClient, type TestApp } from '../testing/index.js';
import { organizationMailer } from '../../../../testing/mailer.js';

// docs/organizations.md "Invitations end with the account": deactivating or deleting a user ends the pending
// organization invitations addressed to their email (SPEC-3 §7 rule 4: a deactivation ends every unused link
// of the account; an organization invitation is a SPEC-2 one-time token) and those the user sent (their
// authority ends with the account, as their sessions and tokens do). Other invitations stay pending.

describeEachDatabase('Organization invitations end with the account', (database) => {
  let app: TestApp;
  let root: LoggedInClient;
  let owner: LoggedInClient;
  let orgId = '';
  const mails: OrganizationInvitationMail[] = [];

  async function person(username: string) {
    const created = await app.createUser({ username, email: `${username}@example.com` });
    const { orm, core } = dbOf(app);
    await orm.update(core.user).set({ emailVerifiedAt: new Date() }).where(eq(core.user.id, created.id));
    return created;
  }
  async function invite(by: LoggedInClient, email: string, role = 'member') {
    const res = await by.post(`/api/organizations/${orgId}/invitations`, { email, role });
    expect(res.status).toBe(201);
    return { id: res.body.data.id as string, token: new URL(mails.at(-1)!.url).searchParams.get('token')! };
  }
  const pendingIds = async () =>
    ((await owner.get(`/api/organizations/${orgId}/invitations`)).body.data as { id: string }[]).map(
      (i) => i.id,
    );
  const accept = async (client: LoggedInClient, token: string) => {
    const res = await client.post('/api/organizations/invitations/accept', { token });
    return res.status === 200 ? 200 : `${res.status} ${res.body.detail[0].code}`;
  };

  beforeAll(async () => {
    app = await startTestApp({
      database,
      mailer: organizationMailer(mails),
      settings: { organizations_enabled: true, self_delete_enabled: true },
    });
    root = await app.loginAs(await app.createUser({ username: 'ie_root', isSuperuser: true }));
    owner = await app.loginAs(await person('ie_owner'));
    const created = await owner.post('/api/organizations', { name: 'Ending Co', slug: 'ending-co' });
    expect(created.status).toBe(201);
    orgId = created.body.data.id;
  });
  afterAll(() => app.close());

  it('a deactivation ends the invitations to the user’s address and those the user sent; not others', async () => {
    const inviter = await person('ie_inviter');
    const invitee = await person('ie_invitee');
    const bystander = await person('ie_bystander');
    const reader = await person('ie_reader');
    const inviterClient = await app.loginAs(inviter);
    const add = await owner.post(`/api/organizations/${orgId}/invitations`, {
      email: 'ie_inviter@example.com',
      role: 'admin',
    });
    expect(add.status).toBe(201);
    expect(await accept(inviterClient, new URL(mails.at(-1)!.url).searchParams.get('token')!)).toBe(200);

    const sentByInviter = await invite(inviterClient, 'ie_bystander@example.com');
    const toInvitee = await invite(owner, 'IE_Invitee@Example.com');
    const unrelated = await invite(owner, 'ie_reader@example.com');
    expect(await pendingIds()).toEqual(
      expect.arrayContaining([sentByInviter.id, toInvitee.id, unrelated.id]),
    );

    // The invitee's account is deactivated: the invitation to its address (any letter case) ends.
    expect((await root.patch(`/api/admin/user/${invitee.id}`, { isActive: false })).status).toBe(200);
    // The inviter's account is deactivated: what they sent ends too.
    expect((await root.patch(`/api/admin/user/${inviter.id}`, { isActive: false })).status).toBe(200);
    const pending = await pendingIds();
    expect(pending).not.toContain(sentByInviter.id);
    expect(pending).not.toContain(toInvitee.id);
    expect(pending).toContain(unrelated.id);

    // Reactivating does not bring them back: the links are used up, like the account's other links.
    expect((await root.patch(`/api/admin/user/${invitee.id}`, { isActive: true })).status).toBe(200);
    expect(await accept(await app.loginAs(invitee), toInvitee.token)).toBe(
      '400 organization.invitation_invalid',
    );
    expect(await accept(await app.loginAs(bystander), sentByInviter.token)).toBe(
      '400 organization.invitation_invalid',
    );
    expect(await accept(await app.loginAs(reader), unrelated.token)).toBe(200);
  });

  it('a deletion ends the invitations to the deleted address and those the user sent, self-delete included', async () => {
    const sender = await person('ie_sender');
    const senderClient = await app.loginAs(sender);
    const add = await owner.post(`/api/organizations/${orgId}/invitations`, {
      email: 'ie_sender@example.com',
      role: 'admin',
    });
    expect(await accept(senderClient, new URL(mails.at(-1)!.url).searchParams.get('token')!)).toBe(200);
    expect(add.status).toBe(201);
    const late = await person('ie_late');
    const sent = await invite(senderClient, 'ie_late@example.com');
    const gone = await person('ie_gone');
    const toGone = await invite(owner, 'ie_gone@example.com');
    const kept = await invite(owner, 'ie_someone@example.com');

    // An administrator deletes ie_gone; ie_sender deletes their own account.
    expect((await root.delete(`/api/admin/user/${gone.id}`)).status).toBe(204);
    const self = await senderClient.delete('/api/auth/user', { body: { password: sender.password } });
    expect(self.status).toBe(204);
    const pending = await pendingIds();
    expect(pending).not.toContain(sent.id);
    expect(pending).not.toContain(toGone.id);
    expect(pending).toContain(kept.id);
    expect(await accept(await app.loginAs(late), sent.token)).toBe('400 organization.invitation_invalid');
  });
});
