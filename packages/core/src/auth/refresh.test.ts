import { eq } from 'drizzle-orm';
import jwt from 'jsonwebtoken';
import type { CoreTables } from '../kernel/db/tables.js';
import { describeEachDatabase, startTestApp, TEST_SECRET_KEY, type TestApp } from '../testing/index.js';

const refresh = (app: TestApp, token: string) =>
  app.post('/api/auth/refresh-token', { refresh_token: token });

function expectRefresh401(res: { status: number; body: any }, code: string) {
  expect(res.status).toBe(401);
  expect(res.body.detail[0]).toMatchObject({ code, loc: ['body', 'refresh_token'] });
}

describeEachDatabase('Refresh token rotation', (database) => {
  let app: TestApp;
  let t: CoreTables;
  const records = (userId: string) =>
    app.app.runtime.authDb.orm.select().from(t.refreshToken).where(eq(t.refreshToken.userId, userId));
  beforeAll(async () => {
    app = await startTestApp({ database, settings: { refresh_reuse_grace_seconds: 0 } });
    t = app.app.runtime.tables.core as unknown as CoreTables;
  });
  afterAll(() => app.close());

  it('rotates: a new pair of the same login, bare OAuth2 shape, the old token spent', async () => {
    const alice = await app.loginAs(await app.createUser({ username: 'alice' }));
    const res = await refresh(app, alice.refreshToken);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      access_token: expect.any(String),
      token_type: 'bearer',
      refresh_token: expect.any(String),
    });
    const oldClaims = jwt.decode(alice.refreshToken) as Record<string, unknown>;
    const newClaims = jwt.decode(res.body.refresh_token) as Record<string, unknown>;
    expect(newClaims).toMatchObject({ sub: alice.user.id, type: 'refresh', fam: oldClaims.fam });
    expect(newClaims.jti).not.toBe(oldClaims.jti);
    // SPEC-3 §7 rule 1: a refresh is not a login: both new tokens keep the login's `auth_time`.
    expect(typeof oldClaims.auth_time).toBe('number');
    expect(newClaims.auth_time).toBe(oldClaims.auth_time);
    expect((jwt.decode(res.body.access_token) as Record<string, unknown>).auth_time).toBe(
      oldClaims.auth_time,
    );
    const rows = await records(alice.user.id);
    expect(rows).toHaveLength(2);
    expect(rows.find((r) => r.jti === oldClaims.jti)?.spentAt).toBeInstanceOf(Date);
    expect(rows.find((r) => r.jti === newClaims.jti)?.spentAt).toBeNull();
    expect((await app.as(res.body.access_token).get('/api/auth/user')).status).toBe(200);
  });

  it('gives exactly one success to two concurrent refreshes with the same token', async () => {
    const bob = await app.loginAs(await app.createUser({ username: 'bob' }));
    const results = await Promise.all([refresh(app, bob.refreshToken), refresh(app, bob.refreshToken)]);
    expect(results.map((r) => r.status).sort()).toEqual([200, 401]);
    expectRefresh401(
      results.find((r) => r.status === 401)!,
      'auth.refresh_token_revoked',
    );
  });

  it('with grace 0 the first reuse revokes the whole login', async () => {
    const carol = await app.loginAs(await app.createUser({ username: 'carol' }));
    const first = await refresh(app, carol.refreshToken);
    expect(first.status).toBe(200);
    expectRefresh401(await refresh(app, carol.refreshToken), 'auth.refresh_token_revoked');
    expect(await records(carol.user.id)).toHaveLength(0);
    expectRefresh401(await refresh(app, first.body.refresh_token), 'auth.refresh_token_revoked');
  });

  it('answers auth.refresh_token_invalid for garbage, an access token, a bad signature and an expired token', async () => {
    const dave = await app.loginAs(await app.createUser({ username: 'dave' }));
    expectRefresh401(await refresh(app, 'garbage'), 'auth.refresh_token_invalid');
    expectRefresh401(await refresh(app, dave.accessToken), 'auth.refresh_token_invalid');
    const claims = jwt.decode(dave.refreshToken) as Record<string, unknown>;
    const forged = jwt.sign({ ...claims }, 'another-secret-key-that-is-long-enough!!');
    expectRefresh401(await refresh(app, forged), 'auth.refresh_token_invalid');
    const past = Math.floor(Date.now() / 1000) - 10;
    const expired = jwt.sign({ ...claims, iat: past - 100, exp: past }, TEST_SECRET_KEY);
    expectRefresh401(await refresh(app, expired), 'auth.refresh_token_invalid');
    const missing = await app.post('/api/auth/refresh-token', {});
    expect(missing.status).toBe(422);
    expect(missing.body.detail[0]).toMatchObject({
      code: 'request.validation_error',
      loc: ['body', 'refresh_token'],
    });
  });

  it('answers auth.refresh_user_invalid for an inactive user, revoked for an unknown record', async () => {
    const erin = await app.loginAs(await app.createUser({ username: 'erin' }));
    const claims = jwt.decode(erin.refreshToken) as Record<string, unknown>;
    const notIssued = jwt.sign({ ...claims, jti: 'never-issued' }, TEST_SECRET_KEY);
    expectRefresh401(await refresh(app, notIssued), 'auth.refresh_token_revoked');
    await app.app.runtime.authDb.orm
      .update(t.user)
      .set({ isActive: false })
      .where(eq(t.user.id, erin.user.id))
      .returning();
    expectRefresh401(await refresh(app, erin.refreshToken), 'auth.refresh_user_invalid');
  });

  it('spends nothing for a refused user: an inactive user is refused, the same token works once reactivated; an unknown one too', async () => {
    const ivan = await app.loginAs(await app.createUser({ username: 'ivan' }));
    const setActive = (isActive: boolean) =>
      app.app.runtime.authDb.orm
        .update(t.user)
        .set({ isActive })
        .where(eq(t.user.id, ivan.user.id))
        .returning();
    await setActive(false);
    expectRefresh401(await refresh(app, ivan.refreshToken), 'auth.refresh_user_invalid');
    expect((await records(ivan.user.id)).every((r) => r.spentAt === null)).toBe(true);
    await setActive(true);
    expect((await refresh(app, ivan.refreshToken)).status).toBe(200);
    const claims = jwt.decode(ivan.refreshToken) as Record<string, unknown>;
    const nobody = jwt.sign({ ...claims, sub: '00000000-0000-4000-8000-000000000000' }, TEST_SECRET_KEY);
    expectRefresh401(await refresh(app, nobody), 'auth.refresh_user_invalid');
  });

  it('compares the token with password_changed_at to the second, even for a record that escaped the deletion', async () => {
    // SPEC "Refresh token and login": a change in the token's own second leaves it valid, one in a later
    // second revokes it; the record is left in place here, so only the comparison refuses it.
    const jane = await app.loginAs(await app.createUser({ username: 'jane' }));
    const { iat } = jwt.decode(jane.refreshToken) as { iat: number };
    const changedAt = (ms: number) =>
      app.app.runtime.authDb.orm
        .update(t.user)
        .set({ passwordChangedAt: new Date(ms) })
        .where(eq(t.user.id, jane.user.id))
        .returning();
    await changedAt((iat + 1) * 1000);
    expectRefresh401(await refresh(app, jane.refreshToken), 'auth.refresh_token_revoked');
    // Refused before the spend: not a reuse, the record is still unspent and the login intact.
    expect(await records(jane.user.id)).toEqual([expect.objectContaining({ spentAt: null })]);
    await changedAt(iat * 1000 + 999);
    expect((await refresh(app, jane.refreshToken)).status).toBe(200);
  });

  it('logout with the own token revokes that login only; without body revokes all; 204', async () => {
    const frank = await app.createUser({ username: 'frank' });
    const a = await app.loginAs(frank);
    const b = await app.loginAs(frank);
    const c = await app.loginAs(frank);
    const out = await a.post('/api/auth/logout', { refresh_token: a.refreshToken });
    expect(out.status).toBe(204);
    expect(out.text).toBe('');
    expectRefresh401(await refresh(app, a.refreshToken), 'auth.refresh_token_revoked');
    expect(await records(frank.id)).toHaveLength(2);
    // Another user's token in the body: all the caller's logins go.
    const other = await app.loginAs(await app.createUser({ username: 'gina' }));
    expect((await b.post('/api/auth/logout', { refresh_token: other.refreshToken })).status).toBe(204);
    expect(await records(frank.id)).toHaveLength(0);
    expect((await refresh(app, other.refreshToken)).status).toBe(200);
    expectRefresh401(await refresh(app, c.refreshToken), 'auth.refresh_token_revoked');
    const d = await app.loginAs(frank);
    expect((await d.post('/api/auth/logout')).status).toBe(204);
    expect(await records(frank.id)).toHaveLength(0);
    expect((await app.post('/api/auth/logout')).status).toBe(401);
  });

  it('a password change deletes the refresh records: auth.refresh_token_revoked', async () => {
    const hank = await app.loginAs(await app.createUser({ username: 'hank' }));
    const res = await hank.post('/api/auth/user/password', {
      currentPassword: hank.user.password,
      newPassword: 'another-long-password',
    });
    expect(res.status).toBe(204);
    expect(await records(hank.user.id)).toHaveLength(0);
    expectRefresh401(await refresh(app, hank.refreshToken), 'auth.refresh_token_revoked');
  });
});

