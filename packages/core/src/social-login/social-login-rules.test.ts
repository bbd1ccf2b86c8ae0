import { randomBytes } from 'node:crypto';
import { eq } from 'drizzle-orm';
import jwt from 'jsonwebtoken';
import { freePort } from '../../../../testing/cli-process.js';
import { moveClockAhead, restoreClock } from '../../../../testing/clock.js';
import { eventsUrl, openSocket, ticketOf } from '../../../../testing/events.js';
import {
  oidcSettings,
  socialSignIn,
  startAuthorize,
  startTestIdp,
  type IdpAccount,
  type TestIdp,
} from '../../../../testing/oidc.js';
import { PASSKEY_TEST_SETTINGS } from '../../../../testing/webauthn.js';
import type { CoreTables } from '../kernel/db/tables.js';
import {
  describeEachDatabase,
  startTestApp,
  type LoggedInClient,
  type TestApp,
  type TestResponse,
} from '../testing/index.js';
import { setCookies } from '../../../../testing/cookies.js';

const MINUTE = 60_000;

/** The `[status, first error code]` of an answer. */
const refusal = (res: TestResponse) => [res.status, res.body?.detail?.[0]?.code];

// The rules of a social login that SPEC-3 section 1 shares with every login (rate limit, locked accounts, the
// `login` event, the session, verified email), the registration of rule 4, the state check of the callback,
// and the refusals of SPEC-3 sections 4 (impersonation) and 7 (personal tokens) on the identity routes, over
// real HTTP with a real OpenID provider (oidc-provider) on loopback. Two apps share the database: `app`
// (no rate limit) and `strict` (`auth_rate_limit: 2`, `require_verified_email`).
describeEachDatabase('social login rules', (database) => {
  let idp: TestIdp;
  let app: TestApp;
  let strict: TestApp;
  let root: LoggedInClient;

  beforeAll(async () => {
    const [started, port, strictPort] = await Promise.all([startTestIdp(), freePort(), freePort()]);
    idp = started;
    const social = {
      oauth_providers: 'acme',
      oauth_registration_enabled: true,
      ...oidcSettings('acme', idp),
    };
    app = await startTestApp({
      database,
      port,
      settings: {
        public_url: `http://127.0.0.1:${port}`,
        ...social,
        impersonation_enabled: true,
        personal_tokens_enabled: true,
        events_broadcast_enabled: true,
        cookie_sessions_enabled: true,
        ...PASSKEY_TEST_SETTINGS,
      },
    });
    strict = await startTestApp({
      database,
      port: strictPort,
      settings: {
        public_url: `http://127.0.0.1:${strictPort}`,
        ...social,
        auth_rate_limit: 2,
        auth_rate_window_seconds: 60,
        require_verified_email: true,
      },
    });
    await idp.register([
      `${app.url}/api/auth/oauth/acme/callback`,
      `${strict.url}/api/auth/oauth/acme/callback`,
    ]);
    root = await app.loginAs(await app.createUser({ username: 'rules-root', isSuperuser: true }));
  }, 60_000);
  afterAll(async () => {
    await Promise.all([app?.close(), strict?.close()]);
    await idp?.close();
  });
  afterEach(() => restoreClock());

  /** The callback's redirect of a social login at `on` as `sub`, whom the provider describes by `account`. */
  const callbackAt = (on: TestApp, sub: string, account: Omit<IdpAccount, 'sub'> = {}) => {
    idp.accounts.set(sub, { sub, ...account });
    return socialSignIn(on.url, 'acme', idp, sub);
  };
  /** `POST /auth/oauth/exchange` at `on`, from the client address `from` (loopback is a trusted proxy). */
  const exchangeAt = (
    on: TestApp,
    code: string | undefined,
    from?: string,
    headers: Record<string, string> = {},
  ) =>
    on.post(
      '/api/auth/oauth/exchange',
      { code },
      { headers: { ...(from ? { 'X-Forwarded-For': from } : {}), ...headers } },
    );
  /** A whole social login at `app`: the callback, then the exchange of its code. */
  const loginWith = async (sub: string, account: Omit<IdpAccount, 'sub'> = {}) => {
    const result = await callbackAt(app, sub, account);
    return { result, res: await exchangeAt(app, result.fragment.svc_code) };
  };
  const userIdOf = (accessToken: string) => (jwt.decode(accessToken) as { sub: string }).sub;
  const setUser = async (userId: string, change: Record<string, unknown>) => {
    const core = app.app.runtime.tables.core as unknown as CoreTables;
    await app.app.runtime.authDb.orm.update(core.user).set(change).where(eq(core.user.id, userId));
  };

  it('counts the exchange against auth_rate_limit: the third from one address within the window gets 429', async () => {
    // SPEC-3 section 1: a social login "counts against `auth_rate_limit` at the exchange".
    const from = '203.0.113.21';
    const codes: string[] = [];
    for (let i = 0; i < 3; i++) {
      const result = await callbackAt(strict, 'rl-sub', { email: 'rl@example.com', email_verified: true });
      codes.push(result.fragment.svc_code!);
    }
    expect((await exchangeAt(strict, codes[0], from)).status).toBe(200);
    expect((await exchangeAt(strict, codes[1], from)).status).toBe(200);
    const refused = await exchangeAt(strict, codes[2], from);
    expect(refusal(refused)).toEqual([429, 'auth.rate_limited']);
    const retry = Number(refused.headers.get('retry-after'));
    expect(retry).toBeGreaterThanOrEqual(1);
    expect(retry).toBeLessThanOrEqual(60);
    // The limit is the address's: another client is not refused (its unknown code is simply invalid).
    const other = await exchangeAt(strict, randomBytes(32).toString('base64url'), '203.0.113.22');
    expect(refusal(other)).toEqual([400, 'auth.oauth_code_invalid']);
  });

  it('refuses at the exchange (401 auth.oauth_login_failed) an account locked or deactivated after the callback', async () => {
    // SPEC-3 section 1: refused "while the account is locked (... 401 with that code at the exchange if the
    // account changed in between)"; MFA is off here, so the exchange itself must see the lock.
    for (const change of [{ lockedUntil: new Date(Date.now() + 60 * MINUTE) }, { isActive: false }]) {
      const sub = `changed-${Object.keys(change)[0]}`;
      const first = await loginWith(sub, { email: `${sub}@example.com`, email_verified: true });
      expect(first.res.status).toBe(200);
      const userId = userIdOf(first.res.body.access_token);
      const result = await callbackAt(app, sub);
      expect(result.fragment.svc_code).toMatch(/^[\w-]{43}$/);
      await setUser(userId, change);
      const res = await exchangeAt(app, result.fragment.svc_code);
      expect(refusal(res)).toEqual([401, 'auth.oauth_login_failed']);
      expect(res.body.access_token).toBeUndefined();
    }
  });

  it('emits login and creates a session listed in GET /api/auth/sessions, as a password login does', async () => {
    // SPEC-3 section 1: a social login "sets `lastLoginAt`, emits `login`, and creates a session as a password
    // login does".
    const socket = await openSocket(eventsUrl(app.url, { ticket: await ticketOf(root) }));
    try {
      await socket.waitFor((frame) => frame.type === 'snapshot');
      const { res } = await loginWith('session-sub', {
        email: 'sessioner@example.com',
        email_verified: true,
        preferred_username: 'sessioner',
      });
      expect(res.status).toBe(200);
      const claims = jwt.decode(res.body.access_token) as { sub: string; sid: string };
      const login = await socket.waitFor((f) => f.type === 'login' && f.data?.userId === claims.sub);
      expect(login.data).toEqual({ userId: claims.sub, username: 'sessioner' });
      const client = app.as(res.body.access_token);
      const sessions = await client.get('/api/auth/sessions');
      expect(sessions.status).toBe(200);
      expect(sessions.body.data).toEqual([expect.objectContaining({ id: claims.sid, current: true })]);
      expect((await client.get('/api/auth/user')).body.data.lastLoginAt).toEqual(expect.any(String));
      // The session's refresh token renews it, like a password login's.
      const refreshed = await app.post('/api/auth/refresh-token', { refresh_token: res.body.refresh_token });
      expect(refreshed.status).toBe(200);
      expect((jwt.decode(refreshed.body.access_token) as { sid: string }).sid).toBe(claims.sid);
    } finally {
      await socket.close();
    }
  });

  it('answers the exchange with X-Svc-Session: cookie with {user} and the cookies; a cross-site one is refused first', async () => {
    // SPEC-3 section 5: `POST /auth/oauth/exchange` answers like `POST /auth/session` and sets the cookies with
    // `X-Svc-Session: cookie`; a cross-site token-issuing request with that header is refused (no cross-site
    // login).
    const result = await callbackAt(app, 'cookie-sub', {
      email: 'cookie-user@example.com',
      email_verified: true,
      preferred_username: 'cookie-user',
    });
    const code = result.fragment.svc_code;
    const crossSite = await exchangeAt(app, code, undefined, {
      'X-Svc-Session': 'cookie',
      Origin: 'https://evil.example',
    });
    expect(refusal(crossSite)).toEqual([403, 'auth.csrf_failed']);
    expect(crossSite.headers.getSetCookie()).toEqual([]);
    // Refused before the code was used up: the same code works from the app's own origin.
    const res = await exchangeAt(app, code, undefined, { 'X-Svc-Session': 'cookie', Origin: app.url });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ success: true, data: { user: { username: 'cookie-user' } } });
    expect(res.body.access_token).toBeUndefined();
    const cookies = setCookies(res);
    // `public_url` is http on loopback: `cookie_secure: auto` sets no Secure, so no name prefix.
    expect([...cookies.keys()].sort()).toEqual(['svc_csrf', 'svc_refresh', 'svc_session']);
    const session = cookies.get('svc_session')!;
    const sessions = await app.get('/api/auth/sessions', {
      headers: { Cookie: session.slice(0, session.indexOf(';')) },
    });
    expect(sessions.status).toBe(200);
    expect(sessions.body.data).toEqual([expect.objectContaining({ current: true })]);
  });

  it('registers through the provider with a username made unique by a suffix and no emailVerifiedAt for an unverified email', async () => {
    // SPEC-3 section 1 rule 4: "username from the provider's preferred username or else the email's local part,
    // lower-cased and made unique by a suffix", "`emailVerifiedAt` set when the provider verified the email".
    await app.createUser({ username: 'taken', email: 'taken-owner@example.com' });
    const byPreferred = await loginWith('reg-preferred', {
      email: 'first-newcomer@example.com',
      email_verified: false,
      preferred_username: 'Taken',
    });
    const byLocalPart = await loginWith('reg-local-part', {
      email: 'Taken@other.example',
      email_verified: false,
    });
    const names: string[] = [];
    for (const { res } of [byPreferred, byLocalPart]) {
      expect(res.status).toBe(200);
      const me = await app.as(res.body.access_token).get('/api/auth/user');
      expect(me.body.data).toMatchObject({ hasPassword: false, emailVerifiedAt: null });
      names.push(me.body.data.username);
    }
    for (const name of names) {
      expect(name).toMatch(/^taken\S+$/);
      expect(name).not.toBe('taken');
    }
    expect(new Set(names).size).toBe(2);
  });

  it('answers 403 auth.email_unverified at the exchange when require_verified_email is on and the email is not verified', async () => {
    // SPEC-3 section 1 with SPEC-2 "Email verification": `require_verified_email` refuses a login of an account
    // whose email is not verified with 403 `auth.email_unverified`.
    const unverified = await callbackAt(strict, 'unverified-sub', {
      email: 'unverified@example.com',
      email_verified: false,
    });
    expect(unverified.fragment.svc_code).toBeDefined();
    const refused = await exchangeAt(strict, unverified.fragment.svc_code, '203.0.113.31');
    expect(refusal(refused)).toEqual([403, 'auth.email_unverified']);
    expect(refused.body.access_token).toBeUndefined();
    // The same app logs in an account whose email the provider verified.
    const verified = await callbackAt(strict, 'verified-sub', {
      email: 'verified@example.com',
      email_verified: true,
    });
    expect((await exchangeAt(strict, verified.fragment.svc_code, '203.0.113.32')).status).toBe(200);
  });

  it('sends an unknown state at the callback to the root of public_url with #svc_error=auth.oauth_state_invalid', async () => {
    // SPEC-3 section 1: "A state that is unknown ... fails: the callback redirects to the root of `public_url`
    // with `#svc_error=auth.oauth_state_invalid` (no stored `redirect_to` is trusted then)".
    const start = await startAuthorize(app.url, 'acme', '/after-login');
    const state = randomBytes(32).toString('base64url');
    for (const cookie of [start.cookie, null]) {
      const res = await fetch(`${app.url}/api/auth/oauth/acme/callback?state=${state}&code=some-code`, {
        headers: cookie ? { cookie } : {},
        redirect: 'manual',
      });
      await res.arrayBuffer();
      expect(res.status).toBe(302);
      expect(res.headers.get('location')).toBe(`${app.url}/#svc_error=auth.oauth_state_invalid`);
    }
  });

  it('refuses the link, identity and passkey routes while impersonating with 403 access.impersonation_forbidden', async () => {
    // SPEC-3 section 4: "Every credential route, reading or writing (... passkeys, ... identities ...), answers
    // 403 `access.impersonation_forbidden` (before any other check of the route, section 7's recent-login rule
    // included)".
    const { res } = await loginWith('impersonated-sub', {
      email: 'impersonated@example.com',
      email_verified: true,
    });
    expect(res.status).toBe(200);
    const userId = userIdOf(res.body.access_token);
    const [identity] = (await app.as(res.body.access_token).get('/api/auth/identities')).body.data;
    expect(identity).toMatchObject({ provider: 'acme' });
    const started = await root.post(`/api/admin/user/${userId}/impersonate`, { reason: 'support case' });
    expect(started.status).toBe(200);
    const as = app.as(started.body.access_token);
    const attempts = [
      () => as.post('/api/auth/oauth/acme/link', {}),
      () => as.get('/api/auth/identities'),
      () => as.delete(`/api/auth/identities/${identity.id}`),
      () => as.post('/api/auth/passkeys/register/options'),
      () => as.get('/api/auth/passkeys'),
    ];
    for (const attempt of attempts)
      expect(refusal(await attempt())).toEqual([403, 'access.impersonation_forbidden']);
    // Once the recent-login window is over, the impersonation still comes first.
    moveClockAhead(6 * MINUTE);
    expect(refusal(await as.post('/api/auth/oauth/acme/link', {}))).toEqual([
      403,
      'access.impersonation_forbidden',
    ]);
    expect(refusal(await as.post('/api/auth/passkeys/register/options'))).toEqual([
      403,
      'access.impersonation_forbidden',
    ]);
    // The session is the target's (reading the user is allowed) and the identity was not unlinked.
    expect((await as.get('/api/auth/user')).body.data).toMatchObject({
      id: userId,
      impersonatedBy: { id: root.user.id },
    });
    expect((await root.get(`/api/admin/user/${userId}/identities`)).body.data).toEqual([
      expect.objectContaining({ id: identity.id }),
    ]);
  });

  it('refuses a personal access token on the admin identity routes with 403 access.token_not_allowed', async () => {
    // SPEC-3: "Personal access tokens are refused (403 `access.token_not_allowed`) on every credential route
    // added here (identity linking, ...)"; section 1: "The link and identity routes are credential routes".
    const { res } = await loginWith('pat-target-sub', {
      email: 'pat-target@example.com',
      email_verified: true,
    });
    const userId = userIdOf(res.body.access_token);
    const pat = await root.post('/api/auth/tokens', { name: 'admin-robot', expiresInDays: 1 });
    expect(pat.status).toBe(201);
    const byToken = app.as(pat.body.data.token);
    const listed = await root.get(`/api/admin/user/${userId}/identities`);
    expect(listed.status).toBe(200);
    const [identity] = listed.body.data;
    expect(refusal(await byToken.get(`/api/admin/user/${userId}/identities`))).toEqual([
      403,
      'access.token_not_allowed',
    ]);
    expect(refusal(await byToken.delete(`/api/admin/user/${userId}/identities/${identity.id}`))).toEqual([
      403,
      'access.token_not_allowed',
    ]);
    // The same superuser's login session reads them; nothing was unlinked.
    expect((await root.get(`/api/admin/user/${userId}/identities`)).body.data).toEqual([
      expect.objectContaining({ id: identity.id, provider: 'acme' }),
    ]);
  });
});
