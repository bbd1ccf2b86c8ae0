import { eq } from 'drizzle-orm';
import type { CoreTables } from '../kernel/db/tables.js';
import { describeEachDatabase } from '../testing/each.js';
import { DEFAULT_TEST_PASSWORD, startTestApp, type TestApp } from '../testing/test-app.js';

// SPEC "User": one username rule and one email rule (kernel/identity.ts) at registration, login and
// `PATCH /auth/user`, the same as at the admin routes and `svc users`.
describeEachDatabase('Usernames and emails at registration and login', (database) => {
  let app: TestApp;
  let tables: CoreTables;
  let orm: any;

  const register = (username: string, email?: string) =>
    app.post('/api/auth/register', {
      username,
      password: DEFAULT_TEST_PASSWORD,
      ...(email ? { email } : {}),
    });
  const login = (username: string, password = DEFAULT_TEST_PASSWORD) =>
    app.post('/api/auth/token', undefined, { form: { username, password } });
  const usernames = async (): Promise<string[]> =>
    (await orm.select({ username: tables.user.username }).from(tables.user)).map(
      (row: { username: string }) => row.username,
    );

  beforeAll(async () => {
    app = await startTestApp({ database, settings: { registration_enabled: true } });
    tables = app.app.runtime.tables.core as unknown as CoreTables;
    orm = app.app.runtime.authDb.orm;
    await app.createUser({ username: 'admin', email: 'admin@example.com', isSuperuser: true });
  });
  afterAll(() => app.close());

  it.each([
    ['admin\u200b', 'characters', { character: 'U+200B' }],
    ['\u0430dmin', 'mixed_scripts', { scripts: ['Cyrillic', 'Latin'] }],
    ['\u202eadmin', 'characters', { character: 'U+202E' }],
    ['ad\u2066min', 'characters', { character: 'U+2066' }],
  ])('refuses to register %j with 422 user.username_invalid (%s)', async (username, reason, extra) => {
    const before = await usernames();
    const res = await register(username);
    expect(res.status).toBe(422);
    expect(res.body.detail[0]).toMatchObject({
      code: 'user.username_invalid',
      loc: ['body', 'username'],
      params: { reason, min_length: 3, max_length: 150, ...extra },
    });
    expect(await usernames()).toEqual(before);
  });

  it('refuses a full-width spelling of a taken name as taken, and stores new names in their normal form', async () => {
    const taken = await register('ａｄｍｉｎ');
    expect(taken.status).toBe(400);
    expect(taken.body.detail[0]).toMatchObject({ code: 'auth.username_taken' });
    const created = await register('  Ｎｏｒａ ');
    expect(created.status).toBe(201);
    expect(created.body.data.username).toBe('nora');
  });

  it('logs in with any spelling whose normal form is the name (ＡＤＭＩＮ is admin)', async () => {
    for (const spelling of ['admin', 'ADMIN', 'ＡＤＭＩＮ', ' ａｄｍｉｎ ']) {
      const res = await login(spelling);
      expect(res.status).toBe(200);
    }
    const me = await app
      .as((await login('ＡＤＭＩＮ')).body.access_token)
      .get('/api/auth/user')
      .then((res) => res.body.data);
    expect(me.username).toBe('admin');
    expect((await login('\u0430dmin')).status).toBe(401);
    expect((await login('admin\u200b')).status).toBe(401);
  });

  it('keeps names stored before the rule logging in as written', async () => {
    const passwordHash = await app.app.runtime.ports.get('loginGuard').hashPassword('legacy-password-1');
    await orm.insert(tables.user).values({ username: 'ｏｌｄ', passwordHash });
    await orm.insert(tables.user).values({ username: 'old\u200b', passwordHash });
    expect((await login('ｏｌｄ', 'legacy-password-1')).status).toBe(200);
    expect((await login('ＯＬＤ', 'legacy-password-1')).status).toBe(200);
    expect((await login('old\u200b', 'legacy-password-1')).status).toBe(200);
  });

  it('answers an email taken in another letter case at registration with loc [body, email]', async () => {
    const res = await register('mallory', 'ADMIN@Example.com');
    expect(res.status).toBe(400);
    expect(res.body.detail[0]).toMatchObject({
      code: 'user.username_or_email_exists',
      loc: ['body', 'email'],
    });
    const [row] = await orm.select().from(tables.user).where(eq(tables.user.username, 'mallory'));
    expect(row).toBeUndefined();
  });
});
