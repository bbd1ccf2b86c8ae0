import { eq } from 'drizzle-orm';
import type { CoreTables } from '../kernel/db/tables.js';
import { describeEachDatabase, startTestApp, type TestApp } from '../testing/index.js';

describeEachDatabase('Registration', (database) => {
  let app: TestApp;
  let closed: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ database, settings: { registration_enabled: true } });
    closed = await startTestApp({ database });
  });
  afterAll(async () => {
    await closed.close();
    await app.close();
  });

  it('answers 403 auth.registration_disabled while registration is closed', async () => {
    const res = await closed.post('/api/auth/register', {
      username: 'zed',
      password: 'long-enough-password',
    });
    expect(res.status).toBe(403);
    expect(res.body.detail[0]).toMatchObject({ code: 'auth.registration_disabled' });
  });

  it('creates an active, non-staff, non-superuser account (privileges ignored) and answers 201', async () => {
    const res = await app.post('/api/auth/register', {
      username: '  NewUser ',
      password: 'long-enough-password',
      email: 'new@example.com',
      firstName: 'New',
      isSuperuser: true,
      isStaff: true,
      isActive: false,
    });
    expect(res.status).toBe(201);
    expect(res.body.success).toBe(true);
    expect(res.body.data).toEqual({
      id: expect.any(String),
      username: 'newuser',
      email: 'new@example.com',
      firstName: 'New',
      lastName: '',
      isActive: true,
      isStaff: false,
      isSuperuser: false,
      emailVerifiedAt: null,
      lastLoginAt: null,
      createdAt: expect.any(String),
    });
    expect(
      (await app.loginAs({ username: 'newuser', password: 'long-enough-password' })).accessToken,
    ).toBeTruthy();
  });

  it('refuses passwords over 1024 characters with 422 at registration and login, storing nothing', async () => {
    const long = 'x'.repeat(1025);
    const reg = await app.post('/api/auth/register', { username: 'longpw', password: long });
    expect(reg.status).toBe(422);
    expect(reg.body.detail[0]).toMatchObject({ loc: ['body', 'password'], code: 'request.validation_error' });
    const login = await app.post('/api/auth/token', undefined, {
      form: { username: 'longpw', password: long },
    });
    expect(login.status).toBe(422);
    const ok = await app.post('/api/auth/register', { username: 'longpw', password: 'y'.repeat(1024) });
    expect(ok.status).toBe(201);
  });

  it('refuses taken usernames and emails, short passwords and bad usernames', async () => {
    await app.createUser({ username: 'taken', email: 'taken@example.com' });
    const taken = await app.post('/api/auth/register', {
      username: 'TAKEN',
      password: 'long-enough-password',
    });
    expect(taken.status).toBe(400);
    expect(taken.body.detail[0]).toMatchObject({ code: 'auth.username_taken', loc: ['body', 'username'] });
    const email = await app.post('/api/auth/register', {
      username: 'other',
      password: 'long-enough-password',
      email: 'taken@example.com',
    });
    expect(email.status).toBe(400);
    expect(email.body.detail[0]).toMatchObject({ code: 'user.username_or_email_exists' });
    const short = await app.post('/api/auth/register', { username: 'shorty', password: 'short' });
    expect(short.status).toBe(422);
    expect(short.body.detail[0]).toMatchObject({
      code: 'auth.password_too_short',
      loc: ['body', 'password'],
      params: { min_length: 12 },
    });
    for (const username of ['ab', 'x'.repeat(151)]) {
      const bad = await app.post('/api/auth/register', { username, password: 'long-enough-password' });
      expect(bad.status).toBe(422);
      expect(bad.body.detail[0]).toMatchObject({
        code: 'request.validation_error',
        loc: ['body', 'username'],
      });
    }
    const ok = await app.post('/api/auth/register', {
      username: 'x'.repeat(150),
      password: 'long-enough-password',
    });
    expect(ok.status).toBe(201);
  });
});

