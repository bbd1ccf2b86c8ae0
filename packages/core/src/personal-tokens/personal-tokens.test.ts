import { createHash } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { dbOf } from '../../../../testing/mfa.js';
import { logCapture } from '../../../../testing/smtp.js';
import { defineRouter } from '../kernel/router.js';
import { describeEachDatabase, startTestApp, type LoggedInClient, type TestApp } from '../testing/index.js';
import type { PersonalTokenTables } from './tables.js';

/** A project router whose routes need permissions, staff and superuser status (SPEC "Route protection rules"). */
function notesRouter() {
  const notes = defineRouter({ prefix: '/notes', name: 'notes', permissions: ['notes.read'] });
  notes.get('/', {}, (ctx) => ({ user: ctx.user.username }));
  notes.post('/:id/archive', { permissions: ['notes.write'], logAs: 'archived {id}' }, () => ({ ok: true }));
  notes.get('/staff', { requireStaff: true }, () => ({ ok: true }));
  return notes;
}

function tokenTable(app: TestApp) {
  return (app.app.runtime.tables['personal-tokens'] as unknown as PersonalTokenTables).personalToken;
}

async function tokenRow(app: TestApp, id: string) {
  const table = tokenTable(app);
  const [row] = await dbOf(app).orm.select().from(table).where(eq(table.id, id));
  return row;
}

async function setTokenRow(app: TestApp, id: string, values: { expiresAt?: Date; lastUsedAt?: Date }) {
  const table = tokenTable(app);
  await dbOf(app).orm.update(table).set(values).where(eq(table.id, id));
}

/** Polls an asynchronous condition (a write made after the response). */
async function until(check: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 250; i++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error('timed out waiting');
}

