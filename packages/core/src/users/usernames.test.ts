import { eq } from 'drizzle-orm';
import type { CoreTables } from '../kernel/db/tables.js';
import { describeEachDatabase } from '../testing/each.js';
import { DEFAULT_TEST_PASSWORD, startTestApp, type TestApp } from '../testing/test-app.js';
import { createUserManager, type UserManager } from './manage.js';

// SPEC "User": usernames are trimmed and lower-cased, 3 to 150 characters, unique. `svc users` applies the one
// username rule of kernel/identity.ts (NFKC, no invisible or control characters, one script), so that no new
// account can look like another one in an admin list or an audit entry; names stored before the rule keep
// working.
describeEachDatabase('Usernames created from the command line', (database) => {
  let app: TestApp;
  let tables: CoreTables;
  let orm: any;
  let manager: UserManager;

  const usernames = async (): Promise<string[]> =>
    (await orm.select({ username: tables.user.username }).from(tables.user)).map(
      (row: { username: string }) => row.username,
    );

  beforeAll(async () => {
    app = await startTestApp({ database });
    tables = app.app.runtime.tables.core as unknown as CoreTables;
    orm = app.app.runtime.authDb.orm;
    manager = createUserManager({
      db: app.app.runtime.authDb,
      tables,
      hashPassword: (password) => app.app.runtime.ports.get('loginGuard').hashPassword(password),
      now: () => new Date(),
    });
    await manager.create({ username: 'admin', password: DEFAULT_TEST_PASSWORD, isSuperuser: true });
  });
  afterAll(() => app.close());

  it.each([
    ['admin\u200b', 'an invisible character'],
    ['\u0430dmin', 'a Cyrillic а among Latin letters'],
    ['\u202eadmin', 'a right-to-left override'],
    ['ad', 'two characters'],
  ])('svc users create refuses %j (%s) and stores nothing', async (username) => {
    const before = await usernames();
    await expect(manager.create({ username, password: DEFAULT_TEST_PASSWORD })).rejects.toMatchObject({
      reason: 'username_invalid',
    });
    expect(await usernames()).toEqual(before);
  });

  it('svc users create refuses a full-width spelling of an existing name as taken', async () => {
    await expect(
      manager.create({ username: 'ＡＤＭＩＮ', password: DEFAULT_TEST_PASSWORD }),
    ).rejects.toMatchObject({ reason: 'user_exists' });
    expect((await usernames()).filter((name) => name.includes('admin') || name.includes('ａ'))).toEqual([
      'admin',
    ]);
  });

  it('stores the normal form and finds it by any spelling that folds to it', async () => {
    const created = await manager.create({ username: '  Ｊｏｈｎ ', password: DEFAULT_TEST_PASSWORD });
    expect(created.username).toBe('john');
    expect((await manager.find('JOHN'))?.id).toBe(created.id);
    expect((await manager.find('ｊｏｈｎ'))?.id).toBe(created.id);
    expect(await manager.update('ＪＯＨＮ', { firstName: 'John' })).toEqual(['firstName']);
    const client = await app.loginAs({ username: 'john', password: DEFAULT_TEST_PASSWORD });
    expect((await client.get('/api/auth/user')).body.data).toMatchObject({
      username: 'john',
      firstName: 'John',
    });
  });

  it('keeps names stored before the rule working: found, changed, logged in with as written', async () => {
    // Written directly, as an earlier version (or another tool) may have stored them.
    const passwordHash = await app.app.runtime.ports.get('loginGuard').hashPassword(DEFAULT_TEST_PASSWORD);
    for (const username of ['legacy\u200b', 'ｌｅｇａｃｙ']) {
      await orm.insert(tables.user).values({ username, passwordHash });
    }
    await manager.create({ username: 'legacy', password: 'another-password-1' });
    for (const username of ['legacy\u200b', 'ｌｅｇａｃｙ']) {
      const found = await manager.find(username);
      expect(found?.username).toBe(username);
      await manager.update(username, { lastName: 'Old' });
      const client = await app.loginAs({ username, password: DEFAULT_TEST_PASSWORD });
      expect((await client.get('/api/auth/user')).body.data).toMatchObject({ username, lastName: 'Old' });
    }
    const [plain] = await orm.select().from(tables.user).where(eq(tables.user.username, 'legacy'));
    expect(plain.lastName).toBe('');
    await manager.remove('ｌｅｇａｃｙ');
    expect(await usernames()).toEqual(expect.arrayContaining(['legacy', 'legacy\u200b']));
    expect(await usernames()).not.toContain('ｌｅｇａｃｙ');
  });
});
