import { eq } from 'drizzle-orm';
import { eventually, startMailApp, stopMailApp, type TestSmtp } from '../../../../testing/smtp.js';
import { describeEachDatabase, type TestApp } from '../testing/index.js';
import type { AccountTables } from './tables.js';

const NEW_PASSWORD = 'a-brand-new-passphrase';

/**
 * SPEC-3 §7 rule 4 ("Links end with the address they were sent to"), through the routes and a real SMTP
 * server: a change of email ends the reset and verification links, a deactivation ends every link (also
 * after the account is active again), and a reset asked for a pending invitation mails a new invitation.
 */
describeEachDatabase('Account links end with their address', (database) => {
  let smtp: TestSmtp;
  let app: TestApp;
  let accounts: AccountTables;
  let admin: Awaited<ReturnType<TestApp['loginAs']>>;

  beforeAll(async () => {
    ({ app, smtp } = await startMailApp(database, {
      public_url: 'https://app.example.com',
      account_mail_cooldown_seconds: 0,
    }));
    accounts = app.app.runtime.tables.accounts as unknown as AccountTables;
    admin = await app.loginAs(await app.createUser({ username: 'links_root', isSuperuser: true }));
  });
  afterAll(async () => {
    await stopMailApp({ app, smtp });
  });

  const mailsTo = (email: string) =>
    smtp.messages.filter((m) => m.envelopeTo.some((to) => to.toLowerCase() === email));

  /** Waits for the next mail to `email` and returns the token of its link to `page`. */
  async function nextLink(email: string, page: string, before: number): Promise<string> {
    await eventually(() => mailsTo(email).length > before);
    const text = mailsTo(email).at(-1)!.text ?? '';
    const url = new RegExp(`https://app\\.example\\.com/account/${page}\\?token=(\\S+)`).exec(text);
    if (!url) throw new Error(`no ${page} link in: ${text}`);
    return decodeURIComponent(url[1]!);
  }

  async function resetLink(email: string): Promise<string> {
    const before = mailsTo(email).length;
    expect((await app.post('/api/auth/password/forgot', { email })).status).toBe(202);
    return nextLink(email, 'reset-password', before);
  }

  /** Invites a new user and returns their id and the token of the mailed invitation link. */
  async function invite(email: string, username: string): Promise<{ id: string; token: string }> {
    const before = mailsTo(email).length;
    const invited = await admin.post('/api/admin/user/invite', { email, username });
    expect(invited.status).toBe(201);
    return { id: invited.body.data.id as string, token: await nextLink(email, 'accept-invitation', before) };
  }

  const reset = (token: string) => app.post('/api/auth/password/reset', { token, newPassword: NEW_PASSWORD });
  const unusedTokens = async (userId: string) =>
    (await app.app.runtime.authDb.orm.select().from(accounts.accountToken)).filter(
      (row) => row.userId === userId && row.usedAt === null,
    );

  function expectResetRefused(res: Awaited<ReturnType<typeof reset>>) {
    expect(res.status).toBe(400);
    expect(res.body.detail[0]).toMatchObject({ code: 'auth.reset_token_invalid', loc: ['body', 'token'] });
  }

  it('a self-service email change ends the reset link mailed to the old address', async () => {
    const user = await app.createUser({ username: 'links_self', email: 'self-old@example.com' });
    const token = await resetLink('self-old@example.com');
    const client = await app.loginAs(user);
    const changed = await client.patch('/api/auth/user', {
      email: 'self-new@example.com',
      currentPassword: user.password,
    });
    expect(changed.status).toBe(200);
    expectResetRefused(await reset(token));
    // The old password still logs in: the link changed nothing.
    expect((await app.loginAs(user)).accessToken).toBeTruthy();
  });

  it('an admin email change ends the reset and verification links of the user', async () => {
    const user = await app.createUser({ username: 'links_admin', email: 'admin-old@example.com' });
    const client = await app.loginAs(user);
    const before = mailsTo('admin-old@example.com').length;
    expect((await client.post('/api/auth/user/email/verify-request')).status).toBe(202);
    const verify = await nextLink('admin-old@example.com', 'verify-email', before);
    const token = await resetLink('admin-old@example.com');
    const changed = await admin.patch(`/api/admin/user/${user.id}`, { email: 'admin-new@example.com' });
    expect(changed.status).toBe(200);
    expectResetRefused(await reset(token));
    // Back to the old address: the links sent to it before the change stay ended.
    const back = await admin.patch(`/api/admin/user/${user.id}`, { email: 'admin-old@example.com' });
    expect(back.status).toBe(200);
    expectResetRefused(await reset(token));
    const verified = await app.post('/api/auth/email/verify', { token: verify });
    expect(verified.status).toBe(400);
    expect(verified.body.detail[0]).toMatchObject({ code: 'auth.verify_token_invalid' });
    // Only the new verification link (for the address as it is now) is left.
    await eventually(() => mailsTo('admin-old@example.com').length > before + 2);
    const left = await unusedTokens(user.id);
    expect(left.map((row) => row.purpose)).toEqual(['email_verify']);
  });

  it("a deactivation ends the user's links: the reset link fails after reactivation too", async () => {
    const user = await app.createUser({ username: 'links_paused', email: 'paused@example.com' });
    const token = await resetLink('paused@example.com');
    expect((await admin.patch(`/api/admin/user/${user.id}`, { isActive: false })).status).toBe(200);
    expect(await unusedTokens(user.id)).toEqual([]);
    expect((await admin.patch(`/api/admin/user/${user.id}`, { isActive: true })).status).toBe(200);
    expectResetRefused(await reset(token));
  });

  it('a deactivation ends a pending invitation; its link fails after reactivation', async () => {
    const { id, token } = await invite('invited-paused@example.com', 'links_invited_paused');
    expect((await admin.patch(`/api/admin/user/${id}`, { isActive: false })).status).toBe(200);
    expect((await admin.patch(`/api/admin/user/${id}`, { isActive: true })).status).toBe(200);
    const accepted = await app.post('/api/auth/invitation/accept', { token, password: NEW_PASSWORD });
    expect(accepted.status).toBe(400);
    expect(accepted.body.detail[0]).toMatchObject({ code: 'auth.invitation_invalid' });
  });

  it('an email change keeps a pending invitation; inviting the corrected address replaces its link', async () => {
    const { id, token } = await invite('typo@example.com', 'links_invited_typo');
    // SPEC-3 §7 rule 4 ends the reset and verification links at an email change and an invitation only at a
    // deactivation. An administrator correcting a mistyped address invites the new one (SPEC-2 "Invitations":
    // a new invitation replaces the pending one), and the link mailed to the old address stops working.
    expect((await admin.patch(`/api/admin/user/${id}`, { email: 'right@example.com' })).status).toBe(200);
    expect(await unusedTokens(id)).toContainEqual(expect.objectContaining({ purpose: 'invitation' }));
    expect((await admin.post('/api/admin/user/invite', { email: 'right@example.com' })).status).toBe(200);
    const stale = await app.post('/api/auth/invitation/accept', { token, password: NEW_PASSWORD });
    expect(stale.status).toBe(400);
    expect(stale.body.detail[0]).toMatchObject({ code: 'auth.invitation_invalid' });
    // The new address also gets the verification mail of an email change, in either order.
    const invitation = () =>
      mailsTo('right@example.com').find((m) => (m.text ?? '').includes('/account/accept-invitation?token='));
    await eventually(() => invitation() !== undefined);
    const renewed = decodeURIComponent(/accept-invitation\?token=(\S+)/.exec(invitation()!.text!)![1]!);
    const accepted = await app.post('/api/auth/invitation/accept', {
      token: renewed,
      password: NEW_PASSWORD,
    });
    expect(accepted.status).toBe(200);
  });

  it('a reset asked for a pending invitation mails a new invitation, not a reset link', async () => {
    const first = mailsTo('invited-forgot@example.com').length;
    const invited = await admin.post('/api/admin/user/invite', {
      email: 'invited-forgot@example.com',
      username: 'links_invited_forgot',
    });
    expect(invited.status).toBe(201);
    const original = await nextLink('invited-forgot@example.com', 'accept-invitation', first);
    const before = mailsTo('invited-forgot@example.com').length;
    expect(
      (await app.post('/api/auth/password/forgot', { email: 'invited-forgot@example.com' })).status,
    ).toBe(202);
    const renewed = await nextLink('invited-forgot@example.com', 'accept-invitation', before);
    const mail = mailsTo('invited-forgot@example.com').at(-1)!;
    expect(mail.text).not.toContain('/account/reset-password');
    expect(await unusedTokens(invited.body.data.id)).toMatchObject([{ purpose: 'invitation' }]);
    // The new invitation replaces the first one and works.
    const stale = await app.post('/api/auth/invitation/accept', { token: original, password: NEW_PASSWORD });
    expect(stale.status).toBe(400);
    const accepted = await app.post('/api/auth/invitation/accept', {
      token: renewed,
      password: NEW_PASSWORD,
    });
    expect(accepted.status).toBe(200);
    const row = await app.app.runtime.authDb.orm
      .select()
      .from(app.app.runtime.tables.core.user)
      .where(eq(app.app.runtime.tables.core.user.id, invited.body.data.id));
    expect(row[0]!.emailVerifiedAt).not.toBeNull();
  });
});
