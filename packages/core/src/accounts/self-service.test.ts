import { eq } from 'drizzle-orm';
import {
  closeCodeWithin,
  eventsUrl,
  openSocket,
  ticketOf,
  type TestSocket,
} from '../../../../testing/events.js';
import { configRow, dbOf, enrolTotp, failedLoginCount, mfaToken } from '../../../../testing/mfa.js';
import { coreModules } from '../app/modules.js';
import type { ActivityLogTable } from '../audit/tables.js';
import { defineModule } from '../kernel/module.js';
import { describeEachDatabase, startTestApp, type LoggedInClient, type TestApp } from '../testing/index.js';
import { ACCOUNT_EXPORT_KEYS } from './constants.js';

/** Every object key of a JSON value, at any depth. */
function keysOf(value: unknown): string[] {
  if (Array.isArray(value)) return value.flatMap(keysOf);
  if (value && typeof value === 'object') {
    return Object.entries(value).flatMap(([key, inner]) => [key, ...keysOf(inner)]);
  }
  return [];
}

/** A project module with its own part of the export. */
const notesModule = defineModule({
  name: 'notes',
  setup: () => ({ accountExport: { notes: async (userId: string) => [{ authorId: userId, text: 'hi' }] } }),
});

/** SPEC-2 "Administration and self-service": `GET /auth/user/export` and `DELETE /auth/user`. */
describeEachDatabase('Account export and self-delete', (database) => {
  let app: TestApp;
  let root: LoggedInClient;
  const sockets: TestSocket[] = [];
  const userRow = async (id: string) => {
    const { orm, core } = dbOf(app);
    return (await orm.select().from(core.user).where(eq(core.user.id, id)))[0];
  };

  beforeAll(async () => {
    app = await startTestApp({
      database,
      modules: [notesModule],
      settings: {
        self_delete_enabled: true,
        mfa_enabled: true,
        activity_log_enabled: true,
        events_broadcast_enabled: true,
        login_max_attempts: 3,
        personal_tokens_enabled: true,
      },
    });
    // The only superuser of this app (the last-superuser rule below).
    root = await app.loginAs(await app.createUser({ username: 'export_root', isSuperuser: true }));
  });
  /** Logs in a user with TOTP active through the second step, with a backup code. */
  async function loginWithBackupCode(user: { username: string; password: string }, code: string) {
    const verified = await app.post('/api/mfa/verify', { mfa_token: await mfaToken(app, user), code });
    expect(verified.status).toBe(200);
    return app.as(verified.body.access_token as string);
  }
  afterEach(async () => {
    await Promise.all(sockets.splice(0).map((socket) => socket.close()));
  });
  afterAll(() => app.close());

  it('exports everything stored about the caller as an attachment, without a secret', async () => {
    const user = await app.createUser({ username: 'exporter', email: 'exporter@example.com' });
    const perm = await root.post('/api/admin/permissions/permissions', { codename: 'notes.read' });
    const direct = await root.post('/api/admin/permissions/permissions', { codename: 'notes.write' });
    const group = await root.post('/api/admin/permissions/groups', {
      name: 'readers',
      permissionIds: [perm.body.data.id],
    });
    await root.put(`/api/admin/permissions/users/${user.id}/groups`, { groupIds: [group.body.data.id] });
    await root.put(`/api/admin/permissions/users/${user.id}/permissions`, {
      permissionIds: [direct.body.data.id],
    });
    const { secret, backupCodes } = await enrolTotp(app, user);
    const exporter = await loginWithBackupCode(user, backupCodes[0]!);
    expect((await exporter.put('/api/auth/user/settings/appearance/theme', { value: 'dark' })).status).toBe(
      200,
    );
    const pat = await exporter.post('/api/auth/tokens', { name: 'backup script' });
    expect(pat.status).toBe(201);
    expect((await exporter.patch('/api/auth/user', { firstName: 'Ex' })).status).toBe(200);

    const res = await exporter.get('/api/auth/user/export');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-disposition')).toBe(
      `attachment; filename="svc-account-exporter.json"; filename*=UTF-8''svc-account-exporter.json`,
    );
    expect(res.headers.get('cache-control')).toBe('no-store');
    const body = res.body;
    // Not enveloped: the documented keys in their order, then the project module's.
    expect(Object.keys(body)).toEqual([...ACCOUNT_EXPORT_KEYS, 'notes']);
    const profile = await exporter.get('/api/auth/user');
    expect(body.user).toEqual(profile.body.data);
    expect(body.user).toMatchObject({ username: 'exporter', firstName: 'Ex' });
    expect(body.user.permissions).toEqual(['notes.read', 'notes.write']);
    expect(body.settings.appearance.theme).toBe('dark');
    expect(body.groups.map((g: { name: string }) => g.name)).toEqual(['readers']);
    expect(body.permissions.direct.map((p: { codename: string }) => p.codename)).toEqual(['notes.write']);
    expect(body.permissions.effective).toEqual(['notes.read', 'notes.write']);
    expect(body.mfa).toEqual({ enabled: true, method: 'totp' });
    for (const key of ['sessions', 'personalTokens', 'passkeys']) expect(Array.isArray(body[key])).toBe(true);
    expect(body.personalTokens).toEqual([expect.objectContaining({ name: 'backup script' })]);
    expect(body.notes).toEqual([{ authorId: user.id, text: 'hi' }]);
    // The caller's own entries only, newest first.
    expect(body.activity.length).toBeGreaterThanOrEqual(3);
    expect(body.activity.every((e: { userId: string }) => e.userId === user.id)).toBe(true);
    expect(body.activity[0]).toMatchObject({ method: 'PATCH', path: '/api/auth/user' });

    // No secret: not the password hash, the TOTP secret, a backup code or a digest, under any name.
    const text = res.text;
    const row = await userRow(user.id);
    const config = await configRow(app, user.id);
    for (const secretValue of [row!.passwordHash, secret, config!.totpSecret!, ...backupCodes]) {
      expect(text).not.toContain(secretValue);
    }
    expect(text).not.toContain(user.password);
    expect(text).not.toContain(pat.body.data.token);
    // `hasPassword` (SPEC-3 section 1) is a flag, the one key of these words that holds no secret.
    expect(
      keysOf(body).filter((key) => key !== 'hasPassword' && /hash|secret|digest|backup|password/i.test(key)),
    ).toEqual([]);
  });

  it("exports the caller's newest 1,000 activity entries, newest first", async () => {
    const user = await app.createUser({ username: 'busy_user' });
    const other = await app.createUser({ username: 'other_user' });
    const { orm } = dbOf(app);
    const table = app.app.runtime.tables.audit!.activityLog as ActivityLogTable;
    const start = Date.UTC(2025, 0, 1);
    const entry = (userId: string, username: string, i: number) => ({
      timestamp: new Date(start + i * 1000),
      userId,
      username,
      method: 'POST',
      path: `/api/notes/${i}`,
      statusCode: 201,
      durationMs: 1,
      description: null,
    });
    const rows = Array.from({ length: 1005 }, (_, i) => entry(user.id, user.username, i));
    for (let i = 0; i < rows.length; i += 250) await orm.insert(table).values(rows.slice(i, i + 250));
    await orm.insert(table).values(entry(other.id, other.username, 5000));
    const res = await (await app.loginAs(user)).get('/api/auth/user/export');
    expect(res.status).toBe(200);
    const activity = res.body.activity as { path: string; userId: string }[];
    expect(activity).toHaveLength(1000);
    expect(activity[0]!.path).toBe('/api/notes/1004');
    expect(activity[999]!.path).toBe('/api/notes/5');
    expect(activity.every((e) => e.userId === user.id)).toBe(true);
  });

  it('refuses a wrong password with 400 auth.password_incorrect, counted on the login counter', async () => {
    const user = await app.createUser({ username: 'wrong_password' });
    const client = await app.loginAs(user);
    const res = await client.delete('/api/auth/user', { body: { password: 'not-the-password' } });
    expect(res.status).toBe(400);
    expect(res.body.detail[0]).toMatchObject({ code: 'auth.password_incorrect', loc: ['body', 'password'] });
    expect(await failedLoginCount(app, user.id)).toBe(1);
    // Without a password at all: the uniform validation error.
    const missing = await client.delete('/api/auth/user', { body: {} });
    expect(missing.status).toBe(422);
    expect(await userRow(user.id)).toBeDefined();
  });

  it('with MFA active: requires a code, counts a wrong one, deletes with a valid one', async () => {
    const user = await app.createUser({ username: 'mfa_deleter' });
    const { backupCodes } = await enrolTotp(app, user);
    const client = await loginWithBackupCode(user, backupCodes[0]!);
    const password = user.password;

    const none = await client.delete('/api/auth/user', { body: { password } });
    expect(none.status).toBe(400);
    expect(none.body.detail[0]).toMatchObject({ code: 'auth.mfa_code_required', loc: ['body', 'code'] });
    expect(await failedLoginCount(app, user.id)).toBe(0);

    const wrong = await client.delete('/api/auth/user', { body: { password, code: '000000' } });
    expect(wrong.status).toBe(400);
    expect(wrong.body.detail[0]).toMatchObject({ code: 'auth.mfa_code_incorrect', loc: ['body', 'code'] });
    expect(await failedLoginCount(app, user.id)).toBe(1);

    // A backup code used a moment ago is refused, but as a replay of a valid code it is not a guess: not counted.
    const used = await client.delete('/api/auth/user', { body: { password, code: backupCodes[0] } });
    expect(used.body.detail[0]).toMatchObject({ code: 'auth.mfa_code_incorrect' });
    expect(await failedLoginCount(app, user.id)).toBe(1);

    const ok = await client.delete('/api/auth/user', { body: { password, code: backupCodes[1] } });
    expect(ok.status).toBe(204);
    expect(await userRow(user.id)).toBeUndefined();
  });

  it('locks the account after login_max_attempts wrong answers: 429 auth.too_many_attempts', async () => {
    const user = await app.createUser({ username: 'lock_me' });
    const client = await app.loginAs(user);
    for (let i = 0; i < 3; i++) {
      const res = await client.delete('/api/auth/user', { body: { password: `wrong-${i}` } });
      expect(res.status).toBe(400);
    }
    const locked = await client.delete('/api/auth/user', { body: { password: user.password } });
    expect(locked.status).toBe(429);
    expect(locked.body.detail[0]).toMatchObject({ code: 'auth.too_many_attempts' });
    expect(locked.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(await userRow(user.id)).toBeDefined();
  });

  it('deletes the account as the admin route does: logins end, the socket closes 4401, activity records it', async () => {
    const user = await app.createUser({ username: 'leaving_user' });
    const client = await app.loginAs(user);
    const socket = await openSocket(eventsUrl(app.url, { ticket: await ticketOf(client) }));
    sockets.push(socket);
    await socket.waitFor((frame) => frame.type === 'snapshot');

    const res = await client.delete('/api/auth/user', { body: { password: user.password } });
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expect(await userRow(user.id)).toBeUndefined();
    expect(await closeCodeWithin(socket, 3_000)).toBe(4401);
    expect((await client.get('/api/auth/user')).status).toBe(401);
    const refresh = await app.post('/api/auth/refresh-token', { refresh_token: client.refreshToken });
    expect(refresh.status).toBe(401);
    const audit = await root.get(`/api/admin/audit/logs?userId=${user.id}`);
    expect(audit.body.data.items).toEqual(
      expect.arrayContaining([expect.objectContaining({ method: 'DELETE', path: '/api/auth/user' })]),
    );
  });

  it('refuses personal access tokens on both routes (403 access.token_not_allowed)', async () => {
    const user = await app.createUser({ username: 'token_owner' });
    const client = await app.loginAs(user);
    const created = await client.post('/api/auth/tokens', { name: 'ci' });
    expect(created.status).toBe(201);
    const pat = app.as(created.body.data.token as string);
    for (const res of [
      await pat.get('/api/auth/user/export'),
      await pat.delete('/api/auth/user', { body: { password: user.password } }),
    ]) {
      expect(res.status).toBe(403);
      expect(res.body.detail[0]).toMatchObject({ code: 'access.token_not_allowed' });
    }
    expect(await userRow(user.id)).toBeDefined();
  });

  it('refuses the only active superuser with 400 user.last_superuser, before using up a backup code', async () => {
    const { backupCodes } = await enrolTotp(app, root.user);
    const client = await loginWithBackupCode(root.user, backupCodes[0]!);
    const body = { password: root.user.password, code: backupCodes[1] };
    const res = await client.delete('/api/auth/user', { body });
    expect(res.status).toBe(400);
    expect(res.body.detail[0]).toMatchObject({ code: 'user.last_superuser', loc: ['body'] });
    expect(await userRow(root.user.id)).toBeDefined();
    // The backup code still works: the refusal came before the code was checked.
    const step = await app.post('/api/mfa/verify', {
      mfa_token: await mfaToken(app, root.user),
      code: backupCodes[1],
    });
    expect(step.status).toBe(200);
  });

  it('refuses to start when two modules export the same key', async () => {
    const twice = defineModule({
      name: 'twice',
      setup: () => ({ accountExport: { user: async () => ({}) } }),
    });
    await expect(startTestApp({ database, modules: [twice] })).rejects.toThrow(
      "modules 'auth' and 'twice' both export the account key 'user'",
    );
  });
});

