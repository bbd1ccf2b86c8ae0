import { eq } from 'drizzle-orm';
import { failedLoginCount } from '../../../../testing/mfa.js';
import { logCapture } from '../../../../testing/smtp.js';
import {
  PASSKEY_TEST_ORIGIN,
  PASSKEY_TEST_SETTINGS,
  passkeyLogin,
  passkeyOptions,
  registerPasskey,
  SoftAuthenticator,
} from '../../../../testing/webauthn.js';
import type { CoreTables } from '../kernel/db/tables.js';
import type { SvcModule } from '../kernel/module.js';
import {
  describeEachCache,
  describeEachDatabase,
  startTestApp,
  type TestApp,
  type TestUser,
} from '../testing/index.js';
import { setCookies } from '../../../../testing/cookies.js';

/** Records the `login` events the app emits (wrapping whatever event sink is in place). */
function loginEvents(events: unknown[]): SvcModule {
  return {
    name: 'passkey-test-events',
    setup({ ports }) {
      const inner = ports.get('events');
      ports.provide(
        'events',
        new Proxy(inner, {
          get(target, key, receiver) {
            if (key !== 'emit') return Reflect.get(target, key, receiver);
            return (type: 'login', data: { userId: string; username: string }) => {
              if (type === 'login') events.push(data);
              target.emit(type, data);
            };
          },
        }),
      );
      return {};
    },
  };
}

function expectPasskeyInvalid(res: { status: number; body: any }) {
  expect(res.status).toBe(401);
  expect(res.body.detail).toHaveLength(1);
  expect(res.body.detail[0]).toMatchObject({ code: 'auth.passkey_invalid', loc: ['body', 'response'] });
}