describeEachDatabase('Refresh reuse grace window', (database) => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ database, settings: { refresh_reuse_grace_seconds: 1 } });
  });
  afterAll(() => app.close());

  it('refuses a reuse inside the window without revoking, and revokes the login after it', async () => {
    const alice = await app.loginAs(await app.createUser({ username: 'alice' }));
    const first = await refresh(app, alice.refreshToken);
    expect(first.status).toBe(200);
    expectRefresh401(await refresh(app, alice.refreshToken), 'auth.refresh_token_revoked');
    // The login survived: the rotated token still works.
    const second = await refresh(app, first.body.refresh_token);
    expect(second.status).toBe(200);
    await new Promise((r) => setTimeout(r, 1100));
    expectRefresh401(await refresh(app, first.body.refresh_token), 'auth.refresh_token_revoked');
    expectRefresh401(await refresh(app, second.body.refresh_token), 'auth.refresh_token_revoked');
  });

  it('two concurrent refreshes inside the window: one 200, the login survives', async () => {
    const bob = await app.loginAs(await app.createUser({ username: 'bob' }));
    const results = await Promise.all([refresh(app, bob.refreshToken), refresh(app, bob.refreshToken)]);
    expect(results.map((r) => r.status).sort()).toEqual([200, 401]);
    const winner = results.find((r) => r.status === 200)!;
    expect((await refresh(app, winner.body.refresh_token)).status).toBe(200);
  });
});

describeEachDatabase('Refresh without rotation', (database) => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({
      database,
      settings: { refresh_token_rotation: false, wrap_auth_token_response: true },
    });
  });
  afterAll(() => app.close());

  it('answers without refresh_token and keeps the token usable (wrapped when asked)', async () => {
    const alice = await app.loginAs(await app.createUser({ username: 'alice' }));
    for (let i = 0; i < 2; i += 1) {
      const res = await refresh(app, alice.refreshToken);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        success: true,
        data: { access_token: expect.any(String), token_type: 'bearer' },
      });
      expect(res.body.data).not.toHaveProperty('refresh_token');
    }
  });
});
