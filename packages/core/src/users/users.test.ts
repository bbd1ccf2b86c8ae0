import { eq } from 'drizzle-orm';
import type { CoreTables } from '../kernel/db/tables.js';
import type { SvcModule } from '../kernel/module.js';
import type { UserChange } from '../kernel/ports.js';
import { describeEachDatabase } from '../testing/each.js';
import { startTestApp, type LoggedInClient, type TestApp, type TestUser } from '../testing/test-app.js';

const MIN_LENGTH = 12;

/** Records what the users feature tells open event sockets, then passes it on to the real sink. */
function eventsSpy(changes: [string, UserChange][]): SvcModule {
  return {
    name: 'events-spy',
    setup({ ports }) {
      const real = ports.get('events');
      ports.provide('events', {
        emit: (type, data) => real.emit(type, data),
        emitCustom: (type, data, audience) => real.emitCustom(type, data, audience),
        userChanged(userId, change) {
          changes.push([userId, change]);
          real.userChanged(userId, change);
        },
      });
      return {};
    },
  };
}

describeEachDatabase('Admin user routes', (database) => {
  let app: TestApp;
  let root: TestUser;
  let admin: LoggedInClient;
  let tables: CoreTables;
  let orm: any;
  const changes: [string, UserChange][] = [];

  const userRow = async (id: string) => {
    const [row] = await orm.select().from(tables.user).where(eq(tables.user.id, id));
    return row;
  };

  beforeAll(async () => {
    app = await startTestApp({
      database,
      settings: { password_min_length: MIN_LENGTH, login_max_attempts: 3, login_lockout_minutes: 1 },
      modules: [eventsSpy(changes)],
    });
    tables = app.app.runtime.tables.core as unknown as CoreTables;
    orm = app.app.runtime.authDb.orm;
    root = await app.createUser({ username: 'root', email: 'root@example.com', isSuperuser: true });
    admin = await app.loginAs(root);
  });
  afterAll(() => app.close());
  beforeEach(() => {
    changes.length = 0;
  });

  describe('protection', () => {
    it('answers 401 without a token and 403 access.superuser_required for a non-superuser, staff included', async () => {
      const anonymous = await app.get('/api/admin/user');
      expect(anonymous.status).toBe(401);
      expect(anonymous.body.detail[0]).toMatchObject({ code: 'auth.not_authenticated' });
      const staff = await app.loginAs(await app.createUser({ username: 'staffer', isStaff: true }));
      for (const res of [
        await staff.get('/api/admin/user'),
        await staff.get(`/api/admin/user/${root.id}`),
        await staff.patch(`/api/admin/user/${root.id}`, { firstName: 'x' }),
        await staff.delete(`/api/admin/user/${root.id}`),
      ]) {
        expect(res.status).toBe(403);
        expect(res.body.detail[0]).toMatchObject({ code: 'access.superuser_required' });
      }
      expect((await userRow(root.id)).firstName).toBe('');
    });
  });

  it('documents the four admin user routes in the core OpenAPI document', async () => {
    const res = await app.get('/openapi-core.json');
    expect(res.status).toBe(200);
    const paths = res.body.paths as Record<string, Record<string, unknown>>;
    const list = Object.keys(paths).find((path) => /^\/api\/admin\/user\/?$/.test(path));
    const one = Object.keys(paths).find((path) => /^\/api\/admin\/user\/\{user_id\}$/.test(path));
    expect(Object.keys(paths[list!]!)).toContain('get');
    expect(Object.keys(paths[one!]!).sort()).toEqual(expect.arrayContaining(['delete', 'get', 'patch']));
  });

  describe('GET /admin/user', () => {
    let listed: TestUser[];
    beforeAll(async () => {
      listed = [];
      const people = [
        { username: 'list_anna', email: 'Anna.Berg@Example.com', firstName: 'Anna', lastName: 'Berg' },
        { username: 'list_bert', email: null, firstName: 'Bert', lastName: 'Zander' },
        { username: 'list_cleo', email: 'cleo@example.org', firstName: 'Cleo', lastName: 'Percent%Name' },
        { username: 'list_dora', email: 'dora@example.org', firstName: 'Dora', lastName: 'Under_Score' },
      ];
      for (const person of people) {
        listed.push(await app.createUser(person));
        // distinct created_at values so "newest first" is observable on millisecond clocks
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    });

    it('returns the pagination fields with defaults page 1, pageSize 25, newest first', async () => {
      const res = await admin.get('/api/admin/user');
      expect(res.status).toBe(200);
      expect(res.body.success).toBe(true);
      const data = res.body.data;
      expect(Object.keys(data).sort()).toEqual(['items', 'page', 'pageSize', 'pages', 'total']);
      expect(data).toMatchObject({ page: 1, pageSize: 25, pages: 1 });
      expect(data.total).toBe(data.items.length);
      const usernames = data.items.map((u: { username: string }) => u.username);
      expect(usernames.slice(0, 4)).toEqual(['list_dora', 'list_cleo', 'list_bert', 'list_anna']);
      const createdAt = data.items.map((u: { createdAt: string }) => Date.parse(u.createdAt));
      expect([...createdAt].sort((a, b) => b - a)).toEqual(createdAt);
    });

    it('returns users in the SPEC "User" shape without secrets', async () => {
      const res = await admin.get('/api/admin/user?search=list_anna');
      const [anna] = res.body.data.items;
      expect(anna).toEqual({
        id: listed[0]!.id,
        username: 'list_anna',
        email: 'Anna.Berg@Example.com',
        firstName: 'Anna',
        lastName: 'Berg',
        isActive: true,
        isStaff: false,
        isSuperuser: false,
        emailVerifiedAt: null,
        lastLoginAt: null,
        createdAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/),
      });
    });

    it('pages with page and pageSize and counts pages', async () => {
      const all = (await admin.get('/api/admin/user?pageSize=200')).body.data;
      const res = await admin.get('/api/admin/user?page=2&pageSize=2&orderBy=username');
      expect(res.status).toBe(200);
      expect(res.body.data).toMatchObject({
        page: 2,
        pageSize: 2,
        total: all.total,
        pages: Math.ceil(all.total / 2),
      });
      const sorted = all.items.map((u: { username: string }) => u.username).sort();
      expect(res.body.data.items.map((u: { username: string }) => u.username)).toEqual(sorted.slice(2, 4));
      const beyond = await admin.get('/api/admin/user?page=99&pageSize=2');
      expect(beyond.status).toBe(200);
      expect(beyond.body.data.items).toEqual([]);
    });

    it('searches username, email, first and last name case-insensitively', async () => {
      const names = async (search: string) =>
        (await admin.get(`/api/admin/user?search=${encodeURIComponent(search)}`)).body.data.items
          .map((u: { username: string }) => u.username)
          .sort();
      expect(await names('LIST_B')).toEqual(['list_bert']);
      expect(await names('anna.berg@example')).toEqual(['list_anna']);
      expect(await names('example.org')).toEqual(['list_cleo', 'list_dora']);
      expect(await names('cLEO')).toEqual(['list_cleo']);
      expect(await names('zANDER')).toEqual(['list_bert']);
      const res = await admin.get('/api/admin/user?search=example.org');
      expect(res.body.data).toMatchObject({ total: 2, pages: 1 });
    });

    it('treats % and _ in search as plain characters', async () => {
      const names = async (search: string) =>
        (await admin.get(`/api/admin/user?search=${encodeURIComponent(search)}`)).body.data.items.map(
          (u: { username: string }) => u.username,
        );
      expect(await names('%')).toEqual(['list_cleo']);
      expect(await names('t%n')).toEqual(['list_cleo']);
      expect(await names('r_s')).toEqual(['list_dora']);
      expect(await names('list_')).toHaveLength(4);
      expect(await names('ann_')).toEqual([]); // a wildcard _ would match "anna"
    });

    it('orders by whitelisted fields, camelCase or snake_case, - for descending', async () => {
      const names = async (orderBy: string) =>
        (await admin.get(`/api/admin/user?search=list_&orderBy=${orderBy}`)).body.data.items.map(
          (u: { username: string }) => u.username,
        );
      expect(await names('username')).toEqual(['list_anna', 'list_bert', 'list_cleo', 'list_dora']);
      expect(await names('-username')).toEqual(['list_dora', 'list_cleo', 'list_bert', 'list_anna']);
      expect(await names('last_name')).toEqual(['list_anna', 'list_cleo', 'list_dora', 'list_bert']);
      expect(await names('-lastName')).toEqual(['list_bert', 'list_dora', 'list_cleo', 'list_anna']);
      expect(await names('created_at')).toEqual(['list_anna', 'list_bert', 'list_cleo', 'list_dora']);
      // a null email sorts last in both directions on both dialects
      expect((await names('email')).at(-1)).toBe('list_bert');
      expect((await names('-email')).at(-1)).toBe('list_bert');
    });

    it('refuses an orderBy outside the whitelist with 422, never a 500 (SQL injection attempt)', async () => {
      for (const orderBy of [
        'username;drop table svc_user',
        'password_hash',
        'username desc',
        '-',
        '(select 1)',
      ]) {
        const res = await admin.get(`/api/admin/user?orderBy=${encodeURIComponent(orderBy)}`);
        expect(res.status).toBe(422);
        expect(res.body.detail[0]).toMatchObject({
          code: 'request.validation_error',
          loc: ['query', 'orderBy'],
        });
        expect(res.body.detail[0].params.allowed).toEqual(expect.arrayContaining(['username', 'createdAt']));
      }
      expect((await admin.get('/api/admin/user')).status).toBe(200);
    });

    it('refuses pageSize above 200 and page below 1 with 422', async () => {
      const big = await admin.get('/api/admin/user?pageSize=201');
      expect(big.status).toBe(422);
      expect(big.body.detail[0]).toMatchObject({
        code: 'request.validation_error',
        loc: ['query', 'pageSize'],
      });
      const zero = await admin.get('/api/admin/user?page=0');
      expect(zero.status).toBe(422);
      expect(zero.body.detail[0]).toMatchObject({ loc: ['query', 'page'] });
      expect((await admin.get('/api/admin/user?pageSize=200')).status).toBe(200);
    });
  });

  describe('GET /admin/user/{user_id}', () => {
    it('returns one user', async () => {
      const res = await admin.get(`/api/admin/user/${root.id}`);
      expect(res.status).toBe(200);
      expect(res.body.data).toMatchObject({
        id: root.id,
        username: 'root',
        isSuperuser: true,
        email: 'root@example.com',
      });
      expect(res.body.data.passwordHash).toBeUndefined();
      expect(res.body.data.lastLoginAt).toEqual(expect.any(String));
    });

    it('answers 404 user.not_found for a missing or malformed id (never a 500 on the uuid type)', async () => {
      for (const id of ['6f1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b', 'not-a-uuid', '1', "x'%20or%20'1'='1"]) {
        const res = await admin.get(`/api/admin/user/${id}`);
        expect(res.status).toBe(404);
        expect(res.body.detail[0]).toMatchObject({ code: 'user.not_found', loc: ['path', 'user_id'] });
      }
    });
  });

  describe('PATCH /admin/user/{user_id}', () => {
    it('changes names and flags, only the fields sent', async () => {
      const user = await app.createUser({ username: 'patch_names', firstName: 'Old', lastName: 'Name' });
      const res = await admin.patch(`/api/admin/user/${user.id}`, { firstName: 'New', isStaff: true });
      expect(res.status).toBe(200);
      expect(res.body.data).toMatchObject({ id: user.id, firstName: 'New', lastName: 'Name', isStaff: true });
      const row = await userRow(user.id);
      expect(row).toMatchObject({ firstName: 'New', lastName: 'Name', isStaff: true, isActive: true });
      expect(row.passwordChangedAt).toBeNull();
      expect(changes).toEqual([]);
    });

    it('sets, clears and refuses a taken email with 400 user.email_exists', async () => {
      const user = await app.createUser({ username: 'patch_email', email: 'before@example.com' });
      const set = await admin.patch(`/api/admin/user/${user.id}`, { email: 'after@example.com' });
      expect(set.status).toBe(200);
      expect(set.body.data.email).toBe('after@example.com');
      const taken = await admin.patch(`/api/admin/user/${user.id}`, { email: 'ROOT@example.com' });
      expect(taken.status).toBe(400);
      expect(taken.body.detail[0]).toMatchObject({ code: 'user.email_exists', loc: ['body', 'email'] });
      expect((await userRow(user.id)).email).toBe('after@example.com');
      const same = await admin.patch(`/api/admin/user/${user.id}`, { email: 'after@example.com' });
      expect(same.status).toBe(200);
      const cleared = await admin.patch(`/api/admin/user/${user.id}`, { email: '' });
      expect(cleared.status).toBe(200);
      expect(cleared.body.data.email).toBeNull();
      expect((await userRow(user.id)).email).toBeNull();
      const invalid = await admin.patch(`/api/admin/user/${user.id}`, { email: 'not an email' });
      expect(invalid.status).toBe(422);
      expect(invalid.body.detail[0]).toMatchObject({
        code: 'request.validation_error',
        loc: ['body', 'email'],
      });
    });

    it('refuses a short password with 422 auth.password_too_short and params.min_length', async () => {
      const user = await app.createUser({ username: 'patch_short' });
      const before = await userRow(user.id);
      const res = await admin.patch(`/api/admin/user/${user.id}`, { password: 'x'.repeat(MIN_LENGTH - 1) });
      expect(res.status).toBe(422);
      expect(res.body.detail[0]).toMatchObject({
        code: 'auth.password_too_short',
        loc: ['body', 'password'],
        params: { min_length: MIN_LENGTH },
      });
      expect((await userRow(user.id)).passwordHash).toBe(before.passwordHash);
    });

    it('a password change lifts the login lock, stamps password_changed_at and ends every login', async () => {
      const user = await app.createUser({ username: 'patch_password' });
      const client = await app.loginAs(user);
      // lock the account the way failed logins do
      await orm
        .update(tables.user)
        .set({ failedLoginCount: 2, lockedUntil: new Date(Date.now() + 60_000) })
        .where(eq(tables.user.id, user.id));
      const locked = await app.post('/api/auth/token', undefined, {
        form: { username: user.username, password: user.password },
      });
      expect(locked.status).toBe(401);

      await new Promise((resolve) => setTimeout(resolve, 1_100)); // token iat has second precision
      const res = await admin.patch(`/api/admin/user/${user.id}`, { password: 'a-brand-new-password' });
      expect(res.status).toBe(200);
      const row = await userRow(user.id);
      expect(row).toMatchObject({ failedLoginCount: 0, lockedUntil: null });
      expect(row.passwordChangedAt).toBeInstanceOf(Date);
      expect(row.passwordHash).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
      const tokens = await orm
        .select()
        .from(tables.refreshToken)
        .where(eq(tables.refreshToken.userId, user.id));
      expect(tokens).toEqual([]);
      expect(changes).toEqual([[user.id, 'password_changed']]);

      const old = await client.get('/api/auth/user');
      expect(old.status).toBe(401);
      expect(old.body.detail[0]).toMatchObject({ code: 'auth.token_revoked' });
      const refresh = await app.post('/api/auth/refresh-token', { refresh_token: client.refreshToken });
      expect(refresh.status).toBe(401);
      const oldPassword = await app.post('/api/auth/token', undefined, {
        form: { username: user.username, password: user.password },
      });
      expect(oldPassword.status).toBe(401);
      const fresh = await app.loginAs({ username: user.username, password: 'a-brand-new-password' });
      expect((await fresh.get('/api/auth/user')).status).toBe(200);
    });

    it('deactivation revokes refresh tokens, tells event sockets, and the user is refused', async () => {
      const user = await app.createUser({ username: 'patch_inactive' });
      const client = await app.loginAs(user);
      const res = await admin.patch(`/api/admin/user/${user.id}`, { isActive: false });
      expect(res.status).toBe(200);
      expect(res.body.data.isActive).toBe(false);
      expect(
        await orm.select().from(tables.refreshToken).where(eq(tables.refreshToken.userId, user.id)),
      ).toEqual([]);
      expect(changes).toEqual([[user.id, 'deactivated']]);
      const me = await client.get('/api/auth/user');
      expect(me.status).toBe(400);
      expect(me.body.detail[0]).toMatchObject({ code: 'user.disabled' });
      const again = await admin.patch(`/api/admin/user/${user.id}`, { isActive: true });
      expect(again.body.data.isActive).toBe(true);
    });

    it('a superuser flag change is told to event sockets and takes effect at once', async () => {
      const user = await app.createUser({ username: 'patch_super' });
      const client = await app.loginAs(user);
      expect((await client.get('/api/admin/user')).status).toBe(403);
      const res = await admin.patch(`/api/admin/user/${user.id}`, { isSuperuser: true });
      expect(res.status).toBe(200);
      expect(changes).toEqual([[user.id, 'superuser_changed']]);
      expect((await client.get('/api/admin/user')).status).toBe(200);
      changes.length = 0;
      await admin.patch(`/api/admin/user/${user.id}`, { isSuperuser: true });
      expect(changes).toEqual([]);
      await admin.patch(`/api/admin/user/${user.id}`, { isSuperuser: false });
      expect(changes).toEqual([[user.id, 'superuser_changed']]);
      expect((await client.get('/api/admin/user')).status).toBe(403);
    });

    it('refuses to deactivate or demote oneself with 400 user.cannot_demote_self', async () => {
      const inactive = await admin.patch(`/api/admin/user/${root.id}`, { isActive: false });
      expect(inactive.status).toBe(400);
      expect(inactive.body.detail[0]).toMatchObject({
        code: 'user.cannot_demote_self',
        loc: ['body', 'isActive'],
      });
      const demote = await admin.patch(`/api/admin/user/${root.id}`, {
        isSuperuser: false,
        firstName: 'Sneaky',
      });
      expect(demote.status).toBe(400);
      expect(demote.body.detail[0]).toMatchObject({
        code: 'user.cannot_demote_self',
        loc: ['body', 'isSuperuser'],
      });
      expect(await userRow(root.id)).toMatchObject({ isActive: true, isSuperuser: true, firstName: '' });
      const harmless = await admin.patch(`/api/admin/user/${root.id}`, { isActive: true, isSuperuser: true });
      expect(harmless.status).toBe(200);
    });

    it('answers 404 user.not_found for a missing user and 422 for wrongly typed fields', async () => {
      const missing = await admin.patch('/api/admin/user/6f1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b', {
        firstName: 'x',
      });
      expect(missing.status).toBe(404);
      expect(missing.body.detail[0]).toMatchObject({ code: 'user.not_found', loc: ['path', 'user_id'] });
      const malformed = await admin.patch('/api/admin/user/nope', { firstName: 'x' });
      expect(malformed.status).toBe(404);
      const typed = await admin.patch(`/api/admin/user/${root.id}`, { isStaff: 'yes' });
      expect(typed.status).toBe(422);
      expect(typed.body.detail[0]).toMatchObject({
        code: 'request.validation_error',
        loc: ['body', 'isStaff'],
      });
    });
  });

  describe('DELETE /admin/user/{user_id}', () => {
    it('refuses to delete oneself with 400 user.cannot_delete_self', async () => {
      const res = await admin.delete(`/api/admin/user/${root.id}`);
      expect(res.status).toBe(400);
      expect(res.body.detail[0]).toMatchObject({ code: 'user.cannot_delete_self', loc: ['path', 'user_id'] });
      expect(await userRow(root.id)).toBeDefined();
    });

    it('deletes the user with groups, permissions, settings, MFA data and refresh records (204)', async () => {
      const user = await app.createUser({ username: 'doomed' });
      const client = await app.loginAs(user);
      const [group] = await orm.insert(tables.group).values({ name: 'doomed-group' }).returning();
      const [permission] = await orm
        .insert(tables.permission)
        .values({ codename: 'doomed.read' })
        .returning();
      await orm.insert(tables.userGroup).values({ userId: user.id, groupId: group.id });
      await orm.insert(tables.userPermission).values({ userId: user.id, permissionId: permission.id });
      await orm
        .insert(tables.userSettings)
        .values({ userId: user.id, data: { appearance: { theme: 'dark' } } });
      const mfa = app.app.runtime.tables.mfa as { mfaConfig?: any; mfaPending?: any } | undefined;
      if (mfa?.mfaConfig) await orm.insert(mfa.mfaConfig).values({ userId: user.id, method: 'totp' });
      if (mfa?.mfaPending) {
        await orm
          .insert(mfa.mfaPending)
          .values({ id: 'p1', userId: user.id, expiresAt: new Date(Date.now() + 60_000) });
      }
      expect(
        await orm.select().from(tables.refreshToken).where(eq(tables.refreshToken.userId, user.id)),
      ).not.toEqual([]);

      const res = await admin.delete(`/api/admin/user/${user.id}`);
      expect(res.status).toBe(204);
      expect(res.text).toBe('');
      expect(changes).toEqual([[user.id, 'deleted']]);
      expect(await userRow(user.id)).toBeUndefined();
      const byUser = (table: any) => orm.select().from(table).where(eq(table.userId, user.id));
      expect(await byUser(tables.userGroup)).toEqual([]);
      expect(await byUser(tables.userPermission)).toEqual([]);
      expect(await byUser(tables.userSettings)).toEqual([]);
      expect(await byUser(tables.refreshToken)).toEqual([]);
      if (mfa?.mfaConfig) expect(await byUser(mfa.mfaConfig)).toEqual([]);
      if (mfa?.mfaPending) expect(await byUser(mfa.mfaPending)).toEqual([]);
      // the group and permission themselves stay
      expect(await orm.select().from(tables.group).where(eq(tables.group.id, group.id))).toHaveLength(1);
      expect(
        await orm.select().from(tables.permission).where(eq(tables.permission.id, permission.id)),
      ).toHaveLength(1);

      const me = await client.get('/api/auth/user');
      expect(me.status).toBe(401);
      expect(me.body.detail[0]).toMatchObject({ code: 'user.not_found' });
      const lookup = await admin.get(`/api/admin/user/${user.id}`);
      expect(lookup.status).toBe(404);
      const again = await admin.delete(`/api/admin/user/${user.id}`);
      expect(again.status).toBe(404);
      expect(again.body.detail[0]).toMatchObject({ code: 'user.not_found', loc: ['path', 'user_id'] });
      expect((await admin.delete('/api/admin/user/garbage')).status).toBe(404);
    });
  });
});
