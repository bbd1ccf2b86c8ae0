import { randomUUID } from 'node:crypto';
import { eq } from 'drizzle-orm';
import jwt from 'jsonwebtoken';
import type { CoreTables } from '../kernel/db/tables.js';
import { describeEachDatabase, startTestApp, TEST_SECRET_KEY, type TestApp } from '../testing/index.js';

const now = () => Math.floor(Date.now() / 1000);
const sign = (claims: object, algorithm: jwt.Algorithm = 'HS512') =>
  jwt.sign({ iat: now(), exp: now() + 600, ...claims }, TEST_SECRET_KEY, { algorithm });

/** A token with `alg: none` (no signature), as an attacker would craft it. */
function unsigned(claims: object): string {
  const part = (v: object) => Buffer.from(JSON.stringify(v)).toString('base64url');
  return `${part({ alg: 'none', typ: 'JWT' })}.${part({ iat: now(), exp: now() + 600, ...claims })}.`;
}

/** Waits until the wall clock has entered a new second (token `iat` has one-second resolution). */
async function nextSecond(): Promise<void> {
  await new Promise((r) => setTimeout(r, 1000 - (Date.now() % 1000) + 20));
}

describeEachDatabase('Authentication of protected requests', (database) => {
  let app: TestApp;
  let users: CoreTables['user'];
  beforeAll(async () => {
    app = await startTestApp({ database, settings: { algorithm: 'HS512' } });
    users = (app.app.runtime.tables.core as unknown as CoreTables).user;
  });
  afterAll(() => app.close());

  const expect401 = (res: { status: number; headers: Headers; body: any }, code: string) => {
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe('Bearer');
    expect(res.body.detail[0]).toMatchObject({ code, loc: ['header', 'Authorization'] });
  };

  it('answers a valid access token with the user and 401 auth.not_authenticated without a header', async () => {
    const alice = await app.loginAs(await app.createUser({ username: 'alice' }));
    const ok = await alice.get('/api/auth/user');
    expect(ok.status).toBe(200);
    expect(ok.body.data).toMatchObject({ username: 'alice', permissions: [] });
    expect401(await app.get('/api/auth/user'), 'auth.not_authenticated');
  });

  it('refuses malformed, expired, alg none and wrong-algorithm tokens with auth.token_invalid', async () => {
    const user = await app.createUser({ username: 'bob' });
    expect401(await app.as('not-a-jwt').get('/api/auth/user'), 'auth.token_invalid');
    const expired = jwt.sign(
      { sub: user.id, type: 'access', iat: now() - 100, exp: now() - 10 },
      TEST_SECRET_KEY,
      {
        algorithm: 'HS512',
      },
    );
    expect401(await app.as(expired).get('/api/auth/user'), 'auth.token_invalid');
    expect401(
      await app.as(unsigned({ sub: user.id, type: 'access' })).get('/api/auth/user'),
      'auth.token_invalid',
    );
    // HS512 is configured: a token signed with the same key but HS256 is refused.
    expect401(
      await app.as(sign({ sub: user.id, type: 'access' }, 'HS256')).get('/api/auth/user'),
      'auth.token_invalid',
    );
    const otherKey = jwt.sign({ sub: user.id, type: 'access', exp: now() + 60 }, 'x'.repeat(40), {
      algorithm: 'HS512',
    });
    expect401(await app.as(otherKey).get('/api/auth/user'), 'auth.token_invalid');
    expect((await app.as(sign({ sub: user.id, type: 'access' })).get('/api/auth/user')).status).toBe(200);
  });

  it('refuses refresh and mfa tokens as access tokens with auth.token_wrong_type', async () => {
    const carol = await app.loginAs(await app.createUser({ username: 'carol' }));
    expect401(await app.as(carol.refreshToken).get('/api/auth/user'), 'auth.token_wrong_type');
    expect401(
      await app.as(sign({ sub: carol.user.id, type: 'mfa' })).get('/api/auth/user'),
      'auth.token_wrong_type',
    );
    expect401(await app.as(sign({ sub: carol.user.id })).get('/api/auth/user'), 'auth.token_wrong_type');
  });

  it('refuses a token without sub (auth.token_no_subject) and of a deleted user (user.not_found)', async () => {
    expect401(await app.as(sign({ type: 'access' })).get('/api/auth/user'), 'auth.token_no_subject');
    expect401(
      await app.as(sign({ type: 'access', sub: randomUUID() })).get('/api/auth/user'),
      'user.not_found',
    );
    expect401(
      await app.as(sign({ type: 'access', sub: 'not-a-uuid' })).get('/api/auth/user'),
      'user.not_found',
    );
    const dave = await app.loginAs(await app.createUser({ username: 'dave' }));
    await app.app.runtime.authDb.orm.delete(users).where(eq(users.id, dave.user.id)).returning();
    expect401(await dave.get('/api/auth/user'), 'user.not_found');
  });

  it('refuses a sid that is not a session id (auth.token_invalid) and one of no session (auth.session_revoked)', async () => {
    const user = await app.createUser({ username: 'sid' });
    // SPEC-2 "Sessions": checked before the lookup, so a uuid column never sees the text (500 on PostgreSQL).
    for (const sid of ['not-a-uuid', 42]) {
      expect401(
        await app.as(sign({ sub: user.id, type: 'access', sid })).get('/api/auth/user'),
        'auth.token_invalid',
      );
    }
    expect401(
      await app.as(sign({ sub: user.id, type: 'access', sid: randomUUID() })).get('/api/auth/user'),
      'auth.session_revoked',
    );
  });

  it('answers 400 user.disabled for an inactive user', async () => {
    const erin = await app.loginAs(await app.createUser({ username: 'erin' }));
    await app.app.runtime.authDb.orm
      .update(users)
      .set({ isActive: false })
      .where(eq(users.id, erin.user.id))
      .returning();
    const res = await erin.get('/api/auth/user');
    expect(res.status).toBe(400);
    expect(res.body.detail[0]).toMatchObject({ code: 'user.disabled' });
  });

  it('refuses an access token issued before the password change with auth.token_revoked (SPEC "Authentication" 8)', async () => {
    const frank = await app.loginAs(await app.createUser({ username: 'frank' }));
    // One-second resolution: a token of the same second as the change stays valid, so change it later.
    await nextSecond();
    const changed = await frank.post('/api/auth/user/password', {
      currentPassword: frank.user.password,
      newPassword: 'a-brand-new-password',
    });
    expect(changed.status).toBe(204);
    expect401(await frank.get('/api/auth/user'), 'auth.token_revoked');
    const again = await app.loginAs({ username: 'frank', password: 'a-brand-new-password' });
    expect((await again.get('/api/auth/user')).status).toBe(200);
  });

  it('loads effective permissions (direct and through groups) in the route guard', async () => {
    const rt = app.app.runtime;
    const t = rt.tables.core as unknown as CoreTables;
    const grace = await app.loginAs(await app.createUser({ username: 'grace' }));
    const [p1, p2, p3] = await rt.authDb.orm
      .insert(t.permission)
      .values([{ codename: 'notes.read' }, { codename: 'notes.write' }, { codename: 'notes.admin' }])
      .returning();
    const [g] = await rt.authDb.orm.insert(t.group).values({ name: 'editors' }).returning();
    await rt.authDb.orm.insert(t.groupPermission).values([
      { groupId: g!.id, permissionId: p2!.id },
      { groupId: g!.id, permissionId: p1!.id },
    ]);
    await rt.authDb.orm.insert(t.userGroup).values({ userId: grace.user.id, groupId: g!.id });
    await rt.authDb.orm.insert(t.userPermission).values({ userId: grace.user.id, permissionId: p1!.id });
    const authn = rt.ports.get('authenticator');
    const loaded = await authn.authenticate(grace.accessToken, { withPermissions: true });
    expect(loaded.permissions).toEqual(['notes.read', 'notes.write']);
    expect(p3).toBeDefined();
    const res = await grace.get('/api/auth/user');
    expect(res.body.data.permissions).toEqual(['notes.read', 'notes.write']);
    expect(authn.peek(grace.accessToken)).toEqual({ userId: grace.user.id });
    expect(authn.peek(grace.refreshToken)).toBeNull();
  });
});
