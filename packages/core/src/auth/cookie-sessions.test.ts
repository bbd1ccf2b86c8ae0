import { tmpdir } from 'node:os';
import jwt from 'jsonwebtoken';
import { describeEachDatabase, startTestApp, type TestApp, type TestResponse } from '../testing/index.js';
import { enrolTotp } from '../../../../testing/mfa.js';
import { eventually, startMailApp, stopMailApp, type TestSmtp } from '../../../../testing/smtp.js';
import { sessionCookieHeaders } from '../kernel/browser-session.js';
import { ConfigError, loadSettings } from '../kernel/config/load.js';
import { setCookies } from '../../../../testing/cookies.js';

const load = (settings: Record<string, unknown>) =>
  loadSettings({ env: {}, baseDir: tmpdir(), overrides: { secret_key: 'x'.repeat(32), ...settings } });

// SPEC-3 §5 "Browser sessions (cookies)": the routes, the cookies' names and attributes, the guard reading
// the session cookie with the bearer's rules, CSRF (double submit and trusted origins), the cookie answer of
// the token-issuing routes, event tickets with the cookie, personal tokens refused.

const ORIGIN = 'https://app.example';
const OTHER_TRUSTED = 'https://admin.example';
const PASSWORD = 'correct-horse-battery';

/** A cookie jar for one browser: what the server set, sent back as the browser would (all paths here). */
class Jar {
  readonly values = new Map<string, string>();
  take(res: TestResponse): void {
    for (const [name, line] of setCookies(res)) {
      const value = line.slice(name.length + 1, line.indexOf(';'));
      if (/Max-Age=0(;|$)/.test(line)) this.values.delete(name);
      else this.values.set(name, value);
    }
  }
  get header(): string {
    return [...this.values].map(([k, v]) => `${k}=${v}`).join('; ');
  }
  get csrf(): string {
    return this.values.get('__Host-svc_csrf') ?? '';
  }
}

const expiresIn = (line: string) => Number(/Max-Age=(\d+)/.exec(line)?.[1]);

