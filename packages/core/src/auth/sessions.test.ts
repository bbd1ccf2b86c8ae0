import { randomUUID } from 'node:crypto';
import { eq } from 'drizzle-orm';
import jwt from 'jsonwebtoken';
import { coreModules } from '../app/modules.js';
import { createEventsModule } from '../events/index.js';
import type { CoreTables } from '../kernel/db/tables.js';
import { createSessionStore } from './session-store.js';
import type { AuthTables } from './tables.js';
import { describeEachDatabase, startTestApp, type LoggedInClient, type TestApp } from '../testing/index.js';
import { eventsUrl, openSocket, ticketOf, type TestSocket } from '../../../../testing/events.js';

const refresh = (app: TestApp, token: string) =>
  app.post('/api/auth/refresh-token', { refresh_token: token });

function expect401(res: { status: number; body: any; headers: Headers }, code: string) {
  expect(res.status).toBe(401);
  expect(res.body.detail[0]).toMatchObject({ code });
  expect(res.headers.get('www-authenticate')).toBe('Bearer');
}

const sessionsOf = async (client: LoggedInClient) => {
  const res = await client.get('/api/auth/sessions');
  expect(res.status).toBe(200);
  return res.body.data as {
    id: string;
    current: boolean;
    userAgent: string;
    ip: string;
    lastUsedAt: string;
  }[];
};

const sidOf = (accessToken: string) => (jwt.decode(accessToken) as { sid?: string }).sid;