describeEachDatabase('Passkey login', (database) => {
  let app: TestApp;
  const events: unknown[] = [];
  const logs = logCapture();
  let t: CoreTables;

  /** A user with one passkey on a fresh software authenticator. */
  async function userWithPasskey(username: string): Promise<{ user: TestUser; device: SoftAuthenticator }> {
    const user = await app.createUser({ username });
    const device = new SoftAuthenticator(PASSKEY_TEST_ORIGIN);
    const res = await registerPasskey(await app.loginAs(user), device);
    if (res.status !== 201) throw new Error(res.text);
    return { user, device };
  }
  const setUser = (id: string, values: Partial<CoreTables['user']['$inferInsert']>) =>
    app.app.runtime.authDb.orm.update(t.user).set(values).where(eq(t.user.id, id));

  beforeAll(async () => {
    app = await startTestApp({
      database,
      modules: [loginEvents(events)],
      logStream: logs.stream,
      settings: {
        ...PASSKEY_TEST_SETTINGS,
        log_level: 'WARNING',
        // SPEC-3 §5: the passkey login is a token-issuing route.
        cookie_sessions_enabled: true,
        csrf_trusted_origins: [PASSKEY_TEST_ORIGIN],
      },
    });
    t = app.app.runtime.tables.core as unknown as CoreTables;
  });
  afterAll(() => app.close());

  it('answers X-Svc-Session: cookie with the cookies and {user}, no token in the body; cross-site refused first (SPEC-3 §5)', async () => {
    const { user, device } = await userWithPasskey('carla');
    const cookieLogin = async (origin: string) => {
      const { challengeId, options } = await passkeyOptions(app);
      return app.post(
        '/api/auth/passkey/token',
        { challengeId, response: device.get(options) },
        { headers: { 'X-Svc-Session': 'cookie', Origin: origin } },
      );
    };
    const crossSite = await cookieLogin('https://evil.example');
    expect([crossSite.status, crossSite.body.detail[0].code]).toEqual([403, 'auth.csrf_failed']);
    expect(crossSite.headers.getSetCookie()).toEqual([]);

    const res = await cookieLogin(PASSKEY_TEST_ORIGIN);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ success: true, data: { user: { id: user.id, username: 'carla' } } });
    expect(Object.keys(res.body.data)).toEqual(['user']);
    expect(res.text).not.toMatch(/access_token|refresh_token|eyJ/);
    const cookies = setCookies(res);
    expect([...cookies.keys()].sort()).toEqual([
      '__Host-svc_csrf',
      '__Host-svc_session',
      '__Secure-svc_refresh',
    ]);
    expect(cookies.get('__Host-svc_session')).toMatch(/HttpOnly/);
    expect(cookies.get('__Secure-svc_refresh')).toMatch(/Path=\/api\/auth\/session/);
    const session = cookies.get('__Host-svc_session')!;
    const value = session.slice(session.indexOf('=') + 1, session.indexOf(';'));
    const me = await app.get('/api/auth/user', { headers: { Cookie: `__Host-svc_session=${value}` } });
    expect(me.body.data.username).toBe('carla');
    expect(events).toContainEqual({ userId: user.id, username: 'carla' });
  });

  it('logs in with a discoverable passkey: a bare token pair, the login event, lastUsedAt', async () => {
    const { user, device } = await userWithPasskey('alice');
    const res = await passkeyLogin(app, device);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      access_token: expect.any(String),
      token_type: 'bearer',
      refresh_token: expect.any(String),
    });
    const me = await app.as(res.body.access_token).get('/api/auth/user');
    expect(me.body.data.username).toBe('alice');
    expect(events).toContainEqual({ userId: user.id, username: 'alice' });
    const [passkey] = (await app.as(res.body.access_token).get('/api/auth/passkeys')).body.data;
    expect(passkey.lastUsedAt).not.toBeNull();
    const refreshed = await app.post('/api/auth/refresh-token', { refresh_token: res.body.refresh_token });
    expect(refreshed.status).toBe(200);
  });

  it('logs in with a username: options list that user’s passkeys', async () => {
    const { device } = await userWithPasskey('bob');
    const { options } = await passkeyOptions(app, 'BOB');
    expect(options.userVerification).toBe('required');
    expect(options.rpId).toBe('example.test');
    expect(options.allowCredentials).toEqual([
      {
        id: device.credentials[0]!.id.toString('base64url'),
        type: 'public-key',
        transports: ['hybrid', 'internal'],
      },
    ]);
    // The name's normal form finds the user too, as at the password login (kernel/identity.ts).
    expect((await passkeyOptions(app, 'ＢＯＢ')).options.allowCredentials).toEqual(options.allowCredentials);
    expect((await passkeyLogin(app, device, { username: 'bob' })).status).toBe(200);
  });

  it("refuses a passkey answering another user's username challenge", async () => {
    await userWithPasskey('carol');
    const { device } = await userWithPasskey('dave');
    const { challengeId, options } = await passkeyOptions(app, 'carol');
    const response = device.get({ ...options, allowCredentials: [] });
    expectPasskeyInvalid(await app.post('/api/auth/passkey/token', { challengeId, response }));
  });

  it('refuses a challenge used twice', async () => {
    const { device } = await userWithPasskey('erin');
    const { challengeId, options } = await passkeyOptions(app);
    const first = device.get(options);
    expect((await app.post('/api/auth/passkey/token', { challengeId, response: first })).status).toBe(200);
    // The same assertion again, and a fresh one (a higher counter) on the used challenge.
    expectPasskeyInvalid(await app.post('/api/auth/passkey/token', { challengeId, response: first }));
    const second = device.get(options);
    expectPasskeyInvalid(await app.post('/api/auth/passkey/token', { challengeId, response: second }));
    expectPasskeyInvalid(
      await app.post('/api/auth/passkey/token', { challengeId: crypto.randomUUID(), response: second }),
    );
  });

  it('refuses an assertion without user verification', async () => {
    const { device } = await userWithPasskey('frank');
    expectPasskeyInvalid(await passkeyLogin(app, device, { overrides: { userVerified: false } }));
    expect((await passkeyLogin(app, device)).status).toBe(200);
  });

  it('refuses a signature counter that goes backwards and logs a warning', async () => {
    const { device } = await userWithPasskey('grace');
    expect((await passkeyLogin(app, device, { overrides: { counter: 10 } })).status).toBe(200);
    logs.lines.length = 0;
    expectPasskeyInvalid(await passkeyLogin(app, device, { overrides: { counter: 10 } }));
    expectPasskeyInvalid(await passkeyLogin(app, device, { overrides: { counter: 3 } }));
    const warnings = logs.lines.filter((line) => line.includes('signature counter'));
    expect(warnings).toHaveLength(2);
    expect(warnings[0]).toMatch(/WARN/);
    expect((await passkeyLogin(app, device, { overrides: { counter: 11 } })).status).toBe(200);
  });

  it('refuses an origin not in webauthn_origins and an rp id not the configured one', async () => {
    const { device } = await userWithPasskey('heidi');
    const request = app.post.bind(app);
    expectPasskeyInvalid(await passkeyLogin(app, device, { overrides: { origin: 'https://evil.example' } }));
    // Forwarded headers name no origin: only the settings do.
    const { challengeId, options } = await passkeyOptions(app);
    device.credentials[0]!.rpId = 'evil.example';
    const response = device.get({ ...options, rpId: 'evil.example' });
    expectPasskeyInvalid(await request('/api/auth/passkey/token', { challengeId, response }));
  });

  it('refuses a deactivated account and a locked one with the same 401', async () => {
    const { user, device } = await userWithPasskey('ivan');
    await setUser(user.id, { isActive: false });
    expectPasskeyInvalid(await passkeyLogin(app, device));
    await setUser(user.id, { isActive: true, lockedUntil: new Date(Date.now() + 600_000) });
    expectPasskeyInvalid(await passkeyLogin(app, device));
    await setUser(user.id, { lockedUntil: null });
    expect((await passkeyLogin(app, device)).status).toBe(200);
  });

  it('resets the failed-login counter on success and does not count refused assertions on it', async () => {
    const { user, device } = await userWithPasskey('ivy');
    await setUser(user.id, { failedLoginCount: 2 });
    expectPasskeyInvalid(await passkeyLogin(app, device, { overrides: { userVerified: false } }));
    expect(await failedLoginCount(app, user.id)).toBe(2);
    expect((await passkeyLogin(app, device)).status).toBe(200);
    expect(await failedLoginCount(app, user.id)).toBe(0);
  });

  it('refuses a deleted passkey', async () => {
    const { user, device } = await userWithPasskey('judy');
    const client = await app.loginAs(user);
    const [passkey] = (await client.get('/api/auth/passkeys')).body.data;
    expect((await client.delete(`/api/auth/passkeys/${passkey.id}`)).status).toBe(204);
    expectPasskeyInvalid(await passkeyLogin(app, device));
  });

  it('gives an unknown username options of the same shape as a known one, the same each time', async () => {
    await userWithPasskey('kim');
    await app.createUser({ username: 'lee' }); // known, no passkey
    /** The options with every value but the fixed ones and the list of credentials replaced by its type. */
    const shape = (options: Record<string, unknown>) =>
      JSON.stringify({ ...options, allowCredentials: undefined }, (key, value: unknown) =>
        typeof value === 'string' && key !== 'userVerification' && key !== 'rpId' ? typeof value : value,
      );
    const descriptorKeys = (options: Record<string, unknown>) =>
      (options.allowCredentials as Record<string, unknown>[]).map((d) => Object.keys(d).sort().join());
    const known = await passkeyOptions(app, 'kim');
    const unknown = await passkeyOptions(app, 'nobody-here');
    const noPasskey = await passkeyOptions(app, 'lee');
    expect(Object.keys(unknown)).toEqual(Object.keys(known));
    expect(shape(unknown.options)).toBe(shape(known.options));
    expect(shape(noPasskey.options)).toBe(shape(known.options));
    for (const other of [unknown, noPasskey]) {
      expect(new Set(descriptorKeys(other.options))).toEqual(new Set(descriptorKeys(known.options)));
    }
    expect((await passkeyOptions(app, 'nobody-here')).options.allowCredentials).toEqual(
      unknown.options.allowCredentials,
    );
    expect((await passkeyOptions(app, 'other-name')).options.allowCredentials).not.toEqual(
      unknown.options.allowCredentials,
    );
  });

  it('gives unknown names the counts, id lengths and transports real accounts have (SPEC-3 §7 rule 5)', async () => {
    const device = new SoftAuthenticator(PASSKEY_TEST_ORIGIN);
    const user = await app.createUser({ username: 'many_keys' });
    const client = await app.loginAs(user);
    for (let i = 0; i < 2; i++) expect((await registerPasskey(client, device)).status).toBe(201);
    /** A list of credentials as an observer compares them: how many, and each one's id length and transports. */
    const look = (options: { allowCredentials?: { id: string; transports?: string[] }[] }) =>
      (options.allowCredentials ?? []).map(
        (d) => `${Buffer.from(d.id, 'base64url').length}:${(d.transports ?? []).join(',')}`,
      );
    const known = look((await passkeyOptions(app, 'many_keys')).options);
    expect(known).toEqual(['16:hybrid,internal', '16:hybrid,internal']);
    const lists = await Promise.all(
      Array.from({ length: 60 }, async (_, i) => look((await passkeyOptions(app, `ghost-${i}`)).options)),
    );
    // The same as before for each name (no new draw per request).
    expect(look((await passkeyOptions(app, 'ghost-7')).options)).toEqual(lists[7]);
    // Like a population of real accounts: one passkey or several, of several kinds of authenticator, and
    // among them lists looking exactly like the known user's.
    const counts = new Set(lists.map((list) => list.length));
    const kinds = new Set(lists.flat());
    expect(counts.size).toBeGreaterThan(1);
    expect([...counts].every((n) => n >= 1 && n <= 4)).toBe(true);
    expect(kinds.size).toBeGreaterThan(2);
    expect(kinds).toContain('16:hybrid,internal');
    expect(lists.some((list) => list.length === 2)).toBe(true);
    for (const kind of kinds) expect(kind).toMatch(/^(16|20|32|48|64):[a-z,]+$/);
  });

  it('answers malformed bodies with 422, never 500', async () => {
    expect((await app.post('/api/auth/passkey/token', { challengeId: 'x', response: {} })).status).toBe(422);
    const { challengeId } = await passkeyOptions(app);
    const garbage = {
      id: 'AAAA',
      rawId: 'AAAA',
      type: 'public-key',
      response: { clientDataJSON: 'AAAA', authenticatorData: 'AAAA', signature: 'AAAA' },
    };
    expectPasskeyInvalid(await app.post('/api/auth/passkey/token', { challengeId, response: garbage }));
  });
});

