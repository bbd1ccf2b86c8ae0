// The docs page's "Authorize" in a real browser (docs/mfa.md "Login with a second step"): the password flow against
// the login route, completed at /mfa/verify for a user with TOTP (SPEC "Authentication" 5).
import type { Locator, Page } from 'playwright-core';
import { startTestApp } from '@svc/core/testing';
import { enrolTotp, totpCode } from '../../testing/mfa.js';
import { chromiumSuite, describeInChromium, loopbackContext } from './browser.js';

/** Opens /docs/core, fills the password form of "Authorize" and submits it; returns the dialog's text then. */
async function authorize(page: Page, url: string, user: { username: string; password: string }) {
  await page.goto(`${url}/docs/core`);
  await page.locator('.auth-wrapper button.authorize').click();
  // The password flow's section of the dialog (the bearer-token section beside it has its own button).
  const form = page.locator('.auth-container').filter({ hasText: 'oauth2Password' });
  await form.locator('#oauth_username').fill(user.username);
  await form.locator('#oauth_password').fill(user.password);
  await form.locator('button.authorize').click();
  return form;
}

/** Runs GET /api/auth/user with "Try it out"; returns the status shown and the Authorization header sent. */
async function tryAuthUser(page: Page): Promise<{ status: string; authorization: string | undefined }> {
  const operation = page.locator('.opblock-get').filter({
    has: page.locator('.opblock-summary-path[data-path="/api/auth/user"]'),
  });
  await operation.locator('.opblock-summary').click();
  await operation.locator('button.try-out__btn').click();
  const sent = page.waitForRequest((r) => new URL(r.url()).pathname === '/api/auth/user');
  await operation.locator('button.execute').click();
  const request = await sent;
  const status =
    (await operation
      .locator('.live-responses-table tr.response .response-col_status')
      .first()
      .textContent()) ?? '';
  return { status: status.trim(), authorization: request.headers()['authorization'] };
}

/**
 * Once the dialog offers "Remove authorization" (the login done), closes it and checks that "Try it out" sends
 * the access token and gets 200; closes the page's context.
 */
async function expectSignedIn(page: Page, form: Locator): Promise<void> {
  await form.getByRole('button', { name: 'Remove authorization' }).waitFor();
  await page.locator('.modal-ux button.close-modal').click();
  const { status, authorization } = await tryAuthUser(page);
  expect(authorization).toMatch(/^Bearer [\w-]+\.[\w-]+\.[\w-]+$/);
  expect(status).toBe('200');
  await page.context().close();
}

describeInChromium('Swagger UI Authorize with MFA', () => {
  const suite = chromiumSuite({ settings: { mfa_enabled: true } });

  it('asks for the TOTP code, completes the login at /mfa/verify and sends the access token', async () => {
    const user = await suite.app.createUser({ username: 'totp-user' });
    const { secret } = await enrolTotp(suite.app, user);
    const page = await (await loopbackContext(suite.browser)).newPage();
    // The first code is wrong (five steps away): the page says so and asks again; the second is the next
    // step's code (the enrolment consumed the current one, and one step of drift is accepted).
    const prompts: string[] = [];
    page.on('dialog', (dialog) => {
      prompts.push(dialog.message());
      void dialog.accept(prompts.length === 1 ? totpCode(secret, 5) : totpCode(secret, 1));
    });
    const form = await authorize(page, suite.app.url, user);
    await form.getByRole('button', { name: 'Remove authorization' }).waitFor();
    expect(prompts).toHaveLength(2);
    expect(prompts[0]).toContain('multi-factor authentication');
    expect(prompts[1]).toContain('again');
    await page.locator('.modal-ux button.close-modal').click();

    const { status, authorization } = await tryAuthUser(page);
    expect(authorization).toMatch(/^Bearer [\w-]+\.[\w-]+\.[\w-]+$/);
    expect(status).toBe('200');
    const shown = await page
      .locator('.live-responses-table tr.response .response-col_description pre')
      .first()
      .textContent();
    expect(shown).toContain('"username": "totp-user"');
    await page.context().close();
  });

  it('refuses clearly when no code is given, and then sends no token at all', async () => {
    const user = await suite.app.createUser({ username: 'cancels' });
    await enrolTotp(suite.app, user);
    const page = await (await loopbackContext(suite.browser)).newPage();
    page.on('dialog', (dialog) => void dialog.dismiss());
    const form = await authorize(page, suite.app.url, user);
    const error = form.locator('.errors');
    await error.waitFor();
    expect(await error.textContent()).toContain('The second factor was not given');
    expect(await form.getByRole('button', { name: 'Remove authorization' }).count()).toBe(0);
    await page.locator('.modal-ux button.close-modal').click();

    const { status, authorization } = await tryAuthUser(page);
    expect(authorization).toBeUndefined();
    expect(status).toBe('401');
    await page.context().close();
  });

  it('unwraps enveloped token answers (wrap_auth_token_response) at both steps', async () => {
    const wrapped = await startTestApp({
      database: suite.database,
      settings: { mfa_enabled: true, wrap_auth_token_response: true },
    });
    try {
      const user = await wrapped.createUser({ username: 'wrapped' });
      const { secret } = await enrolTotp(wrapped, user);
      const page = await (await loopbackContext(suite.browser)).newPage();
      page.on('dialog', (dialog) => void dialog.accept(totpCode(secret, 1)));
      await expectSignedIn(page, await authorize(page, wrapped.url, user));
    } finally {
      await wrapped.close();
    }
  });

  it('still logs in a user without MFA in one step', async () => {
    const user = await suite.app.createUser({ username: 'plain' });
    const page = await (await loopbackContext(suite.browser)).newPage();
    page.on('dialog', (dialog) => void dialog.dismiss());
    await expectSignedIn(page, await authorize(page, suite.app.url, user));
  });
});
