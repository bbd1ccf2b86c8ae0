import { Writable } from 'node:stream';
import { eq } from 'drizzle-orm';
import type { CoreTables } from '../kernel/db/tables.js';
import { describeEachDatabase, startTestApp, type TestApp } from '../testing/index.js';

const login = (app: TestApp, username: string, password: string) =>
  app.post('/api/auth/token', undefined, { form: { username, password } });

describeEachDatabase('Account login lock', (database) => {
  let app: TestApp;
  let t: CoreTables;
  const logLines: string[] = [];
  const row = async (id: string) =>
    (await app.app.runtime.authDb.orm.select().from(t.user).where(eq(t.user.id, id)))[0]!;
  beforeAll(async () => {
    app = await startTestApp({
      database,
      settings: { login_max_attempts: 5, login_lockout_minutes: 1, log_level: 'WARNING', log_format: 'json' },
      logStream: new Writable({
        write(chunk, _encoding, callback) {
          logLines.push(String(chunk));
          callback();
        },
      }),
    });
    t = app.app.runtime.tables.core as unknown as CoreTables;
  });
  afterAll(() => app.close());

  it('the lock lasts login_lockout_minutes; after it the right password logs in and resets', async () => {
    const bob = await app.createUser({ username: 'bob' });
    for (let i = 0; i < 5; i += 1) expect((await login(app, 'bob', 'wrong-password')).status).toBe(401);
    expect((await row(bob.id)).lockedUntil).not.toBeNull();
    expect((await login(app, 'bob', bob.password)).status).toBe(401);
    await app.app.runtime.authDb.orm
      .update(t.user)
      .set({ lockedUntil: new Date(Date.now() - 1000) })
      .where(eq(t.user.id, bob.id))
      .returning();
    expect((await login(app, 'bob', bob.password)).status).toBe(200);
    expect((await row(bob.id)).failedLoginCount).toBe(0);
  });

  it('a success resets the counter, so the failures before it do not add up', async () => {
    const carol = await app.createUser({ username: 'carol' });
    for (let i = 0; i < 4; i += 1) await login(app, 'carol', 'wrong-password');
    expect((await row(carol.id)).failedLoginCount).toBe(4);
    expect((await login(app, 'carol', carol.password)).status).toBe(200);
    const after = await row(carol.id);
    expect(after.failedLoginCount).toBe(0);
    expect(after.lockedUntil).toBeNull();
  });

  it('counts a login by the name in any case on the same account, and never counts an inactive one', async () => {
    // The login takes its slot with the lookup of the name as written (auth/login-attempts.ts).
    const dora = await app.createUser({ username: 'dora' });
    expect((await login(app, ' DORA ', 'wrong-password')).status).toBe(401);
    expect((await login(app, 'Dora', 'wrong-password')).status).toBe(401);
    expect((await row(dora.id)).failedLoginCount).toBe(2);
    expect((await login(app, 'DORA', dora.password)).status).toBe(200);
    expect((await row(dora.id)).failedLoginCount).toBe(0);
    const eddie = await app.createUser({ username: 'eddie', isActive: false });
    for (let i = 0; i < 6; i += 1) expect((await login(app, 'eddie', 'wrong-password')).status).toBe(401);
    expect((await login(app, 'eddie', eddie.password)).status).toBe(401);
    const stored = await row(eddie.id);
    expect(stored.failedLoginCount).toBe(0);
    expect(stored.lockedUntil).toBeNull();
  });

  it('wrong current passwords at /auth/user/password count; while locked the route answers 429 with Retry-After', async () => {
    const dave = await app.loginAs(await app.createUser({ username: 'dave' }));
    for (let i = 0; i < 5; i += 1) {
      const res = await dave.post('/api/auth/user/password', {
        currentPassword: 'wrong-password',
        newPassword: 'a-new-long-password',
      });
      expect(res.status).toBe(400);
      expect(res.body.detail[0]).toMatchObject({
        code: 'auth.password_incorrect',
        loc: ['body', 'currentPassword'],
      });
    }
    const locked = await dave.post('/api/auth/user/password', {
      currentPassword: dave.user.password,
      newPassword: 'a-new-long-password',
    });
    expect(locked.status).toBe(429);
    expect(locked.body.detail[0].code).toBe('auth.too_many_attempts');
    const retry = Number(locked.headers.get('retry-after'));
    expect(retry).toBeGreaterThan(50);
    expect(retry).toBeLessThanOrEqual(60);
    const guard = app.app.runtime.ports.get('loginGuard');
    await expect(guard.assertNotLocked(dave.user.id, 'mfa.too_many_attempts')).rejects.toMatchObject({
      code: 'mfa.too_many_attempts',
      status: 429,
      headers: { 'Retry-After': expect.stringMatching(/^\d+$/) },
    });
  });

  it('the loginGuard port counts wrong passwords and MFA failures on the same counter', async () => {
    const erin = await app.createUser({ username: 'erin' });
    const guard = app.app.runtime.ports.get('loginGuard');
    const wrongCode = async () => guard.settleWrong(await guard.admitAttempt(erin.id));
    expect(await guard.verifyPassword(erin.id, 'wrong-password')).toBe(false);
    expect(await wrongCode()).toBe(false);
    expect((await row(erin.id)).failedLoginCount).toBe(2);
    // A right password on a password prompt is no login: it gives its slot back, the failures stay counted.
    expect(await guard.verifyPassword(erin.id, erin.password)).toBe(true);
    expect((await row(erin.id)).failedLoginCount).toBe(2);
    for (let i = 0; i < 2; i += 1) expect(await wrongCode()).toBe(false);
    expect(await wrongCode()).toBe(true);
    await expect(guard.assertNotLocked(erin.id, 'auth.too_many_attempts')).rejects.toMatchObject({
      status: 429,
    });
    expect((await guard.admitAttempt(erin.id)).admitted).toBe(false);
    expect(await guard.verifyPassword(erin.id, erin.password)).toBe(false);
  });

  // Last on this app: failed logins answer no faster than the slowest recent failures (auth/failure-timing.ts,
  // SPEC "Authentication routes" 1), and 50 at once raise that floor to seconds, which every failed login of a
  // later test on the same app would then wait out.
  it('50 concurrent wrong logins lock the account exactly once; the right password is refused while locked', async () => {
    const alice = await app.createUser({ username: 'alice' });
    const results = await Promise.all(
      Array.from({ length: 50 }, () => login(app, 'alice', 'wrong-password')),
    );
    for (const res of results) {
      expect(res.status).toBe(401);
      expect(res.body.detail[0]).toMatchObject({
        code: 'auth.invalid_credentials',
        loc: ['body', 'username'],
      });
    }
    const stored = await row(alice.id);
    expect(stored.failedLoginCount).toBe(0); // reset when the lock is set
    expect(stored.lockedUntil!.getTime()).toBeGreaterThan(Date.now() + 50_000);
    const warnings = logLines.filter((l) => l.includes('account locked') && l.includes(alice.id));
    expect(warnings).toHaveLength(1);
    const refused = await login(app, 'alice', alice.password);
    expect(refused.status).toBe(401);
    expect(refused.body.detail[0].code).toBe('auth.invalid_credentials');
    expect((await row(alice.id)).failedLoginCount).toBe(0);
  });
});

describeEachDatabase('Login lock counter under concurrency', (database) => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ database, settings: { login_max_attempts: 100 } });
  });
  afterAll(() => app.close());

  it('counts every one of 50 concurrent wrong logins (no lost update)', async () => {
    const alice = await app.createUser({ username: 'alice' });
    await Promise.all(Array.from({ length: 50 }, () => login(app, 'alice', 'wrong-password')));
    const t = app.app.runtime.tables.core as unknown as CoreTables;
    const [stored] = await app.app.runtime.authDb.orm.select().from(t.user).where(eq(t.user.id, alice.id));
    expect(stored!.failedLoginCount).toBe(50);
    expect(stored!.lockedUntil).toBeNull();
  });
});