describeEachDatabase('Browser sessions (cookies)', (database) => {
  let app: TestApp;
  let alice: { id: string; username: string; password: string };

  /** A cookie login of `username` from the trusted origin; the jar holds its cookies. */
  async function cookieLogin(username: string, jar = new Jar()): Promise<{ jar: Jar; res: TestResponse }> {
    const res = await app.post('/api/auth/session', undefined, {
      form: { username, password: PASSWORD },
      headers: { Origin: ORIGIN },
    });
    jar.take(res);
    return { jar, res };
  }

  /** A same-site unsafe request with the jar's cookies and the CSRF header. */
  const sameSite = (jar: Jar, extra: Record<string, string> = {}) => ({
    Cookie: jar.header,
    Origin: ORIGIN,
    'X-CSRF-Token': jar.csrf,
    ...extra,
  });

  let smtp: TestSmtp;

  beforeAll(async () => {
    ({ app, smtp } = await startMailApp(database, {
      cookie_sessions_enabled: true,
      public_url: ORIGIN,
      csrf_trusted_origins: [OTHER_TRUSTED],
      personal_tokens_enabled: true,
      mfa_enabled: true,
      events_broadcast_enabled: true,
      activity_log_enabled: true,
      activity_log_sync: true,
      refresh_reuse_grace_seconds: 0,
    }));
    alice = await app.createUser({ username: 'alice', email: 'alice@example.com' });
    await app.createUser({ username: 'bob' });
  });
  afterAll(() => stopMailApp({ app, smtp }));

  it('logs in with POST /auth/session: {user} enveloped and the three cookies with the SPEC attributes', async () => {
    const { res } = await cookieLogin('alice');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ success: true, data: { user: { id: alice.id, username: 'alice' } } });
    expect(res.body.data.user.permissions).toEqual([]);
    expect(res.body.data.access_token).toBeUndefined();
    const cookies = setCookies(res);
    expect([...cookies.keys()].sort()).toEqual([
      '__Host-svc_csrf',
      '__Host-svc_session',
      '__Secure-svc_refresh',
    ]);

    const session = cookies.get('__Host-svc_session')!;
    expect(session).toMatch(
      /^__Host-svc_session=[\w-]+\.[\w-]+\.[\w-]+; Path=\/; Max-Age=1800; Expires=[^;]+ GMT; HttpOnly; Secure; SameSite=Lax$/,
    );
    expect(session).not.toContain('Domain=');
    const access = session.slice('__Host-svc_session='.length, session.indexOf(';'));
    const claims = jwt.decode(access) as { exp: number; iat: number; sid: string };
    expect(claims.exp - claims.iat).toBe(expiresIn(session));

    const refresh = cookies.get('__Secure-svc_refresh')!;
    expect(refresh).toMatch(
      /^__Secure-svc_refresh=[\w-]+\.[\w-]+\.[\w-]+; Path=\/api\/auth\/session; Max-Age=604800; Expires=[^;]+ GMT; HttpOnly; Secure; SameSite=Strict$/,
    );

    const csrf = cookies.get('__Host-svc_csrf')!;
    // Readable by scripts, no expiry (a browser-session cookie).
    expect(csrf).toMatch(/^__Host-svc_csrf=[\w-]{43}; Path=\/; Secure; SameSite=Strict$/);
  });

  it('accepts JSON credentials too, and answers a refused login with the 401 of POST /auth/token and no cookie', async () => {
    const ok = await app.post(
      '/api/auth/session',
      { username: 'bob', password: PASSWORD },
      { headers: { Origin: ORIGIN } },
    );
    expect(ok.status).toBe(200);
    expect(ok.body.data.user.username).toBe('bob');

    const wrong = await app.post('/api/auth/session', undefined, {
      form: { username: 'alice', password: 'wrong-password-123' },
      headers: { Origin: ORIGIN },
    });
    const bearerWrong = await app.post('/api/auth/token', undefined, {
      form: { username: 'alice', password: 'wrong-password-123' },
    });
    expect(wrong.status).toBe(401);
    expect(wrong.body.detail).toEqual(bearerWrong.body.detail);
    expect(wrong.headers.getSetCookie()).toEqual([]);
  });

  it('refuses a cross-site login (untrusted Origin, or no Origin nor Referer) with 403 auth.csrf_failed', async () => {
    const crossSite: Record<string, string>[] = [
      { Origin: 'https://evil.example' },
      {},
      { Referer: 'https://evil.example/page' },
    ];
    for (const headers of crossSite) {
      const res = await app.post('/api/auth/session', undefined, {
        form: { username: 'alice', password: PASSWORD },
        headers,
      });
      expect(res.status).toBe(403);
      expect(res.body.detail[0]).toMatchObject({ code: 'auth.csrf_failed' });
      expect(res.headers.getSetCookie()).toEqual([]);
    }
    // A trusted origin besides public_url's, and a Referer on a trusted origin without an Origin.
    const other = await app.post('/api/auth/session', undefined, {
      form: { username: 'alice', password: PASSWORD },
      headers: { Origin: OTHER_TRUSTED },
    });
    expect(other.status).toBe(200);
    const referer = await app.post('/api/auth/session', undefined, {
      form: { username: 'alice', password: PASSWORD },
      headers: { Referer: `${ORIGIN}/login?next=/` },
    });
    expect(referer.status).toBe(200);
  });

  it('authenticates GET requests by the session cookie under the bearer rules (session revocation included)', async () => {
    const { jar } = await cookieLogin('alice');
    const me = await app.get('/api/auth/user', { headers: { Cookie: jar.header } });
    expect(me.status).toBe(200);
    expect(me.body.data.username).toBe('alice');
    // The session is a session like a bearer login's: listed as current, and ending it refuses the cookie.
    const sessions = await app.get('/api/auth/sessions', { headers: { Cookie: jar.header } });
    const current = sessions.body.data.find((s: { current: boolean }) => s.current);
    expect(current).toBeDefined();
    const bearer = await app.loginAs(alice);
    expect((await bearer.delete(`/api/auth/sessions/${current.id}`)).status).toBe(204);
    const after = await app.get('/api/auth/user', { headers: { Cookie: jar.header } });
    expect(after.status).toBe(401);
    expect(after.body.detail[0]).toMatchObject({ code: 'auth.session_revoked' });
  });

  it('lets an Authorization header win over the cookie', async () => {
    const { jar } = await cookieLogin('alice');
    const bob = await app.loginAs({ username: 'bob', password: PASSWORD });
    const res = await app.get('/api/auth/user', {
      headers: { Cookie: jar.header, Authorization: `Bearer ${bob.accessToken}` },
    });
    expect(res.body.data.username).toBe('bob');
    const bad = await app.get('/api/auth/user', {
      headers: { Cookie: jar.header, Authorization: 'Bearer nope' },
    });
    expect(bad.status).toBe(401);
  });

  it('refuses an unsafe cookie request that is cross-site or lacks X-CSRF-Token = the CSRF cookie (403 auth.csrf_failed)', async () => {
    const { jar } = await cookieLogin('alice');
    const body = { firstName: 'Alice' };
    const cases: Record<string, string>[] = [
      { Cookie: jar.header, Origin: ORIGIN }, // no header
      { Cookie: jar.header, Origin: ORIGIN, 'X-CSRF-Token': 'x'.repeat(43) }, // wrong value
      { Cookie: jar.header, Origin: 'https://evil.example', 'X-CSRF-Token': jar.csrf }, // cross-site
      { Cookie: jar.header, 'X-CSRF-Token': jar.csrf }, // neither Origin nor Referer
    ];
    for (const headers of cases) {
      const res = await app.patch('/api/auth/user', body, { headers });
      expect(res.status).toBe(403);
      expect(res.body.detail[0]).toMatchObject({ code: 'auth.csrf_failed', loc: ['header', 'X-CSRF-Token'] });
    }
    const ok = await app.patch('/api/auth/user', body, { headers: sameSite(jar) });
    expect(ok.status).toBe(200);
    expect(ok.body.data.firstName).toBe('Alice');
    // A bearer request needs no CSRF header (no ambient credential).
    const bearer = await app.loginAs(alice);
    expect(
      (await bearer.patch('/api/auth/user', body, { headers: { Origin: 'https://evil.example' } })).status,
    ).toBe(200);
  });

  it("records a cookie request's user in the activity log", async () => {
    const { jar } = await cookieLogin('alice');
    expect(
      (await app.patch('/api/auth/user', { lastName: 'Cookie' }, { headers: sameSite(jar) })).status,
    ).toBe(200);
    const admin = await app.loginAs(await app.createUser({ username: 'auditor', isSuperuser: true }));
    const entries = await admin.get(`/api/admin/audit/activity?userId=${alice.id}&method=PATCH`);
    expect(entries.body.data[0]).toMatchObject({
      userId: alice.id,
      username: 'alice',
      path: '/api/auth/user',
    });
  });

  it('refreshes with the refresh cookie: rotation, new cookies, {user}; CSRF required; reuse refused', async () => {
    const { jar } = await cookieLogin('alice');
    const oldRefresh = jar.values.get('__Secure-svc_refresh')!;
    const oldCsrf = jar.csrf;
    const noCsrf = await app.post('/api/auth/session/refresh', undefined, {
      headers: { Cookie: jar.header, Origin: ORIGIN },
    });
    expect(noCsrf.status).toBe(403);
    expect(noCsrf.body.detail[0].code).toBe('auth.csrf_failed');
    const crossSite = await app.post('/api/auth/session/refresh', undefined, {
      headers: { ...sameSite(jar), Origin: 'https://evil.example' },
    });
    expect(crossSite.status).toBe(403);

    const res = await app.post('/api/auth/session/refresh', undefined, { headers: sameSite(jar) });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ success: true, data: { user: { username: 'alice' } } });
    expect([...setCookies(res).keys()].sort()).toEqual([
      '__Host-svc_csrf',
      '__Host-svc_session',
      '__Secure-svc_refresh',
    ]);
    jar.take(res);
    expect(jar.values.get('__Secure-svc_refresh')).not.toBe(oldRefresh);
    expect(jar.csrf).not.toBe(oldCsrf); // renewed at each refresh
    expect((await app.get('/api/auth/user', { headers: { Cookie: jar.header } })).status).toBe(200);

    // The spent refresh token again (grace 0 here): refused, and the whole login ends, as POST /auth/refresh-token.
    const reuse = await app.post('/api/auth/session/refresh', undefined, {
      headers: sameSite(jar, { Cookie: `__Secure-svc_refresh=${oldRefresh}; __Host-svc_csrf=${jar.csrf}` }),
    });
    expect(reuse.status).toBe(401);
    expect(reuse.body.detail[0].code).toBe('auth.refresh_token_revoked');
    const next = await app.post('/api/auth/session/refresh', undefined, { headers: sameSite(jar) });
    expect(next.status).toBe(401);

    const none = await app.post('/api/auth/session/refresh', undefined, {
      headers: { Origin: ORIGIN, Cookie: `__Host-svc_csrf=${jar.csrf}`, 'X-CSRF-Token': jar.csrf },
    });
    expect(none.status).toBe(401);
    expect(none.body.detail[0]).toMatchObject({
      code: 'auth.refresh_token_invalid',
      loc: ['cookie', '__Secure-svc_refresh'],
    });
  });

  it('ends the session with DELETE /auth/session and clears the cookies; other sessions stay', async () => {
    const other = await app.loginAs(alice);
    const { jar } = await cookieLogin('alice');
    const refresh = jar.values.get('__Secure-svc_refresh')!;
    const csrfMissing = await app.delete('/api/auth/session', {
      headers: { Cookie: jar.header, Origin: ORIGIN },
    });
    expect(csrfMissing.status).toBe(403);

    const res = await app.delete('/api/auth/session', { headers: sameSite(jar) });
    expect(res.status).toBe(204);
    const cleared = setCookies(res);
    expect(cleared.get('__Host-svc_session')).toBe(
      '__Host-svc_session=; Path=/; Max-Age=0; Expires=Thu, 01 Jan 1970 00:00:00 GMT; HttpOnly; Secure; SameSite=Lax',
    );
    expect(cleared.get('__Secure-svc_refresh')).toBe(
      '__Secure-svc_refresh=; Path=/api/auth/session; Max-Age=0; Expires=Thu, 01 Jan 1970 00:00:00 GMT; HttpOnly; Secure; SameSite=Strict',
    );
    expect(cleared.get('__Host-svc_csrf')).toBe(
      '__Host-svc_csrf=; Path=/; Max-Age=0; Expires=Thu, 01 Jan 1970 00:00:00 GMT; Secure; SameSite=Strict',
    );
    expect((await app.get('/api/auth/user', { headers: { Cookie: jar.header } })).status).toBe(401);
    const refreshAgain = await app.post('/api/auth/refresh-token', { refresh_token: refresh });
    expect(refreshAgain.status).toBe(401);
    expect((await other.get('/api/auth/user')).status).toBe(200);
  });

  it('refuses personal access tokens on the cookie routes (403 access.token_not_allowed)', async () => {
    const bearer = await app.loginAs(alice);
    const created = await bearer.post('/api/auth/tokens', { name: 'ci', expiresInDays: 30 });
    expect(created.status).toBe(201);
    const pat = app.as(created.body.data.token);
    for (const res of [
      await pat.post(
        '/api/auth/session',
        { username: 'alice', password: PASSWORD },
        { headers: { Origin: ORIGIN } },
      ),
      await pat.post('/api/auth/session/refresh', undefined, { headers: { Origin: ORIGIN } }),
      await pat.delete('/api/auth/session'),
    ]) {
      expect(res.status).toBe(403);
      expect(res.body.detail[0].code).toBe('access.token_not_allowed');
    }
    // A personal token is never read from the session cookie.
    const asCookie = await app.get('/api/auth/user', {
      headers: { Cookie: `__Host-svc_session=${created.body.data.token}` },
    });
    expect(asCookie.status).toBe(401);
  });

  it('issues an event ticket to a cookie session', async () => {
    const { jar } = await cookieLogin('alice');
    const res = await app.post('/api/core/events/ticket', undefined, { headers: sameSite(jar) });
    expect(res.status).toBe(200);
    expect(typeof res.body.ticket).toBe('string');
  });

  it('completes an MFA login with cookies: POST /auth/session gives the step, POST /mfa/verify with X-Svc-Session: cookie the cookies', async () => {
    const carol = await app.createUser({ username: 'carol' });
    const { backupCodes } = await enrolTotp(app, carol);
    const step = await app.post('/api/auth/session', undefined, {
      form: { username: 'carol', password: PASSWORD },
      headers: { Origin: ORIGIN },
    });
    expect(step.status).toBe(200);
    expect(step.body).toMatchObject({ success: true, data: { mfa_required: true } });
    expect(step.headers.getSetCookie()).toEqual([]);
    const mfaToken = step.body.data.mfa_token as string;

    const crossSite = await app.post(
      '/api/mfa/verify',
      { mfa_token: mfaToken, code: backupCodes[0] },
      { headers: { 'X-Svc-Session': 'cookie', Origin: 'https://evil.example' } },
    );
    expect(crossSite.status).toBe(403);
    expect(crossSite.body.detail[0].code).toBe('auth.csrf_failed');

    const res = await app.post(
      '/api/mfa/verify',
      { mfa_token: mfaToken, code: backupCodes[0] },
      { headers: { 'X-Svc-Session': 'cookie', Origin: ORIGIN } },
    );
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ success: true, data: { user: { id: carol.id, username: 'carol' } } });
    const jar = new Jar();
    jar.take(res);
    expect([...jar.values.keys()].sort()).toEqual([
      '__Host-svc_csrf',
      '__Host-svc_session',
      '__Secure-svc_refresh',
    ]);
    expect((await app.get('/api/auth/user', { headers: { Cookie: jar.header } })).body.data.username).toBe(
      'carol',
    );

    // Without the header, the route answers its token pair as before.
    const plain = await app.post('/api/mfa/verify', {
      mfa_token: (
        await app.post('/api/auth/token', undefined, { form: { username: 'carol', password: PASSWORD } })
      ).body.mfa_token,
      code: backupCodes[1],
    });
    expect(plain.status).toBe(200);
    expect(typeof plain.body.access_token).toBe('string');
    expect(plain.headers.getSetCookie()).toEqual([]);
  });

  it('accepts an invitation with X-Svc-Session: cookie: the cookies and {user}; cross-site refused first', async () => {
    const admin = await app.loginAs(await app.createUser({ username: 'inviter', isSuperuser: true }));
    expect((await admin.post('/api/admin/user/invite', { email: 'nora@example.com' })).status).toBe(201);
    await eventually(() => smtp.messages.some((m) => m.envelopeTo.includes('nora@example.com')));
    const text = smtp.messages.find((m) => m.envelopeTo.includes('nora@example.com'))!.text ?? '';
    const token = decodeURIComponent(/accept-invitation\?token=(\S+)/.exec(text)![1]!);
    const body = { token, password: 'invited-users-passphrase' };
    const crossSite = await app.post('/api/auth/invitation/accept', body, {
      headers: { 'X-Svc-Session': 'cookie', Origin: 'https://evil.example' },
    });
    expect([crossSite.status, crossSite.body.detail[0].code]).toEqual([403, 'auth.csrf_failed']);
    // Refused before anything was used up: the same token still works from the trusted origin.
    const res = await app.post('/api/auth/invitation/accept', body, {
      headers: { 'X-Svc-Session': 'cookie', Origin: ORIGIN },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ success: true, data: { user: { username: 'nora@example.com' } } });
    expect([...setCookies(res).keys()].sort()).toEqual([
      '__Host-svc_csrf',
      '__Host-svc_session',
      '__Secure-svc_refresh',
    ]);
  });

  it("puts the CSRF token in the account pages' forms (hidden csrfToken) and refuses a submit without it", async () => {
    const page = await fetch(`${app.url}/account/reset-password?token=${'A'.repeat(43)}`);
    expect(page.status).toBe(200);
    const [line] = page.headers.getSetCookie();
    expect(line).toMatch(/^__Host-svc_csrf=[\w-]{43}; Path=\/; Secure; SameSite=Strict$/);
    const csrf = line!.slice('__Host-svc_csrf='.length, line!.indexOf(';'));
    expect(await page.text()).toContain(`<input type="hidden" name="csrfToken" value="${csrf}">`);

    const submit = (fields: Record<string, string>) =>
      fetch(`${app.url}/account/reset-password`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded', Cookie: `__Host-svc_csrf=${csrf}` },
        body: new URLSearchParams({
          token: 'A'.repeat(43),
          secret: 'a-new-password-1',
          confirm: 'a-new-password-1',
          ...fields,
        }),
      });
    const refused = await submit({ csrfToken: 'wrong' });
    expect(refused.status).toBe(403);
    expect(await refused.text()).toContain('cross-site');
    // With the token, the form is handled as before (here: an unknown reset token).
    const handled = await submit({ csrfToken: csrf });
    expect(handled.status).toBe(400);
    // A browser already holding the cookie gets the same value back in the form, and no new cookie.
    const again = await fetch(`${app.url}/account/verify-email?token=x`, {
      headers: { Cookie: `__Host-svc_csrf=${csrf}` },
    });
    expect(again.headers.getSetCookie()).toEqual([]);
    expect(await again.text()).toContain(`name="csrfToken" value="${csrf}"`);
  });

  it('allows credentials for trusted origins only in CORS', async () => {
    const trusted = await app.get('/api/health', { headers: { Origin: OTHER_TRUSTED } });
    expect(trusted.headers.get('access-control-allow-origin')).toBe(OTHER_TRUSTED);
    expect(trusted.headers.get('access-control-allow-credentials')).toBe('true');
    const other = await app.get('/api/health', { headers: { Origin: 'https://evil.example' } });
    expect(other.headers.get('access-control-allow-origin')).toBe('*');
    expect(other.headers.get('access-control-allow-credentials')).toBeNull();
  });
});

