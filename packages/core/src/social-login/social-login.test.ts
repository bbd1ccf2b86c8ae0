import { eq } from 'drizzle-orm';
import { freePort } from '../../../../testing/cli-process.js';
import { moveClockAhead, restoreClock } from '../../../../testing/clock.js';
import { eventsUrl, openSocket, ticketOf } from '../../../../testing/events.js';
import { enrolTotp } from '../../../../testing/mfa.js';
import {
  oidcSettings,
  socialSignIn,
  startAuthorize,
  startTestGithub,
  startTestIdp,
  type TestGithub,
  type TestIdp,
} from '../../../../testing/oidc.js';
import type { CoreTables } from '../kernel/db/tables.js';
import { describeEachDatabase, startTestApp, type TestApp } from '../testing/index.js';

const MINUTE = 60_000;

// SPEC-3 section 1 over real HTTP: a real OpenID provider (oidc-provider) and a GitHub fixture on loopback, its
// login and consent pages driven like a browser, the app's routes, and the stored effects.
describeEachDatabase('social login', (database) => {
  let idp: TestIdp;
  let github: TestGithub;
  let app: TestApp;
  let closedPort: number;

  beforeAll(async () => {
    [idp, github, closedPort] = await Promise.all([startTestIdp(), startTestGithub(), freePort()]);
    const port = await freePort();
    app = await startTestApp({
      database,
      port,
      settings: {
        public_url: `http://127.0.0.1:${port}`,
        oauth_providers: 'acme,github,down',
        oauth_registration_enabled: true,
        oauth_allowed_redirect_origins: 'http://localhost:5173',
        mfa_enabled: true,
        personal_tokens_enabled: true,
        events_broadcast_enabled: true,
        activity_log_enabled: true,
        activity_log_sync: true,
        ...oidcSettings('acme', idp),
        ...{
          oauth_acme_label: 'Acme SSO',
          oauth_github_issuer: github.url,
          oauth_github_client_id: github.clientId,
          oauth_github_client_secret: github.clientSecret,
          // A provider nobody answers for: the start does not depend on it.
          oauth_down_issuer: `http://127.0.0.1:${closedPort}`,
          oauth_down_client_id: 'x',
        },
      },
    });
    await idp.register([`${app.url}/api/auth/oauth/acme/callback`]);
  }, 60_000);
  afterAll(async () => {
    await app?.close();
    await Promise.all([idp?.close(), github?.close()]);
  });
  afterEach(() => {
    restoreClock();
    idp.tamper = null;
  });

  const exchange = (code: string | undefined) => app.post('/api/auth/oauth/exchange', { code });
  const loginWith = async (sub: string, account: Record<string, unknown> = {}) => {
    idp.accounts.set(sub, { sub, ...account });
    const result = await socialSignIn(app.url, 'acme', idp, sub);
    return { result, res: await exchange(result.fragment.svc_code) };
  };

  it('lists the enabled providers with their labels', async () => {
    const res = await app.get('/api/auth/oauth/providers');
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual([
      { name: 'acme', label: 'Acme SSO' },
      { name: 'github', label: 'GitHub' },
      { name: 'down', label: 'down' },
    ]);
  });

  it('redirects to the provider with PKCE S256, state and nonce, binding the flow to the browser by a cookie', async () => {
    const res = await fetch(`${app.url}/api/auth/oauth/acme/authorize?redirect_to=/welcome`, {
      redirect: 'manual',
    });
    expect(res.status).toBe(302);
    const location = new URL(res.headers.get('location')!);
    expect(location.origin).toBe(idp.issuer);
    expect(location.searchParams.get('code_challenge_method')).toBe('S256');
    expect(location.searchParams.get('code_challenge')).toMatch(/^[\w-]{43}$/);
    expect(location.searchParams.get('state')).toMatch(/^[\w-]{43}$/);
    expect(location.searchParams.get('nonce')).toBeTruthy();
    expect(location.searchParams.get('redirect_uri')).toBe(`${app.url}/api/auth/oauth/acme/callback`);
    const cookie = res.headers.getSetCookie().find((c) => c.startsWith('svc_oauth_binding='))!;
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Lax/);
    expect(cookie).toMatch(/Path=\/api\/auth\/oauth/);
  });

  it('registers a first social login, logs it in through the exchange, and the code works once', async () => {
    const { result, res } = await loginWith('newcomer-1', {
      email: 'Newcomer@Example.com',
      email_verified: true,
      preferred_username: 'NewComer',
      given_name: 'New',
      family_name: 'Comer',
    });
    expect(result.target).toBe(`${app.url}/`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ token_type: 'bearer' }); // not enveloped, like POST /auth/token
    const me = await app.as(res.body.access_token).get('/api/auth/user');
    expect(me.body.data).toMatchObject({
      username: 'newcomer',
      email: 'Newcomer@Example.com',
      firstName: 'New',
      lastName: 'Comer',
      hasPassword: false,
    });
    expect(me.body.data.emailVerifiedAt).not.toBeNull();
    expect(me.body.data.lastLoginAt).not.toBeNull();
    const identities = await app.as(res.body.access_token).get('/api/auth/identities');
    expect(identities.body.data).toEqual([
      expect.objectContaining({ provider: 'acme', email: 'Newcomer@Example.com' }),
    ]);
    const again = await exchange(result.fragment.svc_code);
    expect(again.status).toBe(400);
    expect(again.body.detail[0]).toMatchObject({ code: 'auth.oauth_code_invalid' });
  });

  it('logs the same identity in again, updating its email but not the user’s', async () => {
    const first = await loginWith('returning-1', { email: 'old@example.com', email_verified: true });
    const second = await loginWith('returning-1', { email: 'new@example.com', email_verified: true });
    expect(second.res.status).toBe(200);
    const a = await app.as(first.res.body.access_token).get('/api/auth/user');
    const b = await app.as(second.res.body.access_token).get('/api/auth/user');
    expect(b.body.data.id).toBe(a.body.data.id);
    expect(b.body.data.email).toBe('old@example.com');
    const identities = await app.as(second.res.body.access_token).get('/api/auth/identities');
    expect(identities.body.data[0].email).toBe('new@example.com');
    expect(identities.body.data[0].lastUsedAt).not.toBeNull();
  });

  it('answers the MFA step from the exchange for a user with MFA active', async () => {
    const user = await app.createUser({ username: 'mfa-social', email: 'mfa-social@example.com' });
    const client = await app.loginAs(user);
    const link = await client.post('/api/auth/oauth/acme/link', {});
    idp.accounts.set('mfa-sub', { sub: 'mfa-sub' });
    const linked = await socialSignIn(app.url, 'acme', idp, 'mfa-sub', {
      start: { authorizationUrl: link.body.data.authorizationUrl, cookie: bindingOf(link.headers) },
    });
    expect(linked.fragment).toEqual({ svc_linked: 'acme' });
    await enrolTotp(app, user);
    const { res } = await loginWith('mfa-sub');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ mfa_required: true, mfa_token: expect.any(String) });
  });

  it('records a link made at a login’s callback (verified email) in the activity log, as the link route’s is', async () => {
    const user = await app.createUser({ username: 'auto-linked', email: 'auto-linked@example.com' });
    const core = app.app.runtime.tables.core as unknown as CoreTables;
    await app.app.runtime.authDb.orm
      .update(core.user)
      .set({ emailVerifiedAt: new Date() })
      .where(eq(core.user.id, user.id));
    const { res } = await loginWith('auto-linked-sub', {
      email: 'Auto-Linked@example.com',
      email_verified: true,
    });
    expect(res.status).toBe(200);
    const auditor = await app.loginAs(await app.createUser({ username: 'sl-auditor', isSuperuser: true }));
    const entries = async () =>
      (await auditor.get(`/api/admin/audit/activity?userId=${user.id}&limit=10`)).body.data as any[];
    // The link is the user's entry (its request, the callback, is a GET and records nothing itself).
    expect(await entries()).toEqual([
      expect.objectContaining({
        userId: user.id,
        username: 'auto-linked',
        method: 'GET',
        path: '/api/auth/oauth/acme/callback',
        statusCode: 302,
        description: 'linked acme by verified email',
      }),
    ]);
    // An explicit link is recorded by its own request, for the same user.
    const link = await (await app.loginAs(user)).post('/api/auth/oauth/acme/link', {});
    expect(link.status).toBe(200);
    expect((await entries()).map((e) => [e.userId, e.method, e.path, e.description])).toEqual([
      [user.id, 'POST', '/api/auth/oauth/acme/link', 'started linking acme'],
      [user.id, 'GET', '/api/auth/oauth/acme/callback', 'linked acme by verified email'],
    ]);
  });

  it('links a provider to a recently logged-in caller, whatever the provider says of the email', async () => {
    const user = await app.createUser({ username: 'linker', email: 'linker@example.com' });
    const client = await app.loginAs(user);
    const link = await client.post('/api/auth/oauth/acme/link', { redirectTo: '/settings' });
    expect(link.status).toBe(200);
    idp.accounts.set('linker-sub', {
      sub: 'linker-sub',
      email: 'someone-else@example.com',
      email_verified: false,
    });
    const result = await socialSignIn(app.url, 'acme', idp, 'linker-sub', {
      start: { authorizationUrl: link.body.data.authorizationUrl, cookie: bindingOf(link.headers) },
    });
    expect(result.location).toBe(`${app.url}/settings#svc_linked=acme`);
    const { res } = await loginWith('linker-sub');
    const me = await app.as(res.body.access_token).get('/api/auth/user');
    expect(me.body.data).toMatchObject({ username: 'linker', hasPassword: true });
    // Linked to the caller, the identity is refused to a link of another user.
    const other = await app.loginAs(await app.createUser({ username: 'linker-two' }));
    const second = await other.post('/api/auth/oauth/acme/link', {});
    const refused = await socialSignIn(app.url, 'acme', idp, 'linker-sub', {
      start: { authorizationUrl: second.body.data.authorizationUrl, cookie: bindingOf(second.headers) },
    });
    expect(refused.fragment).toEqual({ svc_error: 'auth.oauth_identity_in_use' });
    // SPEC-3 section 1: linking is recorded in the activity log: the completed link at its callback, beside the
    // request that started it; a link refused at the callback has only the start.
    const auditor = await app.loginAs(await app.createUser({ username: 'link-auditor', isSuperuser: true }));
    const described = async (userId: string) =>
      ((await auditor.get(`/api/admin/audit/activity?userId=${userId}&limit=10`)).body.data as any[]).map(
        (e) => [e.method, e.path, e.description],
      );
    expect(await described(user.id)).toEqual(
      expect.arrayContaining([
        ['POST', '/api/auth/oauth/acme/link', 'started linking acme'],
        ['GET', '/api/auth/oauth/acme/callback', 'linked acme'],
      ]),
    );
    expect(await described(other.user.id)).toEqual([
      ['POST', '/api/auth/oauth/acme/link', 'started linking acme'],
    ]);
  });

  it('refuses a link without a recent login (403) and with a personal token (403)', async () => {
    const user = await app.createUser({ username: 'stale-linker' });
    const client = await app.loginAs(user);
    const pat = await client.post('/api/auth/tokens', { name: 'ci' });
    expect(pat.status).toBe(201);
    const byToken = app.as(pat.body.data.token);
    for (const [method, path] of [
      ['POST', '/api/auth/oauth/acme/link'],
      ['GET', '/api/auth/identities'],
      ['DELETE', '/api/auth/identities/00000000-0000-0000-0000-000000000000'],
    ] as const) {
      const res = await byToken.request(method, path, method === 'POST' ? { body: {} } : {});
      expect(res.status).toBe(403);
      expect(res.body.detail[0]).toMatchObject({ code: 'access.token_not_allowed' });
    }
    moveClockAhead(6 * MINUTE);
    const late = await client.post('/api/auth/oauth/acme/link', {});
    expect(late.status).toBe(403);
    expect(late.body.detail[0]).toMatchObject({ code: 'auth.reauthentication_required' });
  });

  it('unlinks an identity, refusing the last way to log in and another user’s identity', async () => {
    const { res } = await loginWith('only-way', { email: 'only-way@example.com', email_verified: true });
    const owner = app.as(res.body.access_token);
    const [identity] = (await owner.get('/api/auth/identities')).body.data;
    const last = await owner.delete(`/api/auth/identities/${identity.id}`);
    expect(last.status).toBe(400);
    expect(last.body.detail[0]).toMatchObject({ code: 'auth.last_login_method' });
    const stranger = await app.loginAs(await app.createUser({ username: 'stranger' }));
    const foreign = await stranger.delete(`/api/auth/identities/${identity.id}`);
    expect(foreign.status).toBe(404);
    expect(foreign.body.detail[0]).toMatchObject({ code: 'auth.identity_not_found' });
    // The superuser sees it, and the same rule holds for them.
    const admin = await app.loginAs(await app.createUser({ username: 'root-social', isSuperuser: true }));
    const me = await owner.get('/api/auth/user');
    const listed = await admin.get(`/api/admin/user/${me.body.data.id}/identities`);
    expect(listed.body.data).toEqual([expect.objectContaining({ id: identity.id, provider: 'acme' })]);
    const adminLast = await admin.delete(`/api/admin/user/${me.body.data.id}/identities/${identity.id}`);
    expect(adminLast.body.detail[0]).toMatchObject({ code: 'auth.last_login_method' });
    // With a password the identity can go.
    // Linking and unlinking tell the user (and superusers) over the event stream.
    const user = await app.createUser({ username: 'has-password' });
    const client = await app.loginAs(user);
    const socket = await openSocket(eventsUrl(app.url, { ticket: await ticketOf(client) }));
    try {
      await socket.waitFor((frame) => frame.type === 'snapshot');
      const link = await client.post('/api/auth/oauth/acme/link', {});
      idp.accounts.set('hp-sub', { sub: 'hp-sub' });
      await socialSignIn(app.url, 'acme', idp, 'hp-sub', {
        start: { authorizationUrl: link.body.data.authorizationUrl, cookie: bindingOf(link.headers) },
      });
      const linkedEvent = await socket.waitFor((frame) => frame.type === 'identity_linked');
      expect(linkedEvent.data).toEqual({ userId: user.id, provider: 'acme' });
      const [linked] = (await client.get('/api/auth/identities')).body.data;
      expect((await admin.delete(`/api/admin/user/${user.id}/identities/${linked.id}`)).status).toBe(204);
      expect((await client.get('/api/auth/identities')).body.data).toEqual([]);
      const unlinkedEvent = await socket.waitFor((frame) => frame.type === 'identity_unlinked');
      expect(unlinkedEvent.data).toEqual({ userId: user.id, provider: 'acme' });
    } finally {
      await socket.close();
    }
  });

  it('leaves a login method when the last two identities are unlinked in parallel, again and again', async () => {
    for (let round = 0; round < 4; round++) {
      // An account made by a social login (no password), then a second identity linked to it.
      const { res } = await loginWith(`race-${round}-a`, {
        email: `race-${round}@example.com`,
        email_verified: true,
      });
      expect(res.status).toBe(200);
      const owner = app.as(res.body.access_token);
      const link = await owner.post('/api/auth/oauth/acme/link', {});
      idp.accounts.set(`race-${round}-b`, { sub: `race-${round}-b` });
      const linked = await socialSignIn(app.url, 'acme', idp, `race-${round}-b`, {
        start: { authorizationUrl: link.body.data.authorizationUrl, cookie: bindingOf(link.headers) },
      });
      expect(linked.fragment).toEqual({ svc_linked: 'acme' });
      const ids = ((await owner.get('/api/auth/identities')).body.data as { id: string }[]).map((i) => i.id);
      expect(ids).toHaveLength(2);
      const answers = await Promise.all(
        Array.from({ length: 16 }, (_, k) => owner.delete(`/api/auth/identities/${ids[k % 2]}`)),
      );
      // Exactly one unlink wins; the rest find it gone (404) or the last method left (400).
      expect(answers.filter((a) => a.status === 204)).toHaveLength(1);
      for (const answer of answers.filter((a) => a.status !== 204))
        expect(['auth.identity_not_found', 'auth.last_login_method']).toContain(answer.body.detail[0].code);
      expect((await owner.get('/api/auth/identities')).body.data).toHaveLength(1);
    }
  });

  it('lists the identities in the data export', async () => {
    const { res } = await loginWith('exporter', { email: 'exporter@example.com', email_verified: true });
    const exported = await app.as(res.body.access_token).get('/api/auth/user/export');
    expect(exported.status).toBe(200);
    const body = exported.body.data ?? exported.body;
    expect(body.identities).toEqual([
      expect.objectContaining({ provider: 'acme', email: 'exporter@example.com' }),
    ]);
  });

  it('signs in with GitHub (OAuth 2.0): the verified primary address of the email list', async () => {
    github.accounts.set('octo', {
      id: 4242,
      login: 'Octo',
      name: 'Octo Cat',
      emails: [
        { email: 'other@example.com', primary: false, verified: true },
        { email: 'octo@example.com', primary: true, verified: true },
      ],
    });
    const result = await socialSignIn(app.url, 'github', github, 'octo', { redirectTo: '/home' });
    expect(result.target).toBe(`${app.url}/home`);
    const res = await exchange(result.fragment.svc_code);
    expect(res.status).toBe(200);
    const me = await app.as(res.body.access_token).get('/api/auth/user');
    expect(me.body.data).toMatchObject({
      username: 'octo',
      email: 'octo@example.com',
      firstName: 'Octo',
      lastName: 'Cat',
    });
    const denied = await socialSignIn(app.url, 'github', github, 'octo', { deny: true });
    expect(denied.fragment).toEqual({ svc_error: 'auth.oauth_denied' });
  });

  it('says auth.oauth_denied when the user refuses at the provider', async () => {
    idp.accounts.set('refuser', { sub: 'refuser' });
    const result = await socialSignIn(app.url, 'acme', idp, 'refuser', { deny: true, redirectTo: '/x' });
    expect(result.location).toBe(`${app.url}/x#svc_error=auth.oauth_denied`);
  });

  it('fails with auth.oauth_provider_error for a provider error other than access_denied', async () => {
    const start = await startAuthorize(app.url, 'acme', '/x');
    const state = new URL(start.authorizationUrl).searchParams.get('state')!;
    const res = await fetch(
      `${app.url}/api/auth/oauth/acme/callback?state=${state}&error=temporarily_unavailable`,
      { headers: { cookie: start.cookie }, redirect: 'manual' },
    );
    expect(res.headers.get('location')).toBe(`${app.url}/x#svc_error=auth.oauth_provider_error`);
  });

  it('refuses a linked identity of an inactive or locked account at the callback (auth.oauth_login_failed)', async () => {
    const rt = app.app.runtime;
    const { eq } = await import('drizzle-orm');
    const { user } = rt.tables.core;
    for (const change of [{ isActive: false }, { lockedUntil: new Date(Date.now() + 3_600_000) }]) {
      const sub = `blocked-${Object.keys(change)[0]}`;
      const { res } = await loginWith(sub, { email: `${sub}@example.com`, email_verified: true });
      const me = await app.as(res.body.access_token).get('/api/auth/user');
      await rt.authDb.orm.update(user).set(change).where(eq(user.id, me.body.data.id));
      const again = await socialSignIn(app.url, 'acme', idp, sub);
      expect(again.fragment).toEqual({ svc_error: 'auth.oauth_login_failed' });
    }
  });

  it('answers 404 for an unknown provider and 502 for an unreachable one (which did not stop the start)', async () => {
    const unknown = await app.get('/api/auth/oauth/nope/authorize');
    expect(unknown.status).toBe(404);
    expect(unknown.body.detail[0]).toMatchObject({ code: 'auth.oauth_provider_unknown' });
    const down = await app.get('/api/auth/oauth/down/authorize');
    expect(down.status).toBe(502);
    expect(down.body.detail[0]).toMatchObject({ code: 'auth.oauth_provider_error' });
  });

  it('fails the callback with auth.oauth_provider_error when the provider goes away after the authorize', async () => {
    idp.accounts.set('gone', { sub: 'gone' });
    const start = await startAuthorize(app.url, 'acme');
    const callback = await idp.signIn(start.authorizationUrl, 'gone');
    await idp.suspend();
    try {
      const res = await fetch(callback, { headers: { cookie: start.cookie }, redirect: 'manual' });
      expect(res.headers.get('location')).toBe(`${app.url}/#svc_error=auth.oauth_provider_error`);
    } finally {
      await idp.resume();
    }
  });

  it.each([
    ['//evil.example'],
    ['/\\evil.example'],
    ['/ok\\path'],
    ['https://evil.example/'],
    ['javascript:alert(1)'],
    ['/line\nbreak'],
    // A C1 control character (Unicode's controls are U+0000 to U+001F and U+007F to U+009F).
    ['/next\u0085line'],
    ['http://localhost:5174/'],
  ])(
    'refuses redirect_to %j with 400 auth.oauth_redirect_invalid before any redirect',
    async (redirectTo) => {
      const res = await app.get(
        `/api/auth/oauth/acme/authorize?redirect_to=${encodeURIComponent(redirectTo)}`,
      );
      expect(res.status).toBe(400);
      expect(res.body.detail[0]).toMatchObject({ code: 'auth.oauth_redirect_invalid' });
    },
  );

  it('accepts a redirect_to on an allowed origin and sends the browser there', async () => {
    idp.accounts.set('spa-user', { sub: 'spa-user', email: 'spa@example.com', email_verified: true });
    const result = await socialSignIn(app.url, 'acme', idp, 'spa-user', {
      redirectTo: 'http://localhost:5173/done',
    });
    expect(result.target).toBe('http://localhost:5173/done');
    expect(result.fragment.svc_code).toMatch(/^[\w-]{43}$/);
  });

  it('lands on a redirect_to with a fragment of its own with svc_code as the whole fragment', async () => {
    idp.accounts.set('hash-router', { sub: 'hash-router', email: 'hr@example.com', email_verified: true });
    // "302 to redirect_to with #svc_code=<code>": a single-page app's hash route would otherwise become
    // `/app#/dashboard#svc_code=…`, which no client reads.
    const result = await socialSignIn(app.url, 'acme', idp, 'hash-router', { redirectTo: '/app#/dashboard' });
    expect(result.target).toBe(`${app.url}/app`);
    expect(result.fragment.svc_code).toMatch(/^[\w-]{43}$/);
  });

  it('refuses a state completed in another browser, and a replayed state, sending to the root of public_url', async () => {
    idp.accounts.set('victim', { sub: 'victim' });
    const other = await startAuthorize(app.url, 'acme');
    const foreign = await socialSignIn(app.url, 'acme', idp, 'victim', {
      redirectTo: '/x',
      callbackCookie: other.cookie,
    });
    expect(foreign.location).toBe(`${app.url}/#svc_error=auth.oauth_state_invalid`);
    const none = await socialSignIn(app.url, 'acme', idp, 'victim', { callbackCookie: null });
    expect(none.fragment).toEqual({ svc_error: 'auth.oauth_state_invalid' });
    const start = await startAuthorize(app.url, 'acme', '/x');
    const callback = await idp.signIn(start.authorizationUrl, 'victim');
    const first = await fetch(callback, { headers: { cookie: start.cookie }, redirect: 'manual' });
    expect(first.headers.get('location')).toMatch(/#svc_code=/);
    const replay = await fetch(callback, { headers: { cookie: start.cookie }, redirect: 'manual' });
    expect(replay.headers.get('location')).toBe(`${app.url}/#svc_error=auth.oauth_state_invalid`);
  });

  it('gives exactly one success to 20 parallel presentations of one exchange code', async () => {
    idp.accounts.set('racer', { sub: 'racer', email: 'racer@example.com', email_verified: true });
    const result = await socialSignIn(app.url, 'acme', idp, 'racer');
    const answers = await Promise.all(Array.from({ length: 20 }, () => exchange(result.fragment.svc_code)));
    expect(answers.filter((a) => a.status === 200)).toHaveLength(1);
    const refused = answers.filter((a) => a.status !== 200);
    expect(refused).toHaveLength(19);
    for (const a of refused) expect(a.body.detail[0]).toMatchObject({ code: 'auth.oauth_code_invalid' });
  });

  it.each([
    ['wrong-key'],
    ['alg-none'],
    ['wrong-iss'],
    ['wrong-aud'],
    ['wrong-nonce'],
    ['expired'],
    ['future-iat'],
    ['no-iat'],
  ] as const)(
    'fails the login with auth.oauth_token_invalid for an ID token tampered with: %s',
    async (how) => {
      idp.accounts.set('tampered', { sub: 'tampered', email: 'tampered@example.com', email_verified: true });
      idp.tamper = how;
      const result = await socialSignIn(app.url, 'acme', idp, 'tampered');
      expect(result.fragment).toEqual({ svc_error: 'auth.oauth_token_invalid' });
    },
  );

  it('follows a key rotation at the provider, fetching the new keys at most once a minute', async () => {
    idp.accounts.set('rotated', { sub: 'rotated' });
    expect((await loginWith('rotated')).res.status).toBe(200); // the old key is cached now
    await idp.rotateKeys();
    const early = await socialSignIn(app.url, 'acme', idp, 'rotated');
    expect(early.fragment).toEqual({ svc_error: 'auth.oauth_token_invalid' });
    moveClockAhead(61_000);
    const later = await socialSignIn(app.url, 'acme', idp, 'rotated');
    expect(later.fragment.svc_code).toBeDefined();
  });
});

function bindingOf(headers: Headers): string {
  return headers
    .getSetCookie()
    .find((c) => c.startsWith('svc_oauth_binding='))!
    .split(';')[0]!;
}