/** SPEC-2 "Personal access tokens", over real HTTP. */
describeEachDatabase('Personal access tokens', (database) => {
  let app: TestApp;
  let admin: LoggedInClient;
  let alice: LoggedInClient;
  const permissionIds: Record<string, number> = {};

  async function grant(userId: string, codenames: string[]) {
    const ids = codenames.map((c) => permissionIds[c]);
    const res = await admin.put(`/api/admin/permissions/users/${userId}/permissions`, { permissionIds: ids });
    expect(res.status).toBe(200);
  }

  async function createToken(client: LoggedInClient, body: Record<string, unknown>) {
    const res = await client.post('/api/auth/tokens', { name: 'ci', ...body });
    expect(res.status).toBe(201);
    return res.body.data as { id: string; token: string } & Record<string, unknown>;
  }

  beforeAll(async () => {
    app = await startTestApp({
      database,
      routers: [notesRouter()],
      settings: {
        personal_tokens_enabled: true,
        activity_log_enabled: true,
        activity_log_exclude_paths: '',
        events_broadcast_enabled: true,
      },
    });
    admin = await app.loginAs(await app.createUser({ username: 'pat_admin', isSuperuser: true }));
    for (const codename of ['notes.read', 'notes.write']) {
      const res = await admin.post('/api/admin/permissions/permissions', { codename });
      permissionIds[codename] = res.body.data.id;
    }
    alice = await app.loginAs(await app.createUser({ username: 'pat_alice', isStaff: true }));
    await grant(alice.user.id, ['notes.read', 'notes.write']);
  });
  afterAll(() => app.close());

  it('shows the token once and stores only its SHA-256 digest', async () => {
    const created = await createToken(alice, { name: ' deploy bot ' });
    expect(created.token).toMatch(/^svc_pat_[A-Za-z0-9_-]{43}$/);
    expect(created).toMatchObject({
      name: 'deploy bot',
      prefix: created.token.slice(0, 12),
      permissions: [],
      staff: false,
      superuser: false,
    });
    const days =
      (Date.parse(created.expiresAt as string) - Date.parse(created.createdAt as string)) / 86_400_000;
    expect(days).toBe(90);
    const row = await tokenRow(app, created.id);
    expect(row!.digest).toBe(createHash('sha256').update(created.token).digest('hex'));
    expect(Object.values(row!).some((value) => String(value).includes(created.token.slice(12)))).toBe(false);
    const list = await alice.get('/api/auth/tokens');
    expect(list.status).toBe(200);
    const listed = list.body.data.find((t: { id: string }) => t.id === created.id);
    expect(listed).toMatchObject({ prefix: created.prefix, lastUsedAt: null });
    expect(listed).not.toHaveProperty('token');
    expect(list.text).not.toContain(created.token);
  });

  it('acts as the owner with the owner’s permissions ∩ the token’s', async () => {
    const { token } = await createToken(alice, { permissions: ['notes.read'] });
    const pat = app.as(token);
    const read = await pat.get('/api/notes/');
    expect(read.status).toBe(200);
    expect(read.body.data).toEqual({ user: 'pat_alice' });
    const write = await pat.post('/api/notes/1/archive');
    expect(write.status).toBe(403);
    expect(write.body.detail[0]).toMatchObject({
      code: 'access.permissions_missing',
      params: { permissions: ['notes.write'] },
    });
    const me = await pat.get('/api/auth/user');
    expect(me.body.data).toMatchObject({ id: alice.user.id, permissions: ['notes.read'], isStaff: false });
    expect((await pat.get('/api/notes/staff')).status).toBe(403);
    // Without `null` the default of 90 days applies; null is a token without expiry, a superuser's only
    // (SPEC-3 §7 rule 1; personal-tokens/hardening.test.ts has the refusal).
    expect((await createToken(admin, { expiresInDays: null })).expiresAt).toBeNull();
  });

  it('refuses what the caller does not hold with 422 access.permission_not_held', async () => {
    const bob = await app.loginAs(await app.createUser({ username: 'pat_bob' }));
    await grant(bob.user.id, ['notes.read']);
    const res = await bob.post('/api/auth/tokens', {
      name: 'too much',
      permissions: ['notes.read', 'notes.write', 'unknown.perm'],
      staff: true,
      superuser: true,
    });
    expect(res.status).toBe(422);
    expect(res.body.detail[0]).toMatchObject({
      code: 'access.permission_not_held',
      loc: ['body', 'permissions'],
      params: { permissions: ['notes.write', 'unknown.perm', 'staff', 'superuser'] },
    });
    for (const body of [
      { name: '' },
      { name: 'x'.repeat(101) },
      { name: 'n', expiresInDays: 0 },
      { name: 'n', expiresInDays: 3651 },
    ]) {
      const bad = await bob.post('/api/auth/tokens', body);
      expect(bad.status).toBe(422);
    }
    const list = await bob.get('/api/auth/tokens');
    expect(list.body.data).toEqual([]);
  });

  it('refuses a token on the credential routes with 403 access.token_not_allowed: no token mints tokens or changes the password', async () => {
    const { token } = await createToken(alice, { permissions: ['notes.read'], staff: true });
    const pat = app.as(token);
    const refused = [
      await pat.post('/api/auth/tokens', { name: 'child' }),
      await pat.get('/api/auth/tokens'),
      await pat.delete(`/api/auth/tokens/00000000-0000-4000-8000-000000000000`),
      await pat.post('/api/auth/user/password', {
        currentPassword: alice.user.password,
        newPassword: 'a-new-password-123',
      }),
      await pat.patch('/api/auth/user', {
        email: 'stolen@example.com',
        currentPassword: alice.user.password,
      }),
      await pat.post('/api/auth/logout'),
      await pat.post('/api/auth/refresh-token', { refresh_token: alice.refreshToken }),
      await pat.get('/api/mfa/status'),
      await pat.post('/api/mfa/totp/setup'),
      await pat.delete(`/api/admin/user/${alice.user.id}/mfa`),
      // docs/sessions-and-tokens.md: no WebSocket ticket for a token.
      await pat.post('/api/core/events/ticket'),
    ];
    for (const res of refused) {
      expect(res.status).toBe(403);
      expect(res.body.detail[0]).toMatchObject({
        code: 'access.token_not_allowed',
        loc: ['header', 'Authorization'],
      });
    }
    // Nothing changed: the password still logs in, the email is the old one, no token was minted.
    const again = await app.loginAs(alice.user);
    const me = await again.get('/api/auth/user');
    expect(me.body.data.email).toBe(alice.user.email);
    expect((await alice.get('/api/auth/tokens')).body.data).not.toContainEqual(
      expect.objectContaining({ name: 'child' }),
    );
  });

  it('lets only a staff caller set staff, also when the caller is a superuser', async () => {
    const res = await admin.post('/api/auth/tokens', { name: 'staff', staff: true });
    expect(res.status).toBe(422);
    expect(res.body.detail[0]).toMatchObject({ params: { permissions: ['staff'] } });
  });

  it('refuses a password or email change through the admin route with a superuser token', async () => {
    const { token } = await createToken(admin, { superuser: true });
    const pat = app.as(token);
    for (const body of [{ password: 'a-new-password-123' }, { email: 'new@example.com' }]) {
      const res = await pat.patch(`/api/admin/user/${admin.user.id}`, body);
      expect(res.status).toBe(403);
      expect(res.body.detail[0]).toMatchObject({ code: 'access.token_not_allowed' });
    }
    expect((await app.loginAs(admin.user)).accessToken).toBeTruthy();
    const rename = await pat.patch(`/api/admin/user/${alice.user.id}`, { firstName: 'Alice' });
    expect(rename.status).toBe(200);
  });

  it('demotes the token with its owner, on the next request', async () => {
    const root = await app.loginAs(
      await app.createUser({ username: 'pat_root', isSuperuser: true, isStaff: true }),
    );
    await grant(root.user.id, ['notes.read']);
    const { token } = await createToken(root, { superuser: true, staff: true, permissions: ['notes.read'] });
    const pat = app.as(token);
    expect((await pat.get('/api/admin/user')).status).toBe(200);
    const demote = await admin.patch(`/api/admin/user/${root.user.id}`, {
      isSuperuser: false,
      isStaff: false,
    });
    expect(demote.status).toBe(200);
    const after = await pat.get('/api/admin/user');
    expect(after.status).toBe(403);
    expect(after.body.detail[0]).toMatchObject({ code: 'access.superuser_required' });
    expect((await pat.get('/api/notes/staff')).status).toBe(403);
    expect((await pat.get('/api/notes/')).status).toBe(200);
    await grant(root.user.id, []);
    const lost = await pat.get('/api/notes/');
    expect(lost.status).toBe(403);
    expect(lost.body.detail[0]).toMatchObject({ code: 'access.permissions_missing' });
  });

  it('answers 401 auth.token_invalid for a deactivated or deleted owner, an expired, deleted or unknown token', async () => {
    const carol = await app.loginAs(await app.createUser({ username: 'pat_carol' }));
    const { token } = await createToken(carol, {});
    const pat = app.as(token);
    expect((await pat.get('/api/auth/user')).status).toBe(200);
    const expectInvalid = async () => {
      const res = await pat.get('/api/auth/user');
      expect(res.status).toBe(401);
      expect(res.body.detail[0]).toMatchObject({ code: 'auth.token_invalid' });
      expect(res.headers.get('www-authenticate')).toBe('Bearer');
    };
    const expiring = await createToken(carol, { expiresInDays: 1 });
    await setTokenRow(app, expiring.id, { expiresAt: new Date(Date.now() - 1000) });
    const expired = await app.as(expiring.token).get('/api/auth/user');
    expect(expired.status).toBe(401);
    expect(expired.body.detail[0]).toMatchObject({ code: 'auth.token_invalid' });

    const deleted = await createToken(carol, {});
    expect((await carol.delete(`/api/auth/tokens/${deleted.id}`)).status).toBe(204);
    expect((await app.as(deleted.token).get('/api/auth/user')).status).toBe(401);
    const again = await carol.delete(`/api/auth/tokens/${deleted.id}`);
    expect(again.status).toBe(404);
    expect(again.body.detail[0]).toMatchObject({ code: 'access.token_not_found', loc: ['path', 'token_id'] });
    expect((await carol.delete('/api/auth/tokens/not-a-uuid')).status).toBe(404);
    const unknown = await app.as(`svc_pat_${'A'.repeat(43)}`).get('/api/auth/user');
    expect(unknown.status).toBe(401);
    expect(unknown.body.detail[0]).toMatchObject({ code: 'auth.token_invalid' });

    // Deactivation ends the owner's logins too (SPEC-2 "Sessions"): the token checks come before it.
    await admin.patch(`/api/admin/user/${carol.user.id}`, { isActive: false });
    await expectInvalid();
    await admin.patch(`/api/admin/user/${carol.user.id}`, { isActive: true });
    expect((await pat.get('/api/auth/user')).status).toBe(200);
    expect((await admin.delete(`/api/admin/user/${carol.user.id}`)).status).toBe(204);
    await expectInvalid();
  });

  it('keeps working after a password change', async () => {
    const dave = await app.loginAs(await app.createUser({ username: 'pat_dave' }));
    const { token } = await createToken(dave, {});
    const change = await dave.post('/api/auth/user/password', {
      currentPassword: dave.user.password,
      newPassword: 'another-long-password',
    });
    expect(change.status).toBe(204);
    expect((await app.loginAs({ ...dave.user, password: 'another-long-password' })).accessToken).toBeTruthy();
    expect((await app.as(token).get('/api/auth/user')).status).toBe(200);
  });

  it('writes lastUsedAt at most once a minute', async () => {
    const created = await createToken(alice, {});
    const pat = app.as(created.token);
    expect((await pat.get('/api/auth/user')).status).toBe(200);
    await until(async () => (await tokenRow(app, created.id))!.lastUsedAt !== null);
    const recent = new Date(Date.now() - 30_000);
    await setTokenRow(app, created.id, { lastUsedAt: recent });
    for (let i = 0; i < 3; i++) expect((await pat.get('/api/auth/user')).status).toBe(200);
    // A write would land after the response: the next read by the same token's request has given it time.
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect((await tokenRow(app, created.id))!.lastUsedAt!.getTime()).toBe(recent.getTime());
    const old = new Date(Date.now() - 61_000);
    await setTokenRow(app, created.id, { lastUsedAt: old });
    expect((await pat.get('/api/auth/user')).status).toBe(200);
    await until(async () => (await tokenRow(app, created.id))!.lastUsedAt!.getTime() > old.getTime());
    const listed = (await alice.get('/api/auth/tokens')).body.data.find(
      (t: { id: string }) => t.id === created.id,
    );
    expect(Date.parse(listed.lastUsedAt)).toBeGreaterThan(old.getTime());
  });

  it('records the owner in the activity log', async () => {
    const { token } = await createToken(alice, { permissions: ['notes.read', 'notes.write'] });
    expect((await app.as(token).post('/api/notes/pat-activity/archive')).status).toBe(200);
    const res = await admin.get('/api/admin/audit/logs?pathContains=pat-activity&excludePaths=');
    expect(res.body.data.items).toEqual([
      expect.objectContaining({
        userId: alice.user.id,
        username: 'pat_alice',
        description: 'archived pat-activity',
      }),
    ]);
  });

  it('lets a superuser list and delete a user’s tokens', async () => {
    const erin = await app.loginAs(await app.createUser({ username: 'pat_erin' }));
    const created = await createToken(erin, { name: 'erin ci' });
    const list = await admin.get(`/api/admin/user/${erin.user.id}/tokens`);
    expect(list.status).toBe(200);
    expect(list.body.data).toEqual([expect.objectContaining({ id: created.id, name: 'erin ci' })]);
    expect(list.text).not.toContain(created.token);
    expect((await erin.get(`/api/admin/user/${erin.user.id}/tokens`)).status).toBe(403);
    // Another user's token is not found under a different user.
    const wrongOwner = await admin.delete(`/api/admin/user/${alice.user.id}/tokens/${created.id}`);
    expect(wrongOwner.status).toBe(404);
    expect(wrongOwner.body.detail[0]).toMatchObject({ code: 'access.token_not_found' });
    expect((await erin.delete(`/api/auth/tokens/${created.id}`)).status).toBe(204);
    const gone = await admin.delete(`/api/admin/user/${erin.user.id}/tokens/${created.id}`);
    expect(gone.status).toBe(404);
    const again = await createToken(erin, {});
    expect((await admin.delete(`/api/admin/user/${erin.user.id}/tokens/${again.id}`)).status).toBe(204);
    expect((await app.as(again.token).get('/api/auth/user')).status).toBe(401);
    const unknown = await admin.get('/api/admin/user/00000000-0000-4000-8000-000000000000/tokens');
    expect(unknown.status).toBe(404);
    expect(unknown.body.detail[0]).toMatchObject({ code: 'user.not_found', loc: ['path', 'user_id'] });
  });

  it('documents the routes with their request and response schemas in /openapi-core.json', async () => {
    const doc = (await app.get('/openapi-core.json')).body;
    const create = doc.paths['/api/auth/tokens'].post;
    expect(create.requestBody).toBeDefined();
    expect(create.responses['201']).toBeDefined();
    expect(doc.paths['/api/auth/tokens'].get.responses['200']).toBeDefined();
    expect(doc.paths['/api/auth/tokens/{token_id}'].delete).toBeDefined();
    expect(doc.paths['/api/admin/user/{user_id}/tokens'].get).toBeDefined();
    expect(doc.paths['/api/admin/user/{user_id}/tokens/{token_id}'].delete).toBeDefined();
  });
});

