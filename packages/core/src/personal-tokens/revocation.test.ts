import { eq } from 'drizzle-orm';
import { dbOf } from '../../../../testing/mfa.js';
import { eventually, startMailApp, stopMailApp, type TestSmtp } from '../../../../testing/smtp.js';
import { describeEachDatabase, type LoggedInClient, type TestApp, type TestUser } from '../testing/index.js';
import type { PersonalTokenTables } from './tables.js';

/**
 * SPEC-3 §7 rule 2, "revoking everything means everything": the administrator's revoke-all and the mailed
 * password reset delete the personal tokens on request (`includeTokens`, `revokeTokens`, the reset page's
 * checkbox), and keep them otherwise (SPEC-2: a password change does not end them).
 */
describeEachDatabase('Personal access tokens: revoking everything', (database) => {
  let smtp: TestSmtp;
  let app: TestApp;
  let admin: LoggedInClient;
  beforeAll(async () => {
    ({ app, smtp } = await startMailApp(database, {
      public_url: 'https://app.example.com',
      account_mail_cooldown_seconds: 0,
      personal_tokens_enabled: true,
    }));
    admin = await app.loginAs(await app.createUser({ username: 'rv_admin', isSuperuser: true }));
  });
  afterAll(async () => {
    await stopMailApp({ app, smtp });
  });

  async function storedTokens(userId: string): Promise<number> {
    const t = (app.app.runtime.tables['personal-tokens'] as unknown as PersonalTokenTables).personalToken;
    return (await dbOf(app).orm.select({ id: t.id }).from(t).where(eq(t.userId, userId))).length;
  }

  /** A user with a logged-in session and two personal tokens (one never expiring is a superuser's only). */
  async function victim(name: string): Promise<{ user: TestUser; client: LoggedInClient; pats: string[] }> {
    const user = await app.createUser({ username: name, email: `${name}@example.com` });
    const client = await app.loginAs(user);
    const pats: string[] = [];
    for (const label of ['ci', 'laptop']) {
      const res = await client.post('/api/auth/tokens', { name: label });
      expect(res.status).toBe(201);
      pats.push(res.body.data.token);
    }
    return { user, client, pats };
  }

  async function expectTokensWork(pats: string[], works: boolean) {
    for (const pat of pats) {
      const res = await app.as(pat).get('/api/auth/user');
      expect(res.status).toBe(works ? 200 : 401);
      if (!works) expect(res.body.detail[0].code).toBe('auth.token_invalid');
    }
  }

  async function resetToken(email: string): Promise<string> {
    const before = smtp.messages.length;
    expect((await app.post('/api/auth/password/forgot', { email })).status).toBe(202);
    await eventually(() => smtp.messages.length > before);
    const match = /reset-password\?token=(\S+)/.exec(smtp.messages.at(-1)!.text ?? '');
    return decodeURIComponent(match![1]!);
  }

  it('DELETE /admin/user/{user_id}/sessions?includeTokens=true deletes the personal tokens too', async () => {
    const kept = await victim('rv_kept');
    expect((await admin.delete(`/api/admin/user/${kept.user.id}/sessions`)).status).toBe(204);
    expect((await kept.client.get('/api/auth/user')).status).toBe(401);
    await expectTokensWork(kept.pats, true);
    expect(await storedTokens(kept.user.id)).toBe(2);

    const all = await victim('rv_all');
    const res = await admin.delete(`/api/admin/user/${all.user.id}/sessions?includeTokens=true`);
    expect(res.status).toBe(204);
    const session = await all.client.get('/api/auth/user');
    expect(session.body.detail[0].code).toBe('auth.session_revoked');
    await expectTokensWork(all.pats, false);
    expect(await storedTokens(all.user.id)).toBe(0);

    const bad = await admin.delete(`/api/admin/user/${all.user.id}/sessions?includeTokens=yes`);
    expect(bad.status).toBe(422);
    expect(bad.body.detail[0]).toMatchObject({
      code: 'request.validation_error',
      loc: ['query', 'includeTokens'],
    });
  });

  it('POST /auth/password/reset with revokeTokens: true deletes the personal tokens; without it they stay', async () => {
    const kept = await victim('rv_reset_kept');
    const plain = await app.post('/api/auth/password/reset', {
      token: await resetToken('rv_reset_kept@example.com'),
      newPassword: 'a-brand-new-passphrase',
    });
    expect(plain.status).toBe(204);
    await expectTokensWork(kept.pats, true);
    expect(await storedTokens(kept.user.id)).toBe(2);

    const all = await victim('rv_reset_all');
    const token = await resetToken('rv_reset_all@example.com');
    // A refused password deletes nothing (and keeps the link usable).
    const refused = await app.post('/api/auth/password/reset', {
      token,
      newPassword: 'short',
      revokeTokens: true,
    });
    expect(refused.status).toBe(422);
    expect(await storedTokens(all.user.id)).toBe(2);
    const res = await app.post('/api/auth/password/reset', {
      token,
      newPassword: 'a-brand-new-passphrase',
      revokeTokens: true,
    });
    expect(res.status).toBe(204);
    expect((await all.client.get('/api/auth/user')).status).toBe(401);
    await expectTokensWork(all.pats, false);
    expect(await storedTokens(all.user.id)).toBe(0);
  });

  it('offers the revokeTokens checkbox on the reset page, and deletes the tokens when it is ticked', async () => {
    const all = await victim('rv_page');
    const token = await resetToken('rv_page@example.com');
    const shown = await fetch(`${app.url}/account/reset-password?token=${encodeURIComponent(token)}`);
    const html = await shown.text();
    expect(html).toMatch(/<input type="checkbox" name="revokeTokens" value="true">/);
    expect(html).toContain('Also delete my personal access tokens');

    const done = await fetch(`${app.url}/account/reset-password`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        token,
        secret: 'the-new-page-password',
        confirm: 'the-new-page-password',
        revokeTokens: 'true',
      }).toString(),
    });
    expect(done.status).toBe(200);
    await expectTokensWork(all.pats, false);
    expect(await storedTokens(all.user.id)).toBe(0);

    // Unticked, the form sends no field: the tokens stay.
    const kept = await victim('rv_page_kept');
    const second = await fetch(`${app.url}/account/reset-password`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        token: await resetToken('rv_page_kept@example.com'),
        secret: 'the-new-page-password',
        confirm: 'the-new-page-password',
      }).toString(),
    });
    expect(second.status).toBe(200);
    await expectTokensWork(kept.pats, true);
    expect(await storedTokens(kept.user.id)).toBe(2);
  });
});
