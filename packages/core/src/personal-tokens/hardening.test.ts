import { and, eq } from 'drizzle-orm';
import { moveClockAhead, restoreClock } from '../../../../testing/clock.js';
import { dbOf } from '../../../../testing/mfa.js';
import { describeEachDatabase, startTestApp, type LoggedInClient, type TestApp } from '../testing/index.js';
import type { PersonalTokenTables } from './tables.js';

const MINUTE = 60_000;

function tokenTable(app: TestApp) {
  return (app.app.runtime.tables['personal-tokens'] as unknown as PersonalTokenTables).personalToken;
}

async function tokenIdsOf(app: TestApp, userId: string): Promise<string[]> {
  const t = tokenTable(app);
  const rows = await dbOf(app).orm.select({ id: t.id }).from(t).where(eq(t.userId, userId));
  return rows.map((row) => row.id).sort();
}

/** SPEC-3 §7 rule 1 at `POST /auth/tokens`: a recent login, an expiry for all but superusers, a maximum. */
describeEachDatabase('Personal access tokens: what it takes to mint one', (database) => {
  let app: TestApp;
  let admin: LoggedInClient;
  beforeAll(async () => {
    app = await startTestApp({
      database,
      settings: {
        personal_tokens_enabled: true,
        reauthentication_max_age_minutes: 5,
        personal_tokens_max_per_user: 2,
      },
    });
    admin = await app.loginAs(await app.createUser({ username: 'mint_admin', isSuperuser: true }));
  });
  afterEach(() => restoreClock());
  afterAll(() => app.close());

  const refresh = async (refreshToken: string) => {
    const res = await app.post('/api/auth/refresh-token', { refresh_token: refreshToken });
    expect(res.status).toBe(200);
    return { access: res.body.access_token as string, refresh: res.body.refresh_token as string };
  };

  it('refuses a session whose login is older than reauthentication_max_age_minutes, also after a refresh', async () => {
    const user = await app.createUser({ username: 'mint_stale' });
    const client = await app.loginAs(user);
    // Within the window a refreshed session still counts: its login is what matters, not the refresh.
    moveClockAhead(4 * MINUTE);
    const early = await refresh(client.refreshToken);
    expect((await app.as(early.access).post('/api/auth/tokens', { name: 'early' })).status).toBe(201);

    moveClockAhead(2 * MINUTE); // six minutes after the login
    for (const stale of [client, app.as((await refresh(early.refresh)).access)]) {
      const res = await stale.post('/api/auth/tokens', { name: 'late' });
      expect(res.status).toBe(403);
      expect(res.body.detail[0]).toMatchObject({
        code: 'auth.reauthentication_required',
        loc: ['header', 'Authorization'],
      });
    }
    // A superuser's stale session is refused all the same.
    const staleAdmin = await admin.post('/api/auth/tokens', { name: 'late' });
    expect(staleAdmin.status).toBe(403);
    expect(staleAdmin.body.detail[0].code).toBe('auth.reauthentication_required');
    expect(await tokenIdsOf(app, user.id)).toHaveLength(1);

    // A new login is recent again.
    const again = await app.loginAs(user);
    expect((await again.post('/api/auth/tokens', { name: 'fresh' })).status).toBe(201);
    expect(await tokenIdsOf(app, user.id)).toHaveLength(2);
  });

  it('gives a token without expiry to superusers only: 422 access.token_expiry_required for others', async () => {
    const user = await app.createUser({ username: 'mint_forever', isStaff: true });
    const client = await app.loginAs(user);
    const res = await client.post('/api/auth/tokens', { name: 'forever', expiresInDays: null });
    expect(res.status).toBe(422);
    expect(res.body.detail[0]).toMatchObject({
      code: 'access.token_expiry_required',
      loc: ['body', 'expiresInDays'],
    });
    expect(await tokenIdsOf(app, user.id)).toEqual([]);

    const superAdmin = await app.loginAs(await app.createUser({ username: 'mint_root', isSuperuser: true }));
    const forever = await superAdmin.post('/api/auth/tokens', { name: 'forever', expiresInDays: null });
    expect(forever.status).toBe(201);
    expect(forever.body.data.expiresAt).toBeNull();
  });

  it('answers 409 access.token_limit at personal_tokens_max_per_user; deleted and expired tokens do not count', async () => {
    const user = await app.createUser({ username: 'mint_many' });
    const client = await app.loginAs(user);
    const first = await client.post('/api/auth/tokens', { name: 'one' });
    const second = await client.post('/api/auth/tokens', { name: 'two' });
    expect([first.status, second.status]).toEqual([201, 201]);
    const third = await client.post('/api/auth/tokens', { name: 'three' });
    expect(third.status).toBe(409);
    expect(third.body.detail[0]).toMatchObject({ code: 'access.token_limit', params: { max: 2 } });
    expect(await tokenIdsOf(app, user.id)).toHaveLength(2);

    // A deleted token frees its place.
    expect((await client.delete(`/api/auth/tokens/${first.body.data.id}`)).status).toBe(204);
    const replacement = await client.post('/api/auth/tokens', { name: 'three' });
    expect(replacement.status).toBe(201);
    expect((await client.post('/api/auth/tokens', { name: 'four' })).status).toBe(409);

    // So does an expired one (still stored, no longer counted).
    const t = tokenTable(app);
    await dbOf(app)
      .orm.update(t)
      .set({ expiresAt: new Date(Date.now() - 1000) })
      .where(and(eq(t.id, second.body.data.id), eq(t.userId, user.id)));
    expect((await client.post('/api/auth/tokens', { name: 'four' })).status).toBe(201);
    expect(await tokenIdsOf(app, user.id)).toHaveLength(3);
  });
});

