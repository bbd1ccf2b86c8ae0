// The built-in reset page in a real browser (SPEC-2 "Built-in account pages", SPEC-3 §7 rule 2): Debian's Chromium
// opens the link of a delivered mail, types the new password, ticks "Also delete my personal access tokens" and
// submits the form; the tokens are gone afterwards, as `revokeTokens: true` does at the API.
import type { Browser } from 'playwright-core';
import { createSqliteDatabase } from '@svc/core/testing';
import { eventually, startMailApp, stopMailApp, type TestSmtp } from '../../testing/smtp.js';
import type { TestApp } from '../../packages/core/src/testing/index.js';
import { describeInChromium, launchBrowser, loopbackContext } from './browser.js';

describeInChromium('Reset page in Chromium', () => {
  const sqlite = createSqliteDatabase();
  let app: TestApp;
  let smtp: TestSmtp;
  let browser: Browser;
  beforeAll(async () => {
    ({ app, smtp } = await startMailApp(
      { dialect: 'sqlite', label: 'sqlite', url: sqlite.url },
      { account_mail_cooldown_seconds: 0, personal_tokens_enabled: true },
    ));
    browser = await launchBrowser();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await stopMailApp({ app, smtp });
    await sqlite.drop();
  });

  it('deletes the personal tokens when the revokeTokens box is ticked', async () => {
    const user = await app.createUser({ username: 'page_erin', email: 'erin@example.com' });
    const session = await app.loginAs(user);
    const created = await session.post('/api/auth/tokens', { name: 'ci' });
    expect(created.status).toBe(201);
    const pat = app.as(created.body.data.token);
    expect((await pat.get('/api/auth/user')).status).toBe(200);

    expect((await app.post('/api/auth/password/forgot', { email: 'erin@example.com' })).status).toBe(202);
    await eventually(() => smtp.messages.length > 0);
    const link = /http:\/\/\S+\/account\/reset-password\?token=\S+/.exec(smtp.messages.at(-1)!.text ?? '');
    expect(link).not.toBeNull();

    const context = await loopbackContext(browser);
    const page = await context.newPage();
    // The mail's link names public_url's default origin (this server): open the same path and query here.
    const { pathname, search } = new URL(link![0]);
    await page.goto(`${app.url}${pathname}${search}`);
    // Every password field of the form (a confirmation field, where the page has one, takes the same value).
    for (const field of await page.locator('input[type=password]').all()) {
      await field.fill('a-new-page-passphrase');
    }
    const box = page.getByLabel('Also delete my personal access tokens');
    expect(await box.isChecked()).toBe(false);
    await box.check();
    await page.locator('button[type=submit]').click();
    await page.waitForSelector('[role=status]');
    await context.close();

    const refused = await pat.get('/api/auth/user');
    expect(refused.status).toBe(401);
    expect(refused.body.detail[0].code).toBe('auth.token_invalid');
    const login = await app.loginAs({ username: 'page_erin', password: 'a-new-page-passphrase' });
    expect((await login.get('/api/auth/tokens')).body.data).toEqual([]);
  });
});
