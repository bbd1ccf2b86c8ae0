// The admin console under settings other than the console suites' own (docs/admin-console.md "Sign-in"):
// SPEC-3 §6 serves it by default (`admin_console_enabled` true) with "Sign-in by password", while
// `cookie_sessions_enabled` is false by default, so the console then holds bearer tokens in the tab; and SPEC's
// `api_v1_prefix` moves every API route, so the console and @svc/client call the API under it.
import type { BrowserContext, Page } from 'playwright-core';
import { startTestApp, type StartTestAppOptions, type TestApp, type TestUser } from '@svc/core/testing';
import { chromiumSuite, describeInChromium } from './browser.js';
import { consoleContext } from './console-helpers.js';

describeInChromium('admin console: sign-in under other settings', () => {
  const suite = chromiumSuite({ cookieSessions: true });
  let root: TestUser;

  beforeAll(async () => {
    root = await suite.app.createUser({ username: 'root', isSuperuser: true });
    await suite.app.createUser({ username: 'plain-bob' });
  });

  /** An app on the suite's database with `settings`, and a tab where root signed in and sees the users list. */
  async function signedInOn(
    settings: StartTestAppOptions['settings'],
  ): Promise<{ app: TestApp; context: BrowserContext; tab: Page }> {
    const app = await startTestApp({ database: suite.database, settings });
    const { context } = await consoleContext(suite.browser, app.url);
    const tab = await context.newPage();
    expect((await tab.goto(`${app.url}/admin/`))?.status()).toBe(200);
    await tab.getByLabel('Username').fill(root.username);
    await tab.getByLabel('Password').fill(root.password);
    await tab.getByRole('button', { name: 'Sign in', exact: true }).click();
    const shown = await Promise.race([
      tab
        .getByRole('heading', { name: 'Users', level: 1 })
        .waitFor()
        .then(() => 'users'),
      tab
        .getByRole('alert')
        .first()
        .waitFor()
        .then(() => 'alert'),
    ]);
    expect({ shown, alerts: await tab.getByRole('alert').allTextContents() }).toEqual({
      shown: 'users',
      alerts: [],
    });
    await tab.getByRole('cell', { name: 'plain-bob', exact: true }).waitFor();
    return { app, context, tab };
  }

  it('signs in with the default settings: bearer tokens in the tab, kept over a reload, not shared', async () => {
    const { app, context, tab } = await signedInOn({});
    try {
      // No cookie session: the access and refresh tokens are this tab's, in its sessionStorage only.
      expect((await context.cookies()).map((cookie) => cookie.name)).toEqual([]);
      const stored = await tab.evaluate(() => ({
        local: (globalThis as any).localStorage.length as number,
        session: Object.keys((globalThis as any).sessionStorage) as string[],
      }));
      expect(stored).toEqual({ local: 0, session: ['svc.admin-console'] });
      await tab.reload();
      await tab.getByRole('cell', { name: 'plain-bob', exact: true }).waitFor();
      // Another tab of the same browser starts at the sign-in form.
      const other = await context.newPage();
      await other.goto(`${app.url}/admin/`);
      await other.getByRole('button', { name: 'Sign in', exact: true }).waitFor();
      expect(await other.getByRole('heading', { name: 'Users', level: 1 }).count()).toBe(0);
      // Signing out forgets the pair.
      await tab.getByRole('button', { name: 'Sign out' }).click();
      await tab.getByRole('button', { name: 'Sign in', exact: true }).waitFor();
      expect(await tab.evaluate(() => (globalThis as any).sessionStorage.length)).toBe(0);
    } finally {
      await context.close();
      await app.close();
    }
  });

  it('calls the API under api_v1_prefix, with cookie sessions and without', async () => {
    for (const settings of [{ cookie_sessions_enabled: true }, {}]) {
      const { app, context, tab } = await signedInOn({ ...settings, api_v1_prefix: 'v1' });
      try {
        // A page that calls through the client (a user's page) and the sign-out work under the prefix too.
        await tab.getByRole('link', { name: 'plain-bob', exact: true }).click();
        await tab.getByRole('heading', { name: 'plain-bob', level: 1 }).waitFor();
        await tab.getByRole('button', { name: 'Sign out' }).click();
        await tab.getByRole('button', { name: 'Sign in', exact: true }).waitFor();
      } finally {
        await context.close();
        await app.close();
      }
    }
  });
});
