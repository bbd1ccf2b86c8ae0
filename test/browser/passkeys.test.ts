// Passkeys in a real browser (SPEC-2 "Passkeys", docs/passkeys.md): Debian's Chromium with the DevTools protocol's
// virtual authenticator (WebAuthn domain: CTAP2, internal transport, resident keys, user verification) on a
// page served by this test, calling navigator.credentials.create/get against the server: register, log out,
// log in with the passkey, and use it as the MFA step after a password.
import type { Page } from 'playwright-core';
import { enrolTotp } from '../../testing/mfa.js';
import { chromiumSuite, describeInChromium, passkeyPage } from './browser.js';

/** The page: the browser snippet of docs/passkeys.md, with a password login and a logout around it. */
const PAGE = `<!doctype html><meta charset="utf-8"><title>passkeys</title><script>
async function api(path, body, token) {
  const res = await fetch('/api' + path, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...(token ? { Authorization: 'Bearer ' + token } : {}) },
    body: JSON.stringify(body ?? {}),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}
async function passwordLogin(username, password) {
  const res = await fetch('/api/auth/token', { method: 'POST', body: new URLSearchParams({ username, password }) });
  return res.json();
}
async function registerPasskey(token, name) {
  const started = await api('/auth/passkeys/register/options', {}, token);
  const publicKey = PublicKeyCredential.parseCreationOptionsFromJSON(started.body.data);
  const credential = await navigator.credentials.create({ publicKey });
  return api('/auth/passkeys/register', { response: credential.toJSON(), name }, token);
}
async function passkeyLogin() {
  const started = await api('/auth/passkey/options', {});
  const { challengeId, options } = started.body.data;
  const publicKey = PublicKeyCredential.parseRequestOptionsFromJSON(options);
  const assertion = await navigator.credentials.get({ publicKey });
  return api('/auth/passkey/token', { challengeId, response: assertion.toJSON() });
}
async function passkeyMfaStep(mfaToken) {
  const started = await api('/mfa/webauthn/options', { mfa_token: mfaToken });
  const publicKey = PublicKeyCredential.parseRequestOptionsFromJSON(started.body.data);
  const assertion = await navigator.credentials.get({ publicKey });
  return api('/mfa/verify', { mfa_token: mfaToken, webauthn: assertion.toJSON() });
}
</script>`;

describeInChromium('Passkeys in Chromium', () => {
  // The page and the API on one origin: localhost, a secure context (the app's own handler, a second port).
  const suite = chromiumSuite({ page: PAGE, passkeys: true, settings: { mfa_enabled: true } });
  let page: Page;

  beforeAll(async () => {
    page = await passkeyPage(suite.browser, suite.origin);
    await page.goto(`${suite.origin}/`);
  });

  it('registers a passkey, logs out, logs in with it, and uses it as the MFA step', async () => {
    const user = await suite.app.createUser({ username: 'alice' });
    const login = await page.evaluate(([u, p]) => passwordLogin(u!, p!), [user.username, user.password]);
    expect(login.access_token).toEqual(expect.any(String));

    const registered = await page.evaluate(
      ([token]) => registerPasskey(token!, 'Chromium'),
      [login.access_token as string],
    );
    expect(registered.status).toBe(201);
    expect(registered.body.data).toMatchObject({ name: 'Chromium', transports: ['internal'] });

    const loggedOut = await page.evaluate(
      async ([token, refresh]) => (await api('/auth/logout', { refresh_token: refresh }, token)).status,
      [login.access_token as string, login.refresh_token as string],
    );
    expect(loggedOut).toBe(204);

    const passkey = await page.evaluate(() => passkeyLogin());
    expect(passkey.status).toBe(200);
    expect(passkey.body).toMatchObject({ token_type: 'bearer', access_token: expect.any(String) });
    const me = await suite.app.as(passkey.body.access_token).get('/api/auth/user');
    expect(me.body.data.username).toBe('alice');

    // With TOTP active, a password login asks for a second step: the passkey answers it.
    await enrolTotp(suite.app, user);
    const pending = await page.evaluate(([u, p]) => passwordLogin(u!, p!), [user.username, user.password]);
    expect(pending).toMatchObject({ mfa_required: true, mfa_token: expect.any(String) });
    const verified = await page.evaluate(([token]) => passkeyMfaStep(token!), [pending.mfa_token as string]);
    expect(verified.status).toBe(200);
    expect(verified.body.access_token).toEqual(expect.any(String));
  });
});

// The page's functions, as the test calls them inside the browser.
declare function api(path: string, body?: unknown, token?: string): Promise<{ status: number; body: any }>;
declare function passwordLogin(username: string, password: string): Promise<any>;
declare function registerPasskey(token: string, name: string): Promise<{ status: number; body: any }>;
declare function passkeyLogin(): Promise<{ status: number; body: any }>;
declare function passkeyMfaStep(mfaToken: string): Promise<{ status: number; body: any }>;