describeEachDatabase('Passkey login rate limit', (database) => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({
      database,
      settings: {
        ...PASSKEY_TEST_SETTINGS,
        auth_rate_limit: 2,
        wrap_auth_token_response: true,
        activity_log_enabled: true,
      },
    });
  });
  afterAll(() => app.close());

  it('counts passkey logins against auth_rate_limit with password logins; the pair follows the envelope policy', async () => {
    const device = new SoftAuthenticator(PASSKEY_TEST_ORIGIN);
    const user = await app.createUser({ username: 'alice' });
    await registerPasskey(await app.loginAs(user), device); // one password login counted
    const ok = await passkeyLogin(app, device);
    expect(ok.status).toBe(200);
    // wrap_auth_token_response: enveloped like POST /auth/token.
    expect(ok.body).toMatchObject({ success: true, data: { token_type: 'bearer' } });
    const limited = await passkeyLogin(app, device);
    expect(limited.status).toBe(429);
    expect(limited.body.detail[0].code).toBe('auth.rate_limited');
    expect(limited.headers.get('retry-after')).toMatch(/^\d+$/);
  });

  it('records passkey logins in the activity log like password logins', async () => {
    const recent = await app.app.runtime.ports.get('activity').recent(20);
    const logins = (recent ?? []).filter((entry) => String(entry.path).startsWith('/api/auth/'));
    expect(logins).toContainEqual(
      expect.objectContaining({ method: 'POST', path: '/api/auth/token', status_code: 200 }),
    );
    expect(logins).toContainEqual(
      expect.objectContaining({ method: 'POST', path: '/api/auth/passkey/token', status_code: 200 }),
    );
    expect(logins).toContainEqual(
      expect.objectContaining({ method: 'POST', path: '/api/auth/passkey/token', status_code: 429 }),
    );
  });
});

