// Social login in a real browser (docs/social-login.md "The frontend"): the example frontend
// (examples/client-demo, built with esbuild) shows the enabled providers' buttons; Chromium clicks "Sign in with
// Acme", goes through the real OpenID provider's login and consent pages (oidc-provider on loopback), comes back
// to the page with `#svc_code`, and the page exchanges it and shows the signed-in user.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser } from 'playwright-core';
import { createSqliteDatabase, startTestApp, type TestApp } from '@svc/core/testing';
import { freePort } from '../../testing/cli-process.js';
import { countingServer, type CountingServer } from '../../testing/client.js';
import { oidcSettings, startTestIdp, type TestIdp } from '../../testing/oidc.js';
import { describeInChromium, launchBrowser, loopbackContext } from './browser.js';

const DEMO = fileURLToPath(new URL('../../examples/client-demo/', import.meta.url));

describeInChromium('social login in the example frontend', () => {
  const sqlite = createSqliteDatabase();
  let idp: TestIdp;
  let app: TestApp;
  let server: CountingServer;
  let browser: Browser;
  let dist: string;

  beforeAll(async () => {
    dist = mkdtempSync(join(tmpdir(), 'svc-social-demo-'));
    const { buildDemo } = (await import(`${DEMO}build.mjs`)) as {
      buildDemo(options: { outdir: string }): Promise<unknown>;
    };
    [idp] = await Promise.all([startTestIdp(), buildDemo({ outdir: dist })]);
    const port = await freePort();
    const origin = `http://127.0.0.1:${port}`;
    app = await startTestApp({
      database: { dialect: 'sqlite', label: 'sqlite', url: sqlite.url },
      settings: {
        public_url: origin,
        // The example frontend keeps its session in cookies (docs/browser-sessions.md); the exchange sets them.
        cookie_sessions_enabled: true,
        oauth_providers: 'acme',
        oauth_registration_enabled: true,
        ...{
          oauth_acme_label: 'Acme',
          ...oidcSettings('acme', idp),
        },
      },
    });
    const file = (name: string, type: string) => ({ type, body: readFileSync(join(dist, name), 'utf8') });
    server = await countingServer(
      app,
      {
        '/': file('index.html', 'text/html'),
        '/app.js': file('app.js', 'text/javascript'),
        '/style.css': file('style.css', 'text/css'),
      },
      port,
    );
    await idp.register([`${origin}/api/auth/oauth/acme/callback`]);
    browser = await launchBrowser();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await app?.close();
    await idp?.close();
    await sqlite.drop();
    rmSync(dist, { recursive: true, force: true });
  });

  it('clicks "Sign in with Acme", signs in at the provider and comes back logged in', async () => {
    idp.accounts.set('browser-user', {
      sub: 'browser-user',
      email: 'browser@example.com',
      email_verified: true,
      preferred_username: 'browser-user',
    });
    const context = await loopbackContext(browser);
    try {
      const page = await context.newPage();
      await page.goto(`${server.url}/`);
      await page.getByRole('button', { name: 'Sign in with Acme' }).click();
      // The provider's own login and consent pages (oidc-provider's development interactions).
      await page.locator('input[name="login"]').fill('browser-user');
      await page.locator('input[name="password"]').fill('anything');
      await page.locator('button[type="submit"]').click();
      await page.locator('button[type="submit"]', { hasText: 'Continue' }).click();
      await page.waitForSelector('#app:not([hidden])');
      expect(await page.locator('#username').textContent()).toBe('browser-user');
      // The code left the address bar.
      expect(new URL(page.url()).hash).toBe('');
    } finally {
      await context.close();
    }
  });
});