describeEachDatabase('Browser sessions while cookie_sessions_enabled is false', (database) => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ database, settings: { public_url: ORIGIN } });
    await app.createUser({ username: 'dave' });
  });
  afterAll(() => app.close());

  it('has no cookie routes (404), ignores the session cookie and X-Svc-Session', async () => {
    const login = await app.post('/api/auth/session', undefined, {
      form: { username: 'dave', password: PASSWORD },
      headers: { Origin: ORIGIN },
    });
    expect(login.status).toBe(404);
    const dave = await app.loginAs({ username: 'dave', password: PASSWORD });
    const me = await app.get('/api/auth/user', {
      headers: { Cookie: `__Host-svc_session=${dave.accessToken}` },
    });
    expect(me.status).toBe(401);
    const page = await fetch(`${app.url}/account/verify-email?token=x`);
    expect(page.headers.getSetCookie()).toEqual([]);
    expect(await page.text()).not.toContain('csrfToken');
  });
});

describe('Browser sessions: cookie names and attributes by setting', () => {
  it.each([
    [{ public_url: 'http://localhost:8000' }, ['svc_csrf', 'svc_refresh', 'svc_session'], false],
    [{ public_url: 'http://127.0.0.2' }, ['svc_csrf', 'svc_refresh', 'svc_session'], false],
    [{ public_url: 'http://[::1]:3000' }, ['svc_csrf', 'svc_refresh', 'svc_session'], false],
    [
      { public_url: 'http://app.internal' },
      ['__Host-svc_csrf', '__Host-svc_session', '__Secure-svc_refresh'],
      true,
    ],
    [{ public_url: '' }, ['__Host-svc_csrf', '__Host-svc_session', '__Secure-svc_refresh'], true],
    [
      { public_url: 'https://app.example.com', cookie_domain: 'example.com' },
      ['__Secure-svc_csrf', '__Secure-svc_refresh', '__Secure-svc_session'],
      true,
    ],
    [
      { public_url: 'http://localhost', cookie_secure: 'true' },
      ['__Host-svc_csrf', '__Host-svc_session', '__Secure-svc_refresh'],
      true,
    ],
    [
      { public_url: 'https://app.example', cookie_secure: 'false' },
      ['svc_csrf', 'svc_refresh', 'svc_session'],
      false,
    ],
  ] as const)('with %j the cookies are %j (Secure: %s)', (settings, names, secure) => {
    const loaded = load(settings);
    const lines = sessionCookieHeaders(loaded, {
      accessToken: 'a',
      accessMaxAge: 60,
      refreshToken: 'r',
      refreshMaxAge: 120,
      csrfToken: 'c',
    });
    expect(lines.map((l) => l.slice(0, l.indexOf('='))).sort()).toEqual([...names]);
    for (const line of lines) expect(line.includes('; Secure;')).toBe(secure);
    const domain = 'cookie_domain' in settings ? settings.cookie_domain : undefined;
    for (const line of lines) expect(line.includes(`Domain=${domain}`)).toBe(domain !== undefined);
  });
});

describe('Browser sessions and impersonation: settings outside their range refuse the start', () => {
  it.each([
    ['cookie_secure', 'maybe'],
    ['cookie_domain', 'https://example.com'],
    ['cookie_domain', 'exa mple.com'],
    ['csrf_trusted_origins', 'https://app.example/path'],
    ['csrf_trusted_origins', 'app.example'],
    ['impersonation_expire_minutes', 0],
    ['impersonation_expire_minutes', 121],
  ])('%s = %j', (name, value) => {
    expect(() => load({ [name]: value })).toThrow(ConfigError);
    expect(() => load({ [name]: value })).toThrow(new RegExp(name));
  });
});
