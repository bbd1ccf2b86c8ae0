import { z } from 'zod';
import { defineRouter } from '../kernel/router.js';
import { describeEachDatabase, startTestApp, type TestApp } from '../testing/index.js';

const BASE = '/api/admin/permissions';

// SPEC "Route protection rules" with project routers, as API.md writes them.
const notes = defineRouter({ prefix: '/notes', permissions: ['notes.read'] });
notes.get('/', {}, async (ctx) => ({ user: ctx.user?.username ?? null }));
notes.post(
  '/:noteId/archive',
  { permissions: ['notes.write', 'notes.admin'], params: z.object({ noteId: z.string() }) },
  async (ctx) => ({
    archived: ctx.params.noteId,
  }),
);
notes.get('/about', { public: true }, async () => ({ ok: true }));

const open = defineRouter({ prefix: '/open' });
open.get('/ping', { public: true }, async (ctx) => ({ pong: true, user: ctx.user?.username ?? null }));

const staff = defineRouter({ prefix: '/staff-area', requireStaff: true });
staff.get('/', { permissions: ['staff.extra'] }, async () => ({ staff: true }));
staff.get('/boss', { requireSuperuser: true }, async () => ({ boss: true }));

const routers = [notes, open, staff];

describeEachDatabase('route protection with project routers', (database) => {
  let app: TestApp;
  let tokens: Record<string, string>;
  let ids: Record<string, number>;

  beforeAll(async () => {
    app = await startTestApp({ database, routers });
    const admin = await app.loginAs(await app.createUser({ username: 'root', isSuperuser: true }));
    ids = {};
    for (const codename of ['notes.read', 'notes.write', 'notes.admin', 'staff.extra']) {
      ids[codename] = (await admin.post(`${BASE}/permissions`, { codename })).body.data.id;
    }
    const readers = await admin.post(`${BASE}/groups`, {
      name: 'readers',
      permissionIds: [ids['notes.read']],
    });
    const reader = await app.createUser({ username: 'reader' });
    const writer = await app.createUser({ username: 'writer' });
    const nobody = await app.createUser({ username: 'nobody' });
    const clerk = await app.createUser({ username: 'clerk', isStaff: true });
    await admin.put(`${BASE}/users/${reader.id}/groups`, { groupIds: [readers.body.data.id] });
    await admin.put(`${BASE}/users/${writer.id}/groups`, { groupIds: [readers.body.data.id] });
    await admin.put(`${BASE}/users/${writer.id}/permissions`, { permissionIds: [ids['notes.write']] });
    tokens = { root: admin.accessToken };
    for (const user of [reader, writer, nobody, clerk])
      tokens[user.username] = (await app.loginAs(user)).accessToken;
  });
  afterAll(() => app.close());

  it('lets a holder of the router permission through', async () => {
    const res = await app.as(tokens.reader!).get('/api/notes');
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({ user: 'reader' });
  });

  it('answers 403 access.permissions_missing listing exactly the missing codenames', async () => {
    const none = await app.as(tokens.nobody!).post('/api/notes/7/archive');
    expect(none.status).toBe(403);
    expect(none.body.detail[0]).toMatchObject({
      code: 'access.permissions_missing',
      params: { permissions: ['notes.read', 'notes.write', 'notes.admin'] },
    });
    // Router and route requirements add up: the writer holds read and write, misses only admin.
    const writer = await app.as(tokens.writer!).post('/api/notes/7/archive');
    expect(writer.status).toBe(403);
    expect(writer.body.detail[0].params).toEqual({ permissions: ['notes.admin'] });
    const reader = await app.as(tokens.reader!).get('/api/notes');
    expect(reader.status).toBe(200);
  });

  it('passes once the missing permission is granted (no stale permissions)', async () => {
    const admin = app.as(tokens.root!);
    const writerId = (await app.as(tokens.writer!).get('/api/auth/user')).body.data.id;
    await admin.put(`${BASE}/users/${writerId}/permissions`, {
      permissionIds: [ids['notes.write'], ids['notes.admin']],
    });
    const res = await app.as(tokens.writer!).post('/api/notes/7/archive');
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({ archived: '7' });
  });

  it('keeps router permissions on a public route: 401 without token, 403 without the permission', async () => {
    const anonymous = await app.get('/api/notes/about');
    expect(anonymous.status).toBe(401);
    expect(anonymous.body.detail[0].code).toBe('auth.not_authenticated');
    const nobody = await app.as(tokens.nobody!).get('/api/notes/about');
    expect(nobody.status).toBe(403);
    expect(nobody.body.detail[0].params).toEqual({ permissions: ['notes.read'] });
    expect((await app.as(tokens.reader!).get('/api/notes/about')).status).toBe(200);
  });

  it('serves a public route of an unprotected router without token, seeing a caller who sends one', async () => {
    const anonymous = await app.get('/api/open/ping');
    expect(anonymous.status).toBe(200);
    expect(anonymous.body.data).toEqual({ pong: true, user: null });
    const known = await app.as(tokens.nobody!).get('/api/open/ping');
    expect(known.body.data).toEqual({ pong: true, user: 'nobody' });
  });

  it('checks in order: superuser, require_superuser, require_staff, permissions', async () => {
    const nobody = await app.as(tokens.nobody!).get('/api/staff-area/boss');
    expect(nobody.status).toBe(403);
    expect(nobody.body.detail[0].code).toBe('access.superuser_required');
    const clerkBoss = await app.as(tokens.clerk!).get('/api/staff-area/boss');
    expect(clerkBoss.body.detail[0].code).toBe('access.superuser_required');
    const nobodyStaff = await app.as(tokens.nobody!).get('/api/staff-area');
    expect(nobodyStaff.status).toBe(403);
    expect(nobodyStaff.body.detail[0].code).toBe('access.staff_required');
    const clerk = await app.as(tokens.clerk!).get('/api/staff-area');
    expect(clerk.status).toBe(403);
    expect(clerk.body.detail[0]).toMatchObject({
      code: 'access.permissions_missing',
      params: { permissions: ['staff.extra'] },
    });
  });

  it('lets a superuser pass every check without holding any permission', async () => {
    const root = app.as(tokens.root!);
    for (const [method, path] of [
      ['GET', '/api/notes'],
      ['POST', '/api/notes/1/archive'],
      ['GET', '/api/notes/about'],
      ['GET', '/api/staff-area'],
      ['GET', '/api/staff-area/boss'],
    ] as const) {
      expect((await root.request(method, path)).status).toBe(200);
    }
  });

  it('answers 401 on a protected route without a token', async () => {
    const res = await app.post('/api/notes/1/archive');
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe('Bearer');
  });
});

describeEachDatabase('route protection with global_noauth', (database) => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ database, routers, settings: { global_noauth: true } });
  });
  afterAll(() => app.close());

  it('passes every route without a token', async () => {
    for (const [method, path] of [
      ['GET', '/api/notes'],
      ['POST', '/api/notes/1/archive'],
      ['GET', '/api/notes/about'],
      ['GET', '/api/staff-area'],
      ['GET', '/api/staff-area/boss'],
    ] as const) {
      const res = await app.request(method, path);
      expect([path, res.status]).toEqual([path, 200]);
    }
  });
});
