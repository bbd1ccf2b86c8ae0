import { hash } from '@node-rs/argon2';
import { eq } from 'drizzle-orm';
import jwt from 'jsonwebtoken';
import type { CoreTables } from '../kernel/db/tables.js';
import type { SvcModule } from '../kernel/module.js';
import { describeEachDatabase, startTestApp, type TestApp } from '../testing/index.js';

const login = (app: TestApp, username: string, password: string) =>
  app.post('/api/auth/token', undefined, { form: { username, password } });

function expectInvalidCredentials(res: { status: number; body: any; headers: Headers }) {
  expect(res.status).toBe(401);
  expect(res.headers.get('www-authenticate')).toBe('Bearer');
  expect(res.body.detail).toHaveLength(1);
  expect(res.body.detail[0]).toMatchObject({ code: 'auth.invalid_credentials', loc: ['body', 'username'] });
}

/** Records what auth emits, and stands in for the second factor of users named `mfa-*`. */
function probeModule(events: { type: string; data: unknown }[]): SvcModule {
  return {
    name: 'auth-test-probe',
    setup({ ports }) {
      ports.provide('events', {
        emit: (type, data) => events.push({ type, data }),
        emitCustom: () => undefined,
        userChanged: (userId, change) => events.push({ type: 'userChanged', data: { userId, change } }),
      });
      ports.provide('secondFactor', {
        startChallenge: async (user) => (user.username.startsWith('mfa-') ? `challenge-of-${user.id}` : null),
        checkAccountCode: async () => undefined,
      });
      return {};
    },
  };
}

