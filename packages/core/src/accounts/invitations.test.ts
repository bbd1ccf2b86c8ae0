import { eq } from 'drizzle-orm';
import { eventually, type TestSmtp, startMailApp, stopMailApp } from '../../../../testing/smtp.js';
import type { CoreTables } from '../kernel/db/tables.js';
import { describeEachDatabase, type LoggedInClient, type TestApp } from '../testing/index.js';

const PASSWORD = 'invited-users-passphrase';

/** SPEC-2 "Invitations", with the link read from mail delivered to a real SMTP server. */
describeEachDatabase('Invitations', (database) => {
  let smtp: TestSmtp;
  let app: TestApp;
  let admin: LoggedInClient;
  let core: CoreTables;

  beforeAll(async () => {
    ({ app, smtp } = await startMailApp(database, {
      public_url: 'https://app.example.com',
      app_name: 'Notes',
    }));
    core = app.app.runtime.tables.core;
    admin = await app.loginAs(await app.createUser({ username: 'inviter', isSuperuser: true }));
  });
  afterAll(async () => {
    await stopMailApp({ app, smtp });
  });

  const mailsTo = (email: string) => smtp.messages.filter((m) => m.envelopeTo.includes(email));
  async function linkTo(email: string, count: number): Promise<string> {
    await eventually(() => mailsTo(email).length >= count);
    const text = mailsTo(email)[count - 1]!.text ?? '';
    const match = /https:\/\/app\.example\.com\/account\/accept-invitation\?token=(\S+)/.exec(text);
    expect(match).not.toBeNull();
    return decodeURIComponent(match![1]!);
  }
  const accept = (token: string, password = PASSWORD) =>
    app.post('/api/auth/invitation/accept', { token, password });
  const login = (username: string, password: string) =>
    app.post('/api/auth/token', undefined, { form: { username, password } });

  it('creates an active user without a usable password, mails the link, and accepting logs in', async () => {
    const group = await admin.post('/api/admin/permissions/groups', { name: 'invitees' });
    expect(group.status).toBe(201);
    const res = await admin.post('/api/admin/user/invite', {
      email: 'new@example.com',
      firstName: 'Nora',
      isStaff: true,
      groupIds: [group.body.data.id],
    });
    expect(res.status).toBe(201);
    const { username, email, firstName, isActive, isStaff, isSuperuser, emailVerifiedAt } = res.body.data;
    expect([username, email, firstName]).toEqual(['new@example.com', 'new@example.com', 'Nora']);
    // Active, staff as asked, never a superuser, the address not verified until the link is followed.
    expect([isActive, isStaff, isSuperuser, emailVerifiedAt]).toEqual([true, true, false, null]);
    const token = await linkTo('new@example.com', 1);
    expect(mailsTo('new@example.com')[0]!.subject).toBe('inviter invites you to Notes');
    // Before accepting, no password logs in (the uniform 401).
    expect((await login('new@example.com', '!invited')).status).toBe(401);

    const accepted = await accept(token);
    expect(accepted.status).toBe(200);
    expect(accepted.body).toEqual({
      access_token: expect.any(String),
      token_type: 'bearer',
      refresh_token: expect.any(String),
    });
    const me = await app.get('/api/auth/user', { token: accepted.body.access_token });
    expect(me.status).toBe(200);
    expect(me.body.data.emailVerifiedAt).not.toBeNull();
    const [link] = await app.app.runtime.authDb.orm
      .select()
      .from(core.userGroup)
      .where(eq(core.userGroup.userId, res.body.data.id));
    expect(link).toMatchObject({ groupId: group.body.data.id });
    expect((await login('new@example.com', PASSWORD)).status).toBe(200);
    // Used once; the account now has a password, so the address is no longer a pending invitation.
    expect((await accept(token)).status).toBe(400);
    const again = await admin.post('/api/admin/user/invite', { email: 'new@example.com' });
    expect(again.status).toBe(400);
    expect(again.body.detail[0]).toMatchObject({ code: 'user.email_exists', loc: ['body', 'email'] });
  });

  it('accepting after the address was changed logs in and leaves the new address unverified', async () => {
    const invited = await admin.post('/api/admin/user/invite', {
      email: 'moved@example.com',
      username: 'moved',
    });
    const token = await linkTo('moved@example.com', 1);
    const patched = await admin.patch(`/api/admin/user/${invited.body.data.id}`, {
      email: 'elsewhere@example.com',
    });
    expect(patched.status).toBe(200);
    const accepted = await accept(token);
    expect(accepted.status).toBe(200);
    const me = await app.get('/api/auth/user', { token: accepted.body.access_token });
    expect(me.body.data).toMatchObject({ email: 'elsewhere@example.com', emailVerifiedAt: null });
  });

  it('re-inviting a pending address answers 200 and replaces the earlier link', async () => {
    const first = await admin.post('/api/admin/user/invite', {
      email: 'twice@example.com',
      username: 'twice',
    });
    expect(first.status).toBe(201);
    const oldToken = await linkTo('twice@example.com', 1);
    const second = await admin.post('/api/admin/user/invite', { email: 'Twice@Example.com' });
    expect(second.status).toBe(200);
    expect(second.body.data.id).toBe(first.body.data.id);
    const newToken = await linkTo('twice@example.com', 2);
    expect((await accept(oldToken)).status).toBe(400);
    expect((await accept(newToken)).status).toBe(200);
  });

  it('keeps the token through a refused password and refuses taken usernames, bad input and non-superusers', async () => {
    await admin.post('/api/admin/user/invite', { email: 'policy@example.com' });
    const token = await linkTo('policy@example.com', 1);
    const short = await accept(token, 'short');
    expect(short.status).toBe(422);
    expect(short.body.detail[0]).toMatchObject({
      code: 'auth.password_too_short',
      loc: ['body', 'password'],
    });
    expect((await accept(token)).status).toBe(200);

    const taken = await admin.post('/api/admin/user/invite', {
      email: 'other@example.com',
      username: 'inviter',
    });
    expect(taken.status).toBe(400);
    expect(taken.body.detail[0]).toMatchObject({ code: 'auth.username_taken' });
    expect((await admin.post('/api/admin/user/invite', { email: 'not-an-email' })).status).toBe(422);
    const badGroup = await admin.post('/api/admin/user/invite', {
      email: 'g@example.com',
      groupIds: [999999],
    });
    expect(badGroup.status).toBe(400);
    const plain = await app.loginAs(await app.createUser({ username: 'plain_inviter' }));
    expect((await plain.post('/api/admin/user/invite', { email: 'x@example.com' })).status).toBe(403);
    const unknown = await accept('A'.repeat(43));
    expect(unknown.status).toBe(400);
    expect(unknown.body.detail[0]).toMatchObject({ code: 'auth.invitation_invalid' });
  });
});