/** SPEC-3 §7 rule 3: a personal token cannot raise privileges, whatever its owner may do. */
describeEachDatabase('Personal access tokens cannot raise privileges', (database) => {
  let app: TestApp;
  let owner: LoggedInClient;
  let pat: ReturnType<TestApp['as']>;
  let victimId: string;
  let groupId: number;
  let permissionId: number;
  beforeAll(async () => {
    app = await startTestApp({ database, settings: { personal_tokens_enabled: true } });
    owner = await app.loginAs(await app.createUser({ username: 'raise_owner', isSuperuser: true }));
    victimId = (await app.createUser({ username: 'raise_victim', email: 'victim@example.com' })).id;
    const created = await owner.post('/api/auth/tokens', { name: 'admin-ci', superuser: true, staff: false });
    expect(created.status).toBe(201);
    pat = app.as(created.body.data.token);
    groupId = (await owner.post('/api/admin/permissions/groups', { name: 'raisers' })).body.data.id;
    permissionId = (await owner.post('/api/admin/permissions/permissions', { codename: 'raise.it' })).body
      .data.id;
  });
  afterAll(() => app.close());

  const refused = (res: { status: number; body: { detail: { code: string; loc: string[] }[] } }) => {
    expect(res.status).toBe(403);
    expect(res.body.detail[0]).toMatchObject({
      code: 'access.token_not_allowed',
      loc: ['header', 'Authorization'],
    });
  };

  it('refuses PATCH /admin/user/{user_id} that names isSuperuser, isStaff, isActive, password or email', async () => {
    for (const body of [
      { isSuperuser: true },
      { isStaff: true },
      { isActive: false },
      { firstName: 'Eve', isSuperuser: false },
      { password: 'an-attackers-passphrase' },
      { email: 'thief@example.com' },
      // "whose body names" the field: whatever its value, also one the body's schema would refuse (422).
      { password: 12 },
      { isSuperuser: 'yes' },
      { email: null, firstName: 7 },
    ]) {
      refused(await pat.patch(`/api/admin/user/${victimId}`, body));
    }
    const stored = await owner.get(`/api/admin/user/${victimId}`);
    expect(stored.body.data).toMatchObject({
      isSuperuser: false,
      isStaff: false,
      isActive: true,
      firstName: '',
      email: 'victim@example.com',
    });
    // Profile fields stay open to a superuser's token.
    const named = await pat.patch(`/api/admin/user/${victimId}`, { firstName: 'Victor' });
    expect(named.status).toBe(200);
    expect(named.body.data).toMatchObject({ firstName: 'Victor', isSuperuser: false });
  });

  it('refuses POST /admin/user/invite', async () => {
    refused(await pat.post('/api/admin/user/invite', { email: 'thief@example.com', username: 'thief' }));
    const found = await owner.get('/api/admin/user/?search=thief');
    expect(found.body.data.items).toEqual([]);
  });

  it('refuses every write route of the permissions router and keeps its reads', async () => {
    const base = '/api/admin/permissions';
    refused(await pat.put(`${base}/users/${victimId}/groups`, { groupIds: [groupId] }));
    refused(await pat.put(`${base}/users/${victimId}/permissions`, { permissionIds: [permissionId] }));
    refused(await pat.post(`${base}/groups`, { name: 'thieves' }));
    refused(await pat.put(`${base}/groups/${groupId}`, { name: 'thieves', permissionIds: [permissionId] }));
    refused(await pat.delete(`${base}/groups/${groupId}`));
    refused(await pat.post(`${base}/permissions`, { codename: 'steal.it' }));
    refused(await pat.put(`${base}/permissions/${permissionId}`, { codename: 'steal.it' }));
    refused(await pat.delete(`${base}/permissions/${permissionId}`));

    expect((await owner.get(`${base}/users/${victimId}/groups`)).body.data).toEqual([]);
    expect((await owner.get(`${base}/users/${victimId}/permissions`)).body.data).toEqual([]);
    const groups = (await owner.get(`${base}/groups`)).body.data as { id: number; name: string }[];
    expect(groups.map((g) => g.name)).toEqual(['raisers']);
    const permissions = (await owner.get(`${base}/permissions`)).body.data as { codename: string }[];
    expect(permissions.map((p) => p.codename)).toContain('raise.it');
    expect(permissions.map((p) => p.codename)).not.toContain('steal.it');

    for (const path of [
      '/groups',
      '/permissions',
      `/users/${victimId}/groups`,
      `/users/${victimId}/effective`,
    ]) {
      expect((await pat.get(`${base}${path}`)).status).toBe(200);
    }
  });
});