/** SPEC "Limits": an invalid token counts on the address's `auth_rate_limit` window like a failed login. */
describeEachDatabase('Personal access tokens: guessing', (database) => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({
      database,
      settings: { personal_tokens_enabled: true, auth_rate_limit: 4, auth_rate_window_seconds: 60 },
    });
  });
  afterAll(() => app.close());

  it('answers 429 after auth_rate_limit bad tokens from one address, then refuses valid tokens and logins too', async () => {
    const user = await app.createUser({ username: 'pat_guess' });
    const owner = await app.loginAs(user); // one login: 1 of 4 on the address's window
    const { token } = (await owner.post('/api/auth/tokens', { name: 'valid' })).body.data;
    expect((await app.as(token).get('/api/auth/user')).status).toBe(200); // a valid token is not counted
    for (const guess of [`svc_pat_${'B'.repeat(43)}`, 'svc_pat_short', `svc_pat_${'C'.repeat(43)}`]) {
      const res = await app.as(guess).get('/api/auth/user');
      expect(res.status).toBe(401);
    }
    const limited = await app.as(`svc_pat_${'D'.repeat(43)}`).get('/api/auth/user');
    expect(limited.status).toBe(429);
    expect(limited.body.detail[0]).toMatchObject({ code: 'auth.rate_limited' });
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    // A right guess now cannot be told from a wrong one, and the window is the login's.
    expect((await app.as(token).get('/api/auth/user')).status).toBe(429);
    const login = await app.post('/api/auth/token', undefined, {
      form: { username: user.username, password: user.password },
    });
    expect(login.status).toBe(429);
    // The owner's own access token is not a personal token: unaffected.
    expect((await owner.get('/api/auth/user')).status).toBe(200);
  });
});

