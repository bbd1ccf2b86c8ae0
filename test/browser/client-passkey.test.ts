// @svc/client's passkey calls in a real browser (docs/client.md "Log in", SPEC-2 section 6): Chromium's virtual
// authenticator (DevTools WebAuthn domain) on a page of the bundled client served on localhost (a secure
// context): register a passkey, log out, log in with it, and use it as the MFA step of a password login.
import type { Page } from 'playwright-core';
import { enrolTotp } from '../../testing/mfa.js';
import { chromiumSuite, describeInChromium, openReadyPage, passkeyPage } from './browser.js';

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

describeInChromium('@svc/client passkeys in Chromium', () => {
  const suite = chromiumSuite({ page: PAGE, client: true, passkeys: true, settings: { mfa_enabled: true } });
  let page: Page;

  beforeAll(async () => {
    page = await passkeyPage(suite.browser, suite.origin);
    await openReadyPage(page, `${suite.origin}/`);
  });

  it('registers a passkey, logs in with it, and completes an MFA step with it', async () => {
    const alice = await suite.app.createUser({ username: 'alice' });
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
    await enrolTotp(suite.app, alice);
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

  it('encodes the ceremonies itself where the browser lacks the WebAuthn JSON methods', async () => {
    // Browsers before parseCreationOptionsFromJSON / parseRequestOptionsFromJSON / toJSON (SPEC-2 section 6,
    // "WebAuthn JSON"): the client converts base64url to buffers and back on its own.
    const older = await passkeyPage(suite.browser, suite.origin);
    await older.context().addInitScript(() => {
      const PublicKeyCredential = (globalThis as any).PublicKeyCredential;
      delete PublicKeyCredential.parseCreationOptionsFromJSON;
      delete PublicKeyCredential.parseRequestOptionsFromJSON;
      delete PublicKeyCredential.prototype.toJSON;
    });
    await openReadyPage(older, `${suite.origin}/`);
    expect(
      await inPage(
        older,
        `const P = PublicKeyCredential;
         return [typeof P.parseCreationOptionsFromJSON, typeof P.parseRequestOptionsFromJSON, typeof P.prototype.toJSON];`,
      ),
    ).toEqual(['undefined', 'undefined', 'undefined']);

    const bob = await suite.app.createUser({ username: 'bob' });
    await inPage(older, 'return client.login(args[0], args[1])', [bob.username, bob.password]);
    expect(
      await inPage<{ name: string }>(older, "return client.registerPasskey({ name: 'Older' })"),
    ).toMatchObject({ name: 'Older', transports: ['internal'] });
    await inPage(older, 'return client.logout()');
    expect(await inPage(older, 'return client.loginWithPasskey()')).toEqual({ status: 'signed-in' });
    expect(await inPage(older, 'return client.user().then((u) => u.username)')).toBe('bob');
    await older.context().close();
  });
});
