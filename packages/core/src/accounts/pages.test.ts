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
      {
        public_url: 'https://app.example.com',
        app_name: 'Notes',
        account_mail_cooldown_seconds: 0,
        log_level: 'INFO',
      },
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
    // One script only, the confirmation check, allowed by its hash; nothing else runs.
    expect(html.match(/<script/g)).toHaveLength(1);
    expect(shown.headers.get('content-security-policy')).toMatch(/script-src 'sha256-[A-Za-z0-9+/=]+';/);
    // Twice: a mail scanner's GET does not use the link up.
    expect((await page(`/account/reset-password?token=${encodeURIComponent(token)}`)).status).toBe(200);

    const refused = await submit(
      '/account/reset-password',
      { token, secret: 'short', confirm: 'short' },
      'de',
    );
    expect(refused.status).toBe(422);
    const refusedHtml = await refused.text();
    expect(refusedHtml).toContain('role="alert"');
    expect(refusedHtml).toContain('lang="de"');
    expect(refusedHtml).toContain('<form method="post">'); // the form comes back, the token still works

    const done = await submit('/account/reset-password', {
      token,
      secret: 'the-new-page-password',
      confirm: 'the-new-page-password',
    });
    expect(done.status).toBe(200);
    expect(await done.text()).toContain('Your password is set');
    const login = await app.post('/api/auth/token', undefined, {
      form: { username: user.username, password: 'the-new-page-password' },
    });
    expect(login.status).toBe(200);
    const again = await submit('/account/reset-password', {
      token,
      secret: 'yet-another-password',
      confirm: 'yet-another-password',
    });
    expect(again.status).toBe(400);
    // The access log shows the page's path, never its token.
    await eventually(() => log.lines.some((line) => line.includes('GET /account/reset-password ')));
    expect(log.lines.join('\n')).not.toContain(token);
  });

  it('names the application, links back to public_url, and asks for the password twice: a mismatch keeps the token', async () => {
    const user = await app.createUser({ username: 'twice_user', email: 'twice@example.com' });
    const token = await resetToken('twice@example.com');
    const html = await (await page(`/account/reset-password?token=${encodeURIComponent(token)}`)).text();
    expect(html).toContain('<header><p>Notes</p></header>');
    expect(html).toContain('<a href="https://app.example.com">Back to Notes</a>');
    // Both fields have a label bound to them (accessible names), and both are required.
    expect(html).toContain('<label for="secret">New password</label>');
    expect(html).toContain('<label for="confirm">Repeat the password</label>');
    expect(html).toContain(
      '<input id="confirm" name="confirm" type="password" autocomplete="new-password" required data-match="secret" data-mismatch="The two passwords do not match.">',
    );

    const mismatch = await submit(
      '/account/reset-password',
      { token, secret: 'the-first-entry-123', confirm: 'the-second-entry-123' },
      'de',
    );
    expect(mismatch.status).toBe(422);
    const mismatchHtml = await mismatch.text();
    expect(mismatchHtml).toContain('<p role="alert">Die beiden Passwörter stimmen nicht überein.</p>');
    expect(mismatchHtml).toContain('<form method="post">');
    expect(mismatchHtml).toContain('<a href="https://app.example.com">Zurück zu Notes</a>');
    const old = await app.post('/api/auth/token', undefined, {
      form: { username: user.username, password: 'the-first-entry-123' },
    });
    expect(old.status).toBe(401);
    // The token was not used up: the same link sets the password once both entries match.
    const done = await submit('/account/reset-password', {
      token,
      secret: 'the-first-entry-123',
      confirm: 'the-first-entry-123',
    });
    expect(done.status).toBe(200);
    const login = await app.post('/api/auth/token', undefined, {
      form: { username: user.username, password: 'the-first-entry-123' },
    });
    expect(login.status).toBe(200);
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
      confirm: 'whatever-password',
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