// SPEC-2 "Sessions": one session per login; the routes, logout, and the immediate refusal of its tokens.
describeEachDatabase('Sessions', (database) => {
  let app: TestApp;
  let admin: LoggedInClient;
  const sockets: TestSocket[] = [];
  const login = async (username: string, userAgent: string) => {
    const res = await app.post('/api/auth/token', undefined, {
      form: { username, password: 'correct-horse-battery' },
      headers: { 'User-Agent': userAgent },
    });
    expect(res.status).toBe(200);
    const client = app.as(res.body.access_token) as LoggedInClient;
    return Object.assign(client, {
      accessToken: res.body.access_token,
      refreshToken: res.body.refresh_token,
    });
  };

  beforeAll(async () => {
    app = await startTestApp({
      database,
      settings: {
        events_broadcast_enabled: true,
        refresh_reuse_grace_seconds: 0,
        personal_tokens_enabled: true,
      },
      // A short re-check interval: the check that catches sessions ended outside the API.
      coreModules: coreModules.map((m) =>
        m.name === 'events' ? createEventsModule({ pingIntervalMs: 300 }) : m,
      ),
    });
    admin = await app.loginAs(await app.createUser({ username: 'root', isSuperuser: true }));
  });
  afterAll(async () => {
    for (const socket of sockets) await socket.close();
    await app.close();
  });

  it('records each login with its sanitised user agent and address; lists newest first with the current one', async () => {
    await app.createUser({ username: 'alice' });
    const phone = await login('alice', 'Phone\tApp/1.0');
    const laptop = await login('alice', 'x'.repeat(400));
    expect(sidOf(phone.accessToken)).toEqual(expect.any(String));
    // The refresh family is the session: a refresh keeps the id and moves lastUsedAt.
    const refreshed = await refresh(app, phone.refreshToken);
    expect(refreshed.status).toBe(200);
    expect(sidOf(refreshed.body.access_token)).toBe(sidOf(phone.accessToken));
    const listed = await sessionsOf(laptop);
    expect(listed.map((s) => s.id)).toEqual([sidOf(phone.accessToken), sidOf(laptop.accessToken)]);
    expect(listed.map((s) => s.current)).toEqual([false, true]);
    expect(listed[0]).toMatchObject({ userAgent: 'Phone App/1.0', ip: '127.0.0.1' });
    expect(Array.from(listed[1]!.userAgent)).toHaveLength(255);
    expect(listed[1]!.userAgent.endsWith('…')).toBe(true);
  });

  it('DELETE /auth/sessions/{id} refuses its access and refresh tokens at once; other sessions keep working', async () => {
    await app.createUser({ username: 'bob' });
    const one = await login('bob', 'one');
    const two = await login('bob', 'two');
    expect((await two.delete(`/api/auth/sessions/${sidOf(one.accessToken)}`)).status).toBe(204);
    expect401(await one.get('/api/auth/user'), 'auth.session_revoked');
    const refused = await refresh(app, one.refreshToken);
    expect(refused.status).toBe(401);
    expect(refused.body.detail[0]).toMatchObject({ code: 'auth.refresh_token_revoked' });
    expect((await two.get('/api/auth/user')).status).toBe(200);
    expect((await sessionsOf(two)).map((s) => s.id)).toEqual([sidOf(two.accessToken)]);
  });

  it("answers 404 auth.session_not_found for an unknown id, an ended one, or another user's", async () => {
    await app.createUser({ username: 'carol' });
    await app.createUser({ username: 'dave' });
    const carol = await login('carol', 'c');
    const dave = await login('dave', 'd');
    for (const id of [randomUUID(), 'not-a-uuid', sidOf(dave.accessToken)]) {
      const res = await carol.delete(`/api/auth/sessions/${id}`);
      expect(res.status).toBe(404);
      expect(res.body.detail[0]).toMatchObject({
        code: 'auth.session_not_found',
        loc: ['path', 'session_id'],
      });
    }
    expect((await dave.get('/api/auth/user')).status).toBe(200);
    expect((await carol.delete(`/api/auth/sessions/${sidOf(carol.accessToken)}`)).status).toBe(204);
    const again = await app.as(dave.accessToken).get('/api/auth/sessions');
    expect(again.body.data).toHaveLength(1);
  });

  it('POST /auth/sessions/revoke-others ends every session but the current one', async () => {
    await app.createUser({ username: 'erin' });
    const a = await login('erin', 'a');
    const b = await login('erin', 'b');
    const c = await login('erin', 'c');
    expect((await c.post('/api/auth/sessions/revoke-others')).status).toBe(204);
    expect401(await a.get('/api/auth/user'), 'auth.session_revoked');
    expect401(await b.get('/api/auth/user'), 'auth.session_revoked');
    expect((await sessionsOf(c)).map((s) => s.current)).toEqual([true]);
  });

  it('POST /auth/logout ends the access tokens of the session it ends; without a body, of every session', async () => {
    await app.createUser({ username: 'frank' });
    const a = await login('frank', 'a');
    const b = await login('frank', 'b');
    expect((await a.post('/api/auth/logout', { refresh_token: a.refreshToken })).status).toBe(204);
    expect401(await a.get('/api/auth/user'), 'auth.session_revoked');
    expect((await b.get('/api/auth/user')).status).toBe(200);
    const c = await login('frank', 'c');
    expect((await b.post('/api/auth/logout')).status).toBe(204);
    expect401(await b.get('/api/auth/user'), 'auth.session_revoked');
    expect401(await c.get('/api/auth/user'), 'auth.session_revoked');
  });

  it('access tokens without sid (issued before sessions) stay valid until they expire', async () => {
    const grace = await app.createUser({ username: 'grace' });
    const now = Math.floor(Date.now() / 1000);
    const legacy = jwt.sign(
      { sub: grace.id, type: 'access', iat: now, exp: now + 600 },
      app.app.runtime.settings.secret_key,
    );
    const g = await login('grace', 'g');
    expect((await g.post('/api/auth/logout')).status).toBe(204);
    expect((await app.as(legacy).get('/api/auth/user')).status).toBe(200);
  });

  it('a login from before sessions existed gets its session at its next refresh, and that session can be ended', async () => {
    await app.createUser({ username: 'nina' });
    const old = await login('nina', 'old');
    const rt = app.app.runtime;
    const session = (rt.tables.auth as AuthTables).session;
    // What an upgrade leaves: refresh records of a family without a session row.
    await rt.authDb.orm
      .delete(session)
      .where(eq(session.id, sidOf(old.accessToken)!))
      .returning({ id: session.id });
    const refreshed = await refresh(app, old.refreshToken);
    expect(refreshed.status).toBe(200);
    const sid = sidOf(refreshed.body.access_token);
    expect(sid).toBe(sidOf(old.accessToken));
    const client = app.as(refreshed.body.access_token) as LoggedInClient;
    expect((await sessionsOf(client)).map((s) => [s.id, s.current])).toEqual([[sid, true]]);
    expect((await client.delete(`/api/auth/sessions/${sid}`)).status).toBe(204);
    expect((await refresh(app, refreshed.body.refresh_token)).status).toBe(401);
  });

  it("a login deletes the user's sessions whose refresh tokens all expired, in the same step that records its own", async () => {
    const nora = await app.createUser({ username: 'nora' });
    const stale = await login('nora', 'stale');
    const recent = await login('nora', 'recent');
    const rt = app.app.runtime;
    const session = (rt.tables.auth as AuthTables).session;
    const rowsOfNora = async () =>
      (await rt.authDb.orm.select().from(session).where(eq(session.userId, nora.id))).map((r) => r.id).sort();
    // Last used longer ago than a refresh token lives (plus the margin of auth/constants.ts).
    await rt.authDb.orm
      .update(session)
      .set({ lastUsedAt: new Date(Date.now() - 400 * 86_400_000) })
      .where(eq(session.id, sidOf(stale.accessToken)!))
      .returning({ id: session.id });
    const next = await login('nora', 'next');
    expect(await rowsOfNora()).toEqual([sidOf(recent.accessToken), sidOf(next.accessToken)].sort());
    const [row] = await rt.authDb.orm
      .select()
      .from(session)
      .where(eq(session.id, sidOf(next.accessToken)!));
    expect(row).toMatchObject({ userId: nora.id, userAgent: 'next', ip: '127.0.0.1', revokedAt: null });
    expect(row!.lastUsedAt.getTime()).toBe(row!.createdAt.getTime());
  });

  it('a password change ends every session, and they leave the list', async () => {
    const user = await app.createUser({ username: 'heidi' });
    const a = await login('heidi', 'a');
    const res = await a.post('/api/auth/user/password', {
      currentPassword: user.password,
      newPassword: 'another-long-password',
    });
    expect(res.status).toBe(204);
    const again = await app.loginAs({ username: 'heidi', password: 'another-long-password' });
    expect((await sessionsOf(again)).map((s) => s.id)).toEqual([sidOf(again.accessToken)]);
    expect(await refresh(app, a.refreshToken)).toMatchObject({ status: 401 });
  });

  it("superusers list and end a user's sessions; 404 for an unknown user or session", async () => {
    const ivan = await app.createUser({ username: 'ivan' });
    const a = await login('ivan', 'a');
    const b = await login('ivan', 'b');
    const listed = await admin.get(`/api/admin/user/${ivan.id}/sessions`);
    expect(listed.status).toBe(200);
    expect(listed.body.data.map((s: { id: string }) => s.id)).toEqual([
      sidOf(b.accessToken),
      sidOf(a.accessToken),
    ]);
    expect(listed.body.data.every((s: { current: boolean }) => !s.current)).toBe(true);
    expect((await admin.delete(`/api/admin/user/${ivan.id}/sessions/${sidOf(a.accessToken)}`)).status).toBe(
      204,
    );
    expect401(await a.get('/api/auth/user'), 'auth.session_revoked');
    expect((await b.get('/api/auth/user')).status).toBe(200);
    const unknownSession = await admin.delete(`/api/admin/user/${ivan.id}/sessions/${randomUUID()}`);
    expect(unknownSession.status).toBe(404);
    expect(unknownSession.body.detail[0].code).toBe('auth.session_not_found');
    const unknownUser = await admin.get(`/api/admin/user/${randomUUID()}/sessions`);
    expect(unknownUser.status).toBe(404);
    expect(unknownUser.body.detail[0]).toMatchObject({ code: 'user.not_found', loc: ['path', 'user_id'] });
    expect((await admin.delete(`/api/admin/user/${ivan.id}/sessions`)).status).toBe(204);
    expect401(await b.get('/api/auth/user'), 'auth.session_revoked');
    expect((await admin.get(`/api/admin/user/${ivan.id}/sessions`)).body.data).toEqual([]);
  });

  it('a non-superuser cannot reach the admin session routes', async () => {
    const judy = await app.createUser({ username: 'judy' });
    const j = await login('judy', 'j');
    const res = await j.get(`/api/admin/user/${judy.id}/sessions`);
    expect(res.status).toBe(403);
    expect(res.body.detail[0].code).toBe('access.superuser_required');
  });

  it('closes the event sockets of an ended session with 4401 and emits session_revoked; other sessions stay open', async () => {
    await app.createUser({ username: 'kim' });
    const a = await login('kim', 'a');
    const b = await login('kim', 'b');
    const socketA = await openSocket(eventsUrl(app.url, { ticket: await ticketOf(a) }));
    const socketB = await openSocket(eventsUrl(app.url, { ticket: await ticketOf(b) }));
    const watcher = await openSocket(eventsUrl(app.url, { ticket: await ticketOf(admin) }));
    sockets.push(socketA, socketB, watcher);
    await Promise.all([socketA, socketB, watcher].map((s) => s.waitFor((f) => f.type === 'snapshot')));
    const sid = sidOf(a.accessToken);
    expect((await b.delete(`/api/auth/sessions/${sid}`)).status).toBe(204);
    expect(await socketA.closed).toBe(4401);
    const seen = await socketB.waitFor((f) => f.type === 'session_revoked');
    expect(seen.data).toEqual({ userId: expect.any(String), sessionId: sid });
    expect((await watcher.waitFor((f) => f.type === 'session_revoked')).data.sessionId).toBe(sid);
    expect(socketB.ws.readyState).toBe(socketB.ws.OPEN);
  });

  it('a session ended outside the API (as the CLI does) closes its sockets at the next check, and a ticket of it opens nothing', async () => {
    const user = await app.createUser({ username: 'mia' });
    const a = await login('mia', 'a');
    const b = await login('mia', 'b');
    const socketA = await openSocket(eventsUrl(app.url, { ticket: await ticketOf(a) }));
    const socketB = await openSocket(eventsUrl(app.url, { ticket: await ticketOf(b) }));
    sockets.push(socketA, socketB);
    await Promise.all([socketA, socketB].map((s) => s.waitFor((f) => f.type === 'snapshot')));
    const spareTicket = await ticketOf(a);
    const rt = app.app.runtime;
    const store = createSessionStore(
      rt.authDb,
      rt.tables.core as unknown as CoreTables,
      (rt.tables.auth as AuthTables).session,
    );
    expect(await store.revoke(user.id, new Date(), { only: sidOf(a.accessToken) })).toEqual([
      sidOf(a.accessToken),
    ]);
    expect(await socketA.closed).toBe(4401);
    const late = await openSocket(eventsUrl(app.url, { ticket: spareTicket }));
    expect(await late.closed).toBe(4401);
    await socketB.waitFor((f) => f.type === 'ping');
    expect(socketB.ws.readyState).toBe(socketB.ws.OPEN);
  });

  it('a session ended while its refresh is in flight never comes back', async () => {
    await app.createUser({ username: 'liam' });
    for (let round = 0; round < 5; round += 1) {
      const a = await login('liam', `a${round}`);
      const b = await login('liam', `b${round}`);
      const [refreshed, revoked] = await Promise.all([
        refresh(app, a.refreshToken),
        b.delete(`/api/auth/sessions/${sidOf(a.accessToken)}`),
      ]);
      expect(revoked.status).toBe(204);
      // Whatever the order, nothing of that session works afterwards.
      if (refreshed.status === 200) {
        expect401(await app.as(refreshed.body.access_token).get('/api/auth/user'), 'auth.session_revoked');
        expect((await refresh(app, refreshed.body.refresh_token)).status).toBe(401);
      } else {
        expect(refreshed.body.detail[0].code).toBe('auth.refresh_token_revoked');
      }
      expect((await sessionsOf(b)).map((s) => s.id)).not.toContain(sidOf(a.accessToken));
      await b.post('/api/auth/logout');
    }
  });

  it('refuses personal access tokens on the session routes (403 access.token_not_allowed)', async () => {
    const created = await admin.post('/api/auth/tokens', { name: 'bot', superuser: true });
    expect(created.status).toBe(201);
    const bot = app.as(created.body.data.token);
    const routes: [string, string][] = [
      ['GET', '/api/auth/sessions'],
      ['POST', '/api/auth/sessions/revoke-others'],
      ['DELETE', `/api/auth/sessions/${sidOf(admin.accessToken)}`],
      ['GET', `/api/admin/user/${admin.user.id}/sessions`],
      ['DELETE', `/api/admin/user/${admin.user.id}/sessions`],
      ['DELETE', `/api/admin/user/${admin.user.id}/sessions/${sidOf(admin.accessToken)}`],
    ];
    for (const [method, path] of routes) {
      const res = await bot.request(method, path);
      expect(res.status).toBe(403);
      expect(res.body.detail[0].code).toBe('access.token_not_allowed');
    }
    expect((await admin.get('/api/auth/user')).status).toBe(200);
  });

  it('documents the routes with their response schemas in /openapi-core.json', async () => {
    const doc = (await app.get('/openapi-core.json')).body;
    expect(doc.paths['/api/auth/sessions'].get.responses['200'].content).toBeDefined();
    expect(doc.paths['/api/auth/sessions/revoke-others'].post.responses['204']).toBeDefined();
    expect(doc.paths['/api/auth/sessions/{session_id}'].delete.parameters).toEqual(
      expect.arrayContaining([expect.objectContaining({ name: 'session_id', in: 'path' })]),
    );
    expect(doc.paths['/api/admin/user/{user_id}/sessions'].get.responses['200'].content).toBeDefined();
    expect(doc.paths['/api/admin/user/{user_id}/sessions'].delete).toBeDefined();
    expect(doc.paths['/api/admin/user/{user_id}/sessions/{session_id}'].delete).toBeDefined();
  });

  it("contributes the account export's `sessions`, as GET /auth/sessions lists them", async () => {
    const part = app.app.runtime.ports.get('accountExport').parts.sessions!;
    const listed = (await sessionsOf(admin)).map((s) => ({ ...s, current: false }));
    expect(await part(admin.user.id)).toEqual(listed);
  });
});