describeEachDatabase('Passkey options rate limit', (database) => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ database, settings: { ...PASSKEY_TEST_SETTINGS, auth_rate_limit: 3 } });
  });
  afterAll(() => app.close());

  it('counts POST /auth/passkey/options against auth_rate_limit (SPEC-3 §7 rule 6)', async () => {
    // Each answer stores a pending challenge: anonymous requests are bounded like logins.
    for (const username of ['ann', undefined, 'nobody']) await passkeyOptions(app, username);
    const limited = await app.post('/api/auth/passkey/options', { username: 'ann' });
    expect(limited.status).toBe(429);
    expect(limited.body.detail[0].code).toBe('auth.rate_limited');
    expect(limited.headers.get('retry-after')).toMatch(/^\d+$/);
  });
});

describeEachCache('Passkey challenges across hosts', (cache) => {
  let database: { url: string; drop(): Promise<void> };
  let first: TestApp;
  let second: TestApp;
  beforeAll(async () => {
    const { createSqliteDatabase } = await import('../testing/index.js');
    database = createSqliteDatabase();
    const options = { database: { dialect: 'sqlite' as const, label: 'sqlite', url: database.url }, cache };
    first = await startTestApp({ ...options, settings: PASSKEY_TEST_SETTINGS });
    second = await startTestApp({ ...options, settings: PASSKEY_TEST_SETTINGS });
  });
  afterAll(async () => {
    await first?.close();
    await second?.close();
    await database?.drop();
  });

  it('a challenge issued by one app is answered once, at whichever app receives it', async () => {
    const device = new SoftAuthenticator(PASSKEY_TEST_ORIGIN);
    await registerPasskey(await first.loginAs(await first.createUser({ username: 'alice' })), device);
    const { challengeId, options } = await passkeyOptions(first);
    const response = device.get(options);
    const [a, b] = await Promise.all([
      second.post('/api/auth/passkey/token', { challengeId, response }),
      first.post('/api/auth/passkey/token', { challengeId, response }),
    ]);
    const statuses = [a.status, b.status].sort();
    // Redis is shared: exactly one wins. The in-process cache is each app's own: the other app never saw it.
    expect(statuses).toEqual([200, 401]);
  });
});

describeEachDatabase('Passkey login with require_verified_email', (database) => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({
      database,
      settings: { ...PASSKEY_TEST_SETTINGS, require_verified_email: true },
    });
  });
  afterAll(() => app.close());

  // SPEC-2 "Email verification" as for POST /auth/token: the refusal is told only after the credential verified
  // (refused assertions stay the uniform 401, tested above).
  it('answers 403 auth.email_unverified after a valid assertion of an account whose email is not verified', async () => {
    const t = app.app.runtime.tables.core as unknown as CoreTables;
    const verify = (id: string, at: Date | null) =>
      app.app.runtime.authDb.orm.update(t.user).set({ emailVerifiedAt: at }).where(eq(t.user.id, id));
    const user = await app.createUser({ username: 'carol', email: 'carol@example.com' });
    await verify(user.id, new Date());
    const device = new SoftAuthenticator(PASSKEY_TEST_ORIGIN);
    expect((await registerPasskey(await app.loginAs(user), device)).status).toBe(201);
    expect((await passkeyLogin(app, device)).status).toBe(200);
    await verify(user.id, null);
    const refused = await passkeyLogin(app, device);
    expect(refused.status).toBe(403);
    expect(refused.body.detail[0].code).toBe('auth.email_unverified');
  });
});