/** `personal_tokens_enabled` false (the default): no routes, and a `svc_pat_` bearer is no credential. */
describeEachDatabase('Personal access tokens switched off', (database) => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ database });
  });
  afterAll(() => app.close());

  it('mounts no token route and refuses svc_pat_ bearers with 401', async () => {
    const owner = await app.loginAs(await app.createUser({ username: 'pat_off' }));
    expect((await owner.post('/api/auth/tokens', { name: 'x' })).status).toBe(404);
    expect((await owner.get('/api/auth/tokens')).status).toBe(404);
    const res = await app.as(`svc_pat_${'E'.repeat(43)}`).get('/api/auth/user');
    expect(res.status).toBe(401);
    expect(res.body.detail[0]).toMatchObject({ code: 'auth.token_invalid' });
  });
});

/** SPEC-2 "Personal access tokens": one indexed lookup per request, none for a malformed token. */
describeEachDatabase('Personal access tokens: statements per request', (database) => {
  let app: TestApp;
  const { stream, lines } = logCapture();
  beforeAll(async () => {
    app = await startTestApp({
      database,
      logStream: stream,
      settings: { personal_tokens_enabled: true, log_format: 'json', log_level: 'DEBUG', dbdebug: true },
    });
  });
  afterAll(() => app.close());

  /** The SQL statements the app ran for the request with this id (dbdebug logs them with the request id). */
  async function statementsOf(requestId: string, token: string): Promise<string[]> {
    const res = await app.as(token).get('/api/auth/user', { headers: { 'X-Request-ID': requestId } });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(res.headers.get('x-request-id')).toBe(requestId);
    return lines
      .map((line) => JSON.parse(line) as { message: string; request_id?: string })
      .filter((record) => record.request_id === requestId && record.message.startsWith('SQL '))
      .map((record) => record.message);
  }

  it('answers an unknown token after one query by digest, a malformed one after none', async () => {
    const unknown = await statementsOf('pat-unknown', `svc_pat_${'F'.repeat(43)}`);
    expect(unknown).toHaveLength(1);
    expect(unknown[0]).toMatch(/digest/);
    expect(await statementsOf('pat-malformed', 'svc_pat_not-a-token')).toEqual([]);
  });

  it('authenticates a valid token, with its owner and permissions, in one query', async () => {
    const owner = await app.loginAs(await app.createUser({ username: 'pat_count' }));
    const { token } = (await owner.post('/api/auth/tokens', { name: 'count' })).body.data;
    const first = await statementsOf('pat-first', token);
    // The lookup, and the lastUsedAt write of the first use (not awaited by the request).
    expect(first.filter((statement) => /^SQL select/i.test(statement))).toHaveLength(1);
    expect(first.filter((statement) => /^SQL update/i.test(statement))).toHaveLength(1);
    expect(await statementsOf('pat-second', token)).toHaveLength(1);
  });
});
