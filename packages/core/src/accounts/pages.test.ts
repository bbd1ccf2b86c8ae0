import {
  eventually,
  logCapture,
  type TestSmtp,
  startMailApp,
  stopMailApp,
} from '../../../../testing/smtp.js';
import { describeEachDatabase, startTestApp, type TestApp } from '../testing/index.js';

/** SPEC-2 "Built-in account pages": plain HTML forms, no JavaScript, the token never consumed on GET. */
describeEachDatabase('Account pages', (database) => {
  let smtp: TestSmtp;
  let app: TestApp;
  const log = logCapture();

  beforeAll(async () => {
    ({ app, smtp } = await startMailApp(
      database,
      { public_url: 'https://app.example.com', account_mail_cooldown_seconds: 0, log_level: 'INFO' },
      { logStream: log.stream },
    ));
  });
  afterAll(async () => {
    await stopMailApp({ app, smtp });
  });

  async function resetToken(email: string): Promise<string> {
    const before = smtp.messages.length;
    expect((await app.post('/api/auth/password/forgot', { email })).status).toBe(202);
    await eventually(() => smtp.messages.length > before);
    const match = /reset-password\?token=(\S+)/.exec(smtp.messages.at(-1)!.text ?? '');
    return decodeURIComponent(match![1]!);
  }
  const page = (path: string, init: RequestInit = {}) =>
    fetch(`${app.url}${path}`, { redirect: 'manual', ...init });
  const submit = (path: string, fields: Record<string, string>, language = 'en') =>
    page(path, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'Accept-Language': language },
      body: new URLSearchParams(fields).toString(),
    });

  it('shows the reset form on GET without using the token, and sets the password on submit', async () => {
    const user = await app.createUser({ username: 'page_user', email: 'page@example.com' });
    const token = await resetToken('page@example.com');
    const shown = await page(`/account/reset-password?token=${encodeURIComponent(token)}`);
    expect(shown.status).toBe(200);
    expect(shown.headers.get('content-type')).toMatch(/^text\/html/);
    expect(shown.headers.get('cache-control')).toBe('no-store');
    expect(shown.headers.get('referrer-policy')).toBe('no-referrer');
    expect(shown.headers.get('content-security-policy')).toContain("default-src 'none'");
    const html = await shown.text();
    expect(html).toContain('<form method="post">');
    expect(html).not.toContain('<script');
    // Twice: a mail scanner's GET does not use the link up.
    expect((await page(`/account/reset-password?token=${encodeURIComponent(token)}`)).status).toBe(200);

    const refused = await submit('/account/reset-password', { token, secret: 'short' }, 'de');
    expect(refused.status).toBe(422);
    const refusedHtml = await refused.text();
    expect(refusedHtml).toContain('role="alert"');
    expect(refusedHtml).toContain('lang="de"');
    expect(refusedHtml).toContain('<form method="post">'); // the form comes back, the token still works

    const done = await submit('/account/reset-password', { token, secret: 'the-new-page-password' });
    expect(done.status).toBe(200);
    expect(await done.text()).toContain('Your password is set');
    const login = await app.post('/api/auth/token', undefined, {
      form: { username: user.username, password: 'the-new-page-password' },
    });
    expect(login.status).toBe(200);
    const again = await submit('/account/reset-password', { token, secret: 'yet-another-password' });
    expect(again.status).toBe(400);
    // The access log shows the page's path, never its token.
    await eventually(() => log.lines.some((line) => line.includes('GET /account/reset-password ')));
    expect(log.lines.join('\n')).not.toContain(token);
  });

  it('answers a link without a token, and an unknown token on submit, with a page that says so', async () => {
    const missing = await page('/account/verify-email');
    expect(missing.status).toBe(400);
    expect(await missing.text()).toContain('no token');
    const verify = await submit('/account/verify-email', { token: 'A'.repeat(43) });
    expect(verify.status).toBe(400);
    const accept = await submit('/account/accept-invitation', {
      token: 'A'.repeat(43),
      secret: 'whatever-password',
    });
    expect(accept.status).toBe(400);
    expect(await accept.text()).toContain('invitation');
  });
});

describeEachDatabase('Account pages switched off', (database) => {
  it('serves no page with account_pages_enabled false', async () => {
    const app = await startTestApp({ database, settings: { account_pages_enabled: false } });
    try {
      const res = await fetch(`${app.url}/account/reset-password?token=x`);
      expect(res.status).toBe(404);
    } finally {
      await app.close();
    }
  });
});