describeEachDatabase('Own account', (database) => {
  let app: TestApp;
  let t: CoreTables;
  const events: { type: string; data: unknown }[] = [];
  const row = async (id: string) =>
    (await app.app.runtime.authDb.orm.select().from(t.user).where(eq(t.user.id, id)))[0]!;
  beforeAll(async () => {
    app = await startTestApp({
      database,
      modules: [
        {
          name: 'auth-test-events',
          setup({ ports }) {
            ports.provide('events', {
              emit: (type, data) => events.push({ type, data }),
              emitCustom: () => undefined,
              userChanged: (userId, change) => events.push({ type: 'userChanged', data: { userId, change } }),
            });
            return {};
          },
        },
      ],
    });
    t = app.app.runtime.tables.core as unknown as CoreTables;
  });
  afterAll(() => app.close());

  it('GET /auth/user answers the enveloped user with permissions', async () => {
    const alice = await app.loginAs(await app.createUser({ username: 'alice', email: 'a@example.com' }));
    const res = await alice.get('/api/auth/user');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ success: true, message: null });
    expect(res.body.data).toMatchObject({
      id: alice.user.id,
      username: 'alice',
      email: 'a@example.com',
      permissions: [],
    });
    expect(res.body.data).not.toHaveProperty('passwordHash');
    expect(res.body.data).not.toHaveProperty('failedLoginCount');
  });

  it('PATCH /auth/user changes only the fields sent, never privileges or username', async () => {
    const bob = await app.loginAs(await app.createUser({ username: 'bob' }));
    const res = await bob.patch('/api/auth/user', { firstName: 'Bob', isSuperuser: true, username: 'root' });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({
      firstName: 'Bob',
      lastName: '',
      username: 'bob',
      isSuperuser: false,
    });
    expect(res.body.data.permissions).toEqual([]);
    const stored = await row(bob.user.id);
    expect(stored.isSuperuser).toBe(false);
    expect(stored.username).toBe('bob');
  });

  it('an email change needs the current password (counted), refuses held emails, and empty clears', async () => {
    await app.createUser({ username: 'holder', email: 'held@example.com' });
    const carol = await app.loginAs(await app.createUser({ username: 'carol', email: 'c@example.com' }));
    const missing = await carol.patch('/api/auth/user', { email: 'c2@example.com' });
    expect(missing.status).toBe(400);
    expect(missing.body.detail[0]).toMatchObject({
      code: 'auth.password_incorrect',
      loc: ['body', 'currentPassword'],
    });
    const wrong = await carol.patch('/api/auth/user', {
      email: 'c2@example.com',
      currentPassword: 'nope-nope',
    });
    expect(wrong.status).toBe(400);
    expect(wrong.body.detail[0].code).toBe('auth.password_incorrect');
    expect((await row(carol.user.id)).failedLoginCount).toBe(1);
    const held = await carol.patch('/api/auth/user', {
      email: 'held@example.com',
      currentPassword: carol.user.password,
    });
    expect(held.status).toBe(400);
    expect(held.body.detail[0]).toMatchObject({ code: 'user.email_exists', loc: ['body', 'email'] });
    const same = await carol.patch('/api/auth/user', { email: 'c@example.com', lastName: 'C' });
    expect(same.status).toBe(200);
    const changed = await carol.patch('/api/auth/user', {
      email: 'c2@example.com',
      currentPassword: carol.user.password,
    });
    expect(changed.status).toBe(200);
    expect(changed.body.data.email).toBe('c2@example.com');
    const cleared = await carol.patch('/api/auth/user', { email: '', currentPassword: carol.user.password });
    expect(cleared.status).toBe(200);
    expect(cleared.body.data.email).toBeNull();
    expect((await row(carol.user.id)).email).toBeNull();
    const invalid = await carol.patch('/api/auth/user', { email: 'not-an-email' });
    expect(invalid.status).toBe(422);
    expect(invalid.body.detail[0].loc).toEqual(['body', 'email']);
  });

  it('POST /auth/user/password enforces the rules of SPEC rule 4 and revokes everything', async () => {
    const dave = await app.loginAs(await app.createUser({ username: 'dave' }));
    const short = await dave.post('/api/auth/user/password', {
      currentPassword: dave.user.password,
      newPassword: 'x',
    });
    expect(short.status).toBe(422);
    expect(short.body.detail[0]).toMatchObject({
      code: 'auth.password_too_short',
      loc: ['body', 'newPassword'],
      params: { min_length: 12 },
    });
    const same = await dave.post('/api/auth/user/password', {
      currentPassword: dave.user.password,
      newPassword: dave.user.password,
    });
    expect(same.status).toBe(422);
    expect(same.body.detail[0]).toMatchObject({
      code: 'auth.password_unchanged',
      loc: ['body', 'newPassword'],
    });
    const before = Date.now();
    const ok = await dave.post('/api/auth/user/password', {
      currentPassword: dave.user.password,
      newPassword: 'the-new-long-password',
    });
    expect(ok.status).toBe(204);
    expect(ok.text).toBe('');
    const stored = await row(dave.user.id);
    expect(stored.passwordChangedAt!.getTime()).toBeGreaterThanOrEqual(before - 5);
    expect(events).toContainEqual({
      type: 'userChanged',
      data: { userId: dave.user.id, change: 'password_changed' },
    });
    const old = await app.post('/api/auth/token', undefined, {
      form: { username: 'dave', password: dave.user.password },
    });
    expect(old.status).toBe(401);
    expect(
      (await app.loginAs({ username: 'dave', password: 'the-new-long-password' })).accessToken,
    ).toBeTruthy();
  });

  it('logout emits the logout event', async () => {
    const erin = await app.loginAs(await app.createUser({ username: 'erin' }));
    expect((await erin.post('/api/auth/logout')).status).toBe(204);
    expect(events).toContainEqual({ type: 'logout', data: { userId: erin.user.id, username: 'erin' } });
  });
});
