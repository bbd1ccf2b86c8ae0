import { eq } from 'drizzle-orm';
import { eventually, type TestSmtp, startMailApp, stopMailApp } from '../../../../testing/smtp.js';
import type { CoreTables } from '../kernel/db/tables.js';
import { describeEachDatabase, startTestApp, type TestApp } from '../testing/index.js';

/** SPEC-2 "Email verification", with links read from mail delivered to a real SMTP server. */
describeEachDatabase('Email verification by mail', (database) => {
  let smtp: TestSmtp;
  let app: TestApp;
  let core: CoreTables;

  beforeAll(async () => {
    ({ app, smtp } = await startMailApp(database, {
      public_url: 'https://app.example.com',
      registration_enabled: true,
      account_mail_cooldown_seconds: 60,
    }));
    core = app.app.runtime.tables.core;
  });
  afterAll(async () => {
    await stopMailApp({ app, smtp });
  });

  const mailsTo = (email: string) =>
    smtp.messages.filter((m) => m.envelopeTo.some((to) => to.toLowerCase() === email));
  async function linkTo(email: string, count = 1): Promise<string> {
    await eventually(() => mailsTo(email).length >= count);
    const text = mailsTo(email)[count - 1]!.text ?? '';
    const match = /https:\/\/app\.example\.com\/account\/verify-email\?token=(\S+)/.exec(text);
    expect(match).not.toBeNull();
    return decodeURIComponent(match![1]!);
  }
  const verifiedAt = async (id: string) =>
    (await app.app.runtime.authDb.orm.select().from(core.user).where(eq(core.user.id, id)))[0]!
      .emailVerifiedAt;

  it('sends a link after registration with an email; the link verifies the address once', async () => {
    const res = await app.post('/api/auth/register', {
      username: 'verify_reg',
      password: 'a-long-enough-password',
      email: 'reg@example.com',
    });
    expect(res.status).toBe(201);
    const token = await linkTo('reg@example.com');
    expect(await verifiedAt(res.body.data.id)).toBeNull();
    expect((await app.post('/api/auth/email/verify', { token })).status).toBe(204);
    expect(await verifiedAt(res.body.data.id)).toBeInstanceOf(Date);
    const again = await app.post('/api/auth/email/verify', { token });
    expect(again.status).toBe(400);
    expect(again.body.detail[0]).toMatchObject({ code: 'auth.verify_token_invalid', loc: ['body', 'token'] });
  });

  it('sends a link to a changed address and refuses an older link once the address changed again', async () => {
    const user = await app.createUser({ username: 'verify_change', email: 'first@example.com' });
    const client = await app.loginAs(user);
    const patch = await client.patch('/api/auth/user', {
      email: 'second@example.com',
      currentPassword: user.password,
    });
    expect(patch.status).toBe(200);
    const token = await linkTo('second@example.com');
    // The admin route changes it again: the link to the second address no longer verifies anything.
    const admin = await app.loginAs(await app.createUser({ username: 'verify_admin', isSuperuser: true }));
    expect((await admin.patch(`/api/admin/user/${user.id}`, { email: 'third@example.com' })).status).toBe(
      200,
    );
    // No second link within account_mail_cooldown_seconds (one link mail per purpose and account).
    expect((await app.post('/api/auth/email/verify', { token })).status).toBe(400);
    expect(await verifiedAt(user.id)).toBeNull();
  });

  it('answers verify-request with 202 and a link, then 429 with Retry-After, 409 once verified, 400 without email', async () => {
    const user = await app.createUser({ username: 'verify_req', email: 'req@example.com' });
    const client = await app.loginAs(user);
    const first = await client.post('/api/auth/user/email/verify-request');
    expect(first.status).toBe(202);
    expect(first.text).toBe('');
    const token = await linkTo('req@example.com');
    const soon = await client.post('/api/auth/user/email/verify-request');
    expect(soon.status).toBe(429);
    expect(soon.body.detail[0]).toMatchObject({ code: 'account.mail_cooldown' });
    expect(Number(soon.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await app.post('/api/auth/email/verify', { token })).status).toBe(204);
    const done = await client.post('/api/auth/user/email/verify-request');
    expect(done.status).toBe(409);
    expect(done.body.detail[0]).toMatchObject({ code: 'user.email_already_verified' });
    const none = await app.loginAs(await app.createUser({ username: 'verify_none' }));
    const noEmail = await none.post('/api/auth/user/email/verify-request');
    expect(noEmail.status).toBe(400);
    expect(noEmail.body.detail[0]).toMatchObject({ code: 'user.no_email' });
    expect((await app.post('/api/auth/user/email/verify-request')).status).toBe(401);
  });
});

describeEachDatabase('require_verified_email', (database) => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ database, settings: { require_verified_email: true } });
  });
  afterAll(() => app.close());
  const login = (username: string, password: string) =>
    app.post('/api/auth/token', undefined, { form: { username, password } });

  it('refuses an unverified account with 403 only after the password was verified; superusers pass', async () => {
    const user = await app.createUser({ username: 'unverified', email: 'u@example.com' });
    expect((await login('unverified', 'wrong-password')).status).toBe(401);
    const refused = await login('unverified', user.password);
    expect(refused.status).toBe(403);
    expect(refused.body.detail[0]).toMatchObject({ code: 'auth.email_unverified' });
    const root = await app.createUser({
      username: 'root_unverified',
      email: 'r@example.com',
      isSuperuser: true,
    });
    expect((await login('root_unverified', root.password)).status).toBe(200);
    const [row] = await app.app.runtime.authDb.orm
      .select()
      .from(app.app.runtime.tables.core.user)
      .where(eq(app.app.runtime.tables.core.user.id, user.id));
    // The wrong password counted; the refusal of the right one did not.
    expect(row!.failedLoginCount).toBe(1);
  });
});
