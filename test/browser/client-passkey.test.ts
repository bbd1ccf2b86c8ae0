// @svc/client's passkey calls in a real browser (docs/client.md "Log in", SPEC-2 section 6): Chromium's virtual
// authenticator (DevTools WebAuthn domain) on a page of the bundled client served on localhost (a secure
// context): register a passkey, log out, log in with it, and use it as the MFA step of a password login.
import type { Browser, Page } from 'playwright-core';
import { createSqliteDatabase, reportSkipped, startTestApp, type TestApp } from '@svc/core/testing';
import { freePort } from '../../testing/cli-process.js';
import { bundleClient, countingServer, type CountingServer } from '../../testing/client.js';
import { enrolTotp } from '../../testing/mfa.js';
import { browserMissingReason, launchBrowser } from './browser.js';

const missing = browserMissingReason();

const PAGE = `<!doctype html><meta charset="utf-8"><title>client passkeys</title>
<script type="module">
  import { createClient } from '/client.js';
  window.client = createClient({ baseUrl: location.origin });
  window.ready = true;
</script>`;

/** Runs `body` (an async function's body) in the page with its client and `args`; returns what it returns. */
const inPage = <T>(page: Page, body: string, args: unknown[] = []): Promise<T> =>
  page.evaluate(
    ([source, values]) =>
      new Function('client', 'args', `return (async () => {${source}})()`)(
        (globalThis as any).client,
        values,
      ) as Promise<T>,
    [body, args] as const,
  );

if (missing) {
  describe('@svc/client passkeys in Chromium', () =>
    reportSkipped('@svc/client passkeys in Chromium', missing));
} else {
  describe('@svc/client passkeys in Chromium', () => {
    const database = createSqliteDatabase();
    let app: TestApp;
    let server: CountingServer;
    let browser: Browser;
    let page: Page;

    beforeAll(async () => {
      const port = await freePort();
      const origin = `http://localhost:${port}`;
      app = await startTestApp({
        database: { dialect: 'sqlite', label: 'sqlite', url: database.url },
        settings: {
          passkeys_enabled: true,
          mfa_enabled: true,
          webauthn_rp_id: 'localhost',
          webauthn_origins: origin,
        },
      });
      server = await countingServer(
        app,
        {
          '/': { type: 'text/html', body: PAGE },
          '/client.js': { type: 'text/javascript', body: await bundleClient() },
        },
        port,
      );
      browser = await launchBrowser();
      const context = await browser.newContext();
      context.setDefaultTimeout(10_000);
      await context.route(
        (url) => url.origin !== origin,
        (route) => route.abort(),
      );
      page = await context.newPage();
      const cdp = await context.newCDPSession(page);
      await cdp.send('WebAuthn.enable');
      await cdp.send('WebAuthn.addVirtualAuthenticator', {
        options: {
          protocol: 'ctap2',
          transport: 'internal',
          hasResidentKey: true,
          hasUserVerification: true,
          isUserVerified: true,
          automaticPresenceSimulation: true,
        },
      });
      await page.goto(`${origin}/`);
      await page.waitForFunction(() => (globalThis as any).ready === true);
    }, 60_000);
    afterAll(async () => {
      await browser?.close();
      await server?.close();
      await app?.close();
      await database.drop();
    });

    it('registers a passkey, logs in with it, and completes an MFA step with it', async () => {
      const alice = await app.createUser({ username: 'alice' });
      expect(
        await inPage(page, 'return client.login(args[0], args[1])', [alice.username, alice.password]),
      ).toEqual({
        status: 'signed-in',
      });
      const passkey = await inPage<{ name: string }>(
        page,
        "return client.registerPasskey({ name: 'Chromium' })",
      );
      expect(passkey).toMatchObject({ name: 'Chromium' });
      await inPage(page, 'return client.logout()');
      expect(await inPage(page, 'return client.isSignedIn()')).toBe(false);

      expect(await inPage(page, 'return client.loginWithPasskey()')).toEqual({ status: 'signed-in' });
      expect(await inPage(page, 'return client.user().then((u) => u.username)')).toBe('alice');
      await inPage(page, 'return client.logout()');

      // With TOTP active, the password login asks for a second step; the passkey answers it.
      await enrolTotp(app, alice);
      const status = await inPage(
        page,
        `const step = await client.login(args[0], args[1]);
         if (step.status !== 'mfa-required') return step.status;
         return (await step.verifyWithPasskey()).status;`,
        [alice.username, alice.password],
      );
      expect(status).toBe('signed-in');
      expect(await inPage(page, 'return client.user().then((u) => u.username)')).toBe('alice');
    });
  });
}