describeEachDatabase('Login', (database) => {
  let app: TestApp;
  let t: CoreTables;
  const events: { type: string; data: unknown }[] = [];
  const userRow = async (id: string) =>
    (await app.app.runtime.authDb.orm.select().from(t.user).where(eq(t.user.id, id)))[0]!;
  beforeAll(async () => {
    app = await startTestApp({ database, modules: [probeModule(events)], settings: { mfa_enabled: true } });
    t = app.app.runtime.tables.core as unknown as CoreTables;
  });
  afterAll(() => app.close());

  it('issues the bare OAuth2 pair, updates last_login_at and emits login', async () => {
    const alice = await app.createUser({ username: 'alice' });
    const res = await login(app, '  ALICE ', alice.password);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      access_token: expect.any(String),
      token_type: 'bearer',
      refresh_token: expect.any(String),
    });
    const access = jwt.decode(res.body.access_token) as Record<string, unknown>;
    const fam = (jwt.decode(res.body.refresh_token) as Record<string, unknown>).fam;
    expect(access).toEqual({
      sub: alice.id,
      type: 'access',
      // SPEC-2 "Sessions": the access token names its session, the login's refresh family.
      sid: fam,
      // SPEC-3 §7 rule 1: the login's time, on both tokens (a refresh copies it, never renews it).
      auth_time: access.iat,
      iat: expect.any(Number),
      exp: expect.any(Number),
    });
    expect((access.exp as number) - (access.iat as number)).toBe(30 * 60);
    const refresh = jwt.decode(res.body.refresh_token) as Record<string, unknown>;
    expect(refresh).toMatchObject({
      sub: alice.id,
      type: 'refresh',
      jti: expect.any(String),
      fam: expect.any(String),
      auth_time: access.iat,
    });
    expect((refresh.exp as number) - (refresh.iat as number)).toBe(7 * 86_400);
    expect((await userRow(alice.id)).lastLoginAt).toBeInstanceOf(Date);
    expect(events).toContainEqual({ type: 'login', data: { userId: alice.id, username: 'alice' } });
    const me = await app.as(res.body.access_token).get('/api/auth/user');
    expect(me.body.data.lastLoginAt).toEqual(expect.any(String));
  });

  it('stores the new refresh record, drops only expired ones and resets the counter in the login writes', async () => {
    const rhea = await app.createUser({ username: 'rhea' });
    const db = app.app.runtime.authDb.orm;
    const day = 86_400_000;
    const record = (jti: string, expiresAt: Date) => ({
      jti,
      family: `family-${jti}`,
      userId: rhea.id,
      expiresAt,
      createdAt: new Date(expiresAt.getTime() - 7 * day),
    });
    await db
      .insert(t.refreshToken)
      .values([
        record('rhea-expired', new Date(Date.now() - day)),
        record('rhea-live', new Date(Date.now() + day)),
      ]);
    expect((await login(app, 'rhea', 'wrong-password-1')).status).toBe(401);
    expect((await userRow(rhea.id)).failedLoginCount).toBe(1);
    const before = Date.now();
    const res = await login(app, 'rhea', rhea.password);
    expect(res.status).toBe(200);
    const jti = (jwt.decode(res.body.refresh_token) as { jti: string }).jti;
    const kept = await db
      .select({ jti: t.refreshToken.jti })
      .from(t.refreshToken)
      .where(eq(t.refreshToken.userId, rhea.id));
    expect(kept.map((r) => r.jti).sort()).toEqual(['rhea-live', jti].sort());
    const row = await userRow(rhea.id);
    expect(row.failedLoginCount).toBe(0);
    expect(row.lastLoginAt!.getTime()).toBeGreaterThanOrEqual(before - 1000);
  });

  it('answers the same 401 for unknown user, wrong password and inactive account', async () => {
    await app.createUser({ username: 'bob' });
    await app.createUser({ username: 'carl', isActive: false });
    expectInvalidCredentials(await login(app, 'nobody', 'whatever-password'));
    expectInvalidCredentials(await login(app, 'bob', 'wrong-password'));
    expectInvalidCredentials(await login(app, 'carl', 'correct-horse-battery'));
    expectInvalidCredentials(await login(app, '', 'x'));
    const missing = await app.post('/api/auth/token', undefined, { form: { username: 'bob' } });
    expect(missing.status).toBe(422);
    expect(missing.body.detail[0]).toMatchObject({
      code: 'request.validation_error',
      loc: ['body', 'password'],
    });
  });

  it('verifies a dummy hash for unknown usernames, so they cost like known ones', async () => {
    await app.createUser({ username: 'dora' });
    const time = async (username: string) => {
      const started = performance.now();
      expectInvalidCredentials(await login(app, username, 'wrong-password'));
      return performance.now() - started;
    };
    expect(await time('no-such-user')).toBeGreaterThan(5);
    expect(await time('dora')).toBeGreaterThan(5);
  });

  it('re-hashes a hash with outdated parameters on the next successful login', async () => {
    const eve = await app.createUser({ username: 'eve' });
    const old = await hash(eve.password, {
      memoryCost: 4096,
      timeCost: 3,
      parallelism: 1,
      algorithm: 2 as never,
    });
    await app.app.runtime.authDb.orm
      .update(t.user)
      .set({ passwordHash: old })
      .where(eq(t.user.id, eve.id))
      .returning();
    expect((await login(app, 'eve', eve.password)).status).toBe(200);
    const row = await userRow(eve.id);
    expect(row.passwordHash).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
    expect(row.passwordChangedAt).toBeNull();
    expect((await login(app, 'eve', eve.password)).status).toBe(200);
  });

  it('answers {mfa_required, mfa_token} when the second factor starts a challenge', async () => {
    const mfa = await app.createUser({ username: 'mfa-frank' });
    const res = await login(app, 'mfa-frank', mfa.password);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ mfa_required: true, mfa_token: `challenge-of-${mfa.id}` });
    expectInvalidCredentials(await login(app, 'mfa-frank', 'wrong-password'));
  });

  it('completeLogin of the loginGuard port issues a pair (MFA verify)', async () => {
    const gus = await app.createUser({ username: 'gus' });
    const rt = app.app.runtime;
    const user = await rt.ports.get('authenticator').firstSuperuser();
    expect(user).toBeNull();
    const authUser = (await login(app, 'gus', gus.password)).body;
    const pair = await rt.ports
      .get('loginGuard')
      .completeLogin(await rt.ports.get('authenticator').authenticate(authUser.access_token));
    expect(pair).toMatchObject({ token_type: 'bearer', access_token: expect.any(String) });
    expect((await app.post('/api/auth/refresh-token', { refresh_token: pair.refresh_token })).status).toBe(
      200,
    );
  });

  it('resets the failed-login counter when a login completes after the second step', async () => {
    const hal = await app.createUser({ username: 'hal' });
    const rt = app.app.runtime;
    const guard = rt.ports.get('loginGuard');
    const token = (await login(app, 'hal', hal.password)).body.access_token as string;
    const user = await rt.ports.get('authenticator').authenticate(token);
    // Wrong MFA codes are counted on the account before they are checked.
    for (let i = 0; i < 2; i += 1) await guard.settleWrong(await guard.admitAttempt(hal.id));
    expect((await userRow(hal.id)).failedLoginCount).toBe(2);
    await guard.completeLogin(user);
    expect((await userRow(hal.id)).failedLoginCount).toBe(0);
  });
});