describeEachDatabase('Account export and self-delete, defaults', (database) => {
  let app: TestApp;
  beforeAll(async () => {
    // Without the audit module: its key is still there, empty.
    app = await startTestApp({ database, coreModules: coreModules.filter((m) => m.name !== 'audit') });
  });
  afterAll(() => app.close());

  it('exports a key no module provides as [] and refuses self-delete unless self_delete_enabled', async () => {
    const user = await app.createUser({ username: 'default_user' });
    const client = await app.loginAs(user);
    const res = await client.get('/api/auth/user/export');
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual([...ACCOUNT_EXPORT_KEYS]);
    expect(res.body.activity).toEqual([]);
    const del = await client.delete('/api/auth/user', { body: { password: user.password } });
    expect(del.status).toBe(403);
    expect(del.body.detail[0]).toMatchObject({ code: 'auth.self_delete_disabled' });
    expect(await failedLoginCount(app, user.id)).toBe(0);
  });

  it('documents both routes in /docs/core with their request and response schemas', async () => {
    const { paths } = (await app.get('/openapi-core.json')).body;
    const exported = paths['/api/auth/user/export'].get;
    const schema = exported.responses['200'].content['application/json'].schema;
    expect(Object.keys(schema.properties)).toEqual([...ACCOUNT_EXPORT_KEYS]);
    const deletion = paths['/api/auth/user'].delete;
    const body = deletion.requestBody.content['application/json'].schema;
    expect(Object.keys(body.properties)).toEqual(['password', 'code']);
    expect(body.required).toEqual(['password']);
    expect(Object.keys(deletion.responses)).toContain('204');
  });
});
