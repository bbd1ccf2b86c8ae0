import { eq } from 'drizzle-orm';
import { eventually, startMailApp, stopMailApp, type TestSmtp } from '../../../../testing/smtp.js';
import type { CoreTables } from '../kernel/db/tables.js';
import { describeEachDatabase, type TestApp } from '../testing/index.js';
import type { AccountTables } from './tables.js';

const NEW_PASSWORD = 'a-brand-new-passphrase';

/**
 * SPEC-2 "Password reset" and "One-time account tokens", through the routes and a real SMTP server: the link
 * is read from the delivered mail, as a user would.
 */
describeEachDatabase('Password reset by mail', (database) => {
  let smtp: TestSmtp;
  let app: TestApp;
  let core: CoreTables;
  let accounts: AccountTables;

  beforeAll(async () => {
    ({ app, smtp } = await startMailApp(database, {
      public_url: 'https://app.example.com',
      account_mail_cooldown_seconds: 0,
      login_max_attempts: 3,
    }));
    core = app.app.runtime.tables.core;
    accounts = app.app.runtime.tables.accounts as unknown as AccountTables;
  });
  afterAll(async () => {
    await stopMailApp({ app, smtp });
  });

  const orm = () => app.app.runtime.authDb.orm;
  const mailsTo = (email: string) =>
    smtp.messages.filter((m) => m.envelopeTo.some((to) => to.toLowerCase() === email));

  /** Asks for a link and returns the token of the mail that arrives. */
  async function requestLink(email: string): Promise<string> {
    const before = mailsTo(email).length;
    const res = await app.post('/api/auth/password/forgot', { email });
    expect(res.status).toBe(202);
    await eventually(() => mailsTo(email).length > before);
    const text = mailsTo(email).at(-1)!.text ?? '';
    const url = /https:\/\/app\.example\.com\/account\/reset-password\?token=(\S+)/.exec(text);
    expect(url).not.toBeNull();
    return decodeURIComponent(url![1]!);
  }

  const reset = (token: string, newPassword = NEW_PASSWORD) =>
    app.post('/api/auth/password/reset', { token, newPassword });

  it('mails a link that sets the password once, ends the logins and lets the new password in', async () => {
    const user = await app.createUser({ username: 'reset_alice', email: 'Alice@Example.com' });
    const client = await app.loginAs(user);
    // Access tokens of the change's own second stay valid (SPEC "Authentication" 8 compares whole seconds).
    await new Promise((resolve) => setTimeout(resolve, 1050 - (Date.now() % 1000)));
    const token = await requestLink('alice@example.com'); // any letter case finds the account
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const res = await reset(token);
    expect(res.status).toBe(204);
    // Earlier tokens end: the access token (password_changed_at) and the refresh token.
    expect((await client.get('/api/auth/user')).status).toBe(401);
    expect((await app.post('/api/auth/refresh-token', { refresh_token: client.refreshToken })).status).toBe(
      401,
    );
    const login = await app.post('/api/auth/token', undefined, {
      form: { username: 'reset_alice', password: NEW_PASSWORD },
    });
    expect(login.status).toBe(200);
    // Used once.
    const again = await reset(token, 'yet-another-passphrase');
    expect(again.status).toBe(400);
    expect(again.body.detail[0]).toMatchObject({ code: 'auth.reset_token_invalid', loc: ['body', 'token'] });
    // Only the digest is stored.
    const rows = await orm().select().from(accounts.accountToken);
    expect(JSON.stringify(rows)).not.toContain(token);
  });

  it('answers 202 without a mail for unknown addresses and inactive accounts', async () => {
    await app.createUser({ username: 'reset_gone', email: 'gone@example.com', isActive: false });
    const before = smtp.messages.length;
    for (const email of ['nobody@example.com', 'gone@example.com', 'not-an-address']) {
      const res = await app.post('/api/auth/password/forgot', { email });
      expect(res.status).toBe(202);
      expect(res.text).toBe('');
    }
    // A mail to a known address still arrives after these: the others were not merely slower.
    await app.createUser({ username: 'reset_known', email: 'known@example.com' });
    await requestLink('known@example.com');
    expect(smtp.messages.slice(before).map((m) => m.envelopeTo[0])).toEqual(['known@example.com']);
  });

  it('keeps the token usable when the new password is refused', async () => {
    const user = await app.createUser({ username: 'reset_bob', email: 'bob@example.com' });
    const token = await requestLink('bob@example.com');
    const short = await reset(token, 'short');
    expect(short.status).toBe(422);
    expect(short.body.detail[0]).toMatchObject({
      code: 'auth.password_too_short',
      loc: ['body', 'newPassword'],
    });
    const same = await reset(token, user.password);
    expect(same.status).toBe(422);
    expect(same.body.detail[0]).toMatchObject({ code: 'auth.password_unchanged' });
    expect((await reset(token)).status).toBe(204);
  });

  it('lets exactly one of 20 parallel presentations of one token succeed', async () => {
    await app.createUser({ username: 'reset_race', email: 'race@example.com' });
    const token = await requestLink('race@example.com');
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => reset(token, `${NEW_PASSWORD}-${i}`)),
    );
    const statuses = results.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 204)).toHaveLength(1);
    expect(statuses.filter((s) => s === 400)).toHaveLength(19);
    const winner = results.findIndex((r) => r.status === 204);
    const login = await app.post('/api/auth/token', undefined, {
      form: { username: 'reset_race', password: `${NEW_PASSWORD}-${winner}` },
    });
    expect(login.status).toBe(200);
  });

  it('ends an unused link when a newer one is sent, when the password changes, and when it expires', async () => {
    const user = await app.createUser({ username: 'reset_carol', email: 'carol@example.com' });
    const first = await requestLink('carol@example.com');
    const second = await requestLink('carol@example.com');
    expect((await reset(first)).status).toBe(400); // superseded

    const client = await app.loginAs(user);
    const changed = await client.post('/api/auth/user/password', {
      currentPassword: user.password,
      newPassword: 'changed-by-the-user-1',
    });
    expect(changed.status).toBe(204);
    expect((await reset(second)).status).toBe(400); // the password changed after it was sent

    const third = await requestLink('carol@example.com');
    await orm()
      .update(accounts.accountToken)
      .set({ expiresAt: new Date(Date.now() - 1000) })
      .where(eq(accounts.accountToken.userId, user.id));
    expect((await reset(third)).status).toBe(400);
  });

  it('lifts a login lock and verifies the email', async () => {
    const user = await app.createUser({ username: 'reset_dave', email: 'dave@example.com' });
    for (let i = 0; i < 3; i++) {
      await app.post('/api/auth/token', undefined, {
        form: { username: 'reset_dave', password: 'wrong-password' },
      });
    }
    const [before] = await orm().select().from(core.user).where(eq(core.user.id, user.id));
    expect(before!.lockedUntil).not.toBeNull();
    // While locked even the right password gets the uniform 401 (SPEC "Account login lock").
    const locked = await app.post('/api/auth/token', undefined, {
      form: { username: 'reset_dave', password: user.password },
    });
    expect(locked.status).toBe(401);
    const token = await requestLink('dave@example.com');
    expect((await reset(token)).status).toBe(204);
    const [row] = await orm().select().from(core.user).where(eq(core.user.id, user.id));
    expect(row!.failedLoginCount).toBe(0);
    expect(row!.lockedUntil).toBeNull();
    expect(row!.emailVerifiedAt).toBeInstanceOf(Date);
    const login = await app.post('/api/auth/token', undefined, {
      form: { username: 'reset_dave', password: NEW_PASSWORD },
    });
    expect(login.status).toBe(200);
  });

  it('refuses malformed bodies with the uniform 422 and unknown tokens with 400', async () => {
    expect((await app.post('/api/auth/password/forgot', {})).status).toBe(422);
    expect((await app.post('/api/auth/password/reset', { token: 'x' })).status).toBe(422);
    const long = await app.post('/api/auth/password/reset', {
      token: 'x'.repeat(500),
      newPassword: NEW_PASSWORD,
    });
    expect(long.status).toBe(422);
    const unknown = await reset('A'.repeat(43));
    expect(unknown.status).toBe(400);
    expect(unknown.body.detail[0]).toMatchObject({ code: 'auth.reset_token_invalid' });
  });
});

describeEachDatabase('Password reset limits', (database) => {
  let smtp: TestSmtp;
  let app: TestApp;
  beforeAll(async () => {
    ({ app, smtp } = await startMailApp(database, {
      auth_rate_limit: 3,
      account_mail_cooldown_seconds: 3600,
    }));
  });
  afterAll(async () => {
    await stopMailApp({ app, smtp });
  });

  it('sends one mail per account and cooldown, and counts requests against auth_rate_limit', async () => {
    await app.createUser({ username: 'limit_erin', email: 'erin@example.com' });
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) {
      statuses.push((await app.post('/api/auth/password/forgot', { email: 'erin@example.com' })).status);
    }
    expect(statuses).toEqual([202, 202, 202, 429]);
    await eventually(() => smtp.messages.length >= 1);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(smtp.messages.filter((m) => m.envelopeTo.includes('erin@example.com'))).toHaveLength(1);
  });
});
