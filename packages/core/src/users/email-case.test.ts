import { eq } from 'drizzle-orm';
import type { CoreTables } from '../kernel/db/tables.js';
import { mapDatabaseError } from '../kernel/errors/format.js';
import { describeEachDatabase } from '../testing/each.js';
import { startTestApp, type LoggedInClient, type TestApp } from '../testing/test-app.js';
import { createUserManager } from './manage.js';

const PASSWORD = 'correct-horse-battery';

// SPEC "User": an email is "unique across accounts". Mail systems treat `Alice@Example.com` and
// `alice@example.com` as one mailbox, and the address receives MFA codes, so one rule holds at every entrance
// (registration, the own account, the admin route, the command line) and in the database's unique index:
// addresses are compared without regard to letter case, and stored as the user wrote them.
describeEachDatabase('Email addresses are unique regardless of letter case', (database) => {
  let app: TestApp;
  let tables: CoreTables;
  let orm: any;
  let admin: LoggedInClient;

  const rowsWithEmail = async (email: string) =>
    (await orm.select().from(tables.user)).filter(
      (row: { email: string | null }) => row.email?.toLowerCase() === email.toLowerCase(),
    );

  beforeAll(async () => {
    app = await startTestApp({
      database,
      settings: { registration_enabled: true, password_min_length: 12 },
    });
    tables = app.app.runtime.tables.core as unknown as CoreTables;
    orm = app.app.runtime.authDb.orm;
    admin = await app.loginAs(
      await app.createUser({ username: 'root', email: 'root@example.com', isSuperuser: true }),
    );
    await app.createUser({ username: 'alice', email: 'alice@example.com' });
  });
  afterAll(() => app.close());

  it('refuses to register an address held by another account in another letter case', async () => {
    const res = await app.post('/api/auth/register', {
      username: 'mallory',
      password: PASSWORD,
      email: 'ALICE@Example.COM',
    });
    expect(res.status).toBe(400);
    expect(res.body.detail[0].code).toBe('user.username_or_email_exists');
    expect(await rowsWithEmail('alice@example.com')).toHaveLength(1);
    const [mallory] = await orm.select().from(tables.user).where(eq(tables.user.username, 'mallory'));
    expect(mallory).toBeUndefined();
  });

  it('refuses PATCH /auth/user to an address held by another account in another letter case', async () => {
    const bob = await app.createUser({ username: 'bob', email: 'bob@example.com' });
    const client = await app.loginAs(bob);
    const res = await client.patch('/api/auth/user', {
      email: 'Alice@EXAMPLE.com',
      currentPassword: PASSWORD,
    });
    expect(res.status).toBe(400);
    expect(res.body.detail[0].code).toBe('user.email_exists');
    const [row] = await orm.select().from(tables.user).where(eq(tables.user.id, bob.id));
    expect(row.email).toBe('bob@example.com');
    // The own address in another letter case is not "held by another account": it is stored as written.
    const own = await client.patch('/api/auth/user', { email: 'Bob@Example.com', currentPassword: PASSWORD });
    expect(own.status).toBe(200);
    expect(own.body.data.email).toBe('Bob@Example.com');
  });

  it('refuses the admin route and svc users the same way', async () => {
    const carol = await app.createUser({ username: 'carol' });
    const res = await admin.patch(`/api/admin/user/${carol.id}`, { email: 'aLiCe@example.com' });
    expect(res.status).toBe(400);
    expect(res.body.detail[0]).toMatchObject({ code: 'user.email_exists', loc: ['body', 'email'] });
    const manager = createUserManager({
      db: app.app.runtime.authDb,
      tables,
      hashPassword: async (password) => `not-a-hash:${password}`,
      now: () => new Date(),
    });
    await expect(manager.update('carol', { email: 'ALICE@EXAMPLE.COM' })).rejects.toMatchObject({
      reason: 'email_exists',
    });
    await expect(
      manager.create({ username: 'carol2', password: PASSWORD, email: 'Alice@Example.Com' }),
    ).rejects.toMatchObject({ reason: 'email_exists' });
  });

  it('lets one of many parallel registrations of one address in different cases through', async () => {
    const spellings = ['dora@example.com', 'DORA@example.com', 'Dora@Example.com', 'dora@EXAMPLE.COM'];
    const answers = await Promise.all(
      spellings.map((email, i) =>
        app.post('/api/auth/register', { username: `dora${i}`, password: PASSWORD, email }),
      ),
    );
    expect(answers.filter((res) => res.status === 201)).toHaveLength(1);
    for (const res of answers.filter((r) => r.status !== 201)) {
      expect(res.status).toBe(400);
      expect(res.body.detail[0].code).toBe('user.username_or_email_exists');
    }
    expect(await rowsWithEmail('dora@example.com')).toHaveLength(1);
  });

  it('keeps the unique index case-blind for writes that bypass the services', async () => {
    const insert = async (username: string, email: string) => {
      await orm.insert(tables.user).values({ username, email, passwordHash: 'x' });
    };
    await insert('erin', 'erin@example.com');
    const refused = await insert('erin2', 'ERIN@example.com').catch((error: unknown) => error);
    expect(mapDatabaseError(refused)?.code).toBe('db.conflict');
    expect(await rowsWithEmail('erin@example.com')).toHaveLength(1);
  });
});
