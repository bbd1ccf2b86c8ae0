import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import jwt from 'jsonwebtoken';
import { runCli } from '../../../../testing/cli-process.js';
import {
  describeEachDatabase,
  startTestApp,
  TEST_SECRET_KEY,
  type LoggedInClient,
  type TestApp,
  type TestClient,
} from '../testing/index.js';
import { eventsUrl, openSocket, ticketOf, type TestSocket } from '../../../../testing/events.js';

// SPEC-3 §4 "Impersonation": the route, the `act` claim and its own session, `impersonatedBy`, the refused
// credential routes, `impersonator_id` in the activity log, logout and revocation, the superuser's demotion.

const PASSWORD = 'correct-horse-battery';
const CLI_TIMEOUT_MS = 120_000;

describeEachDatabase('Impersonation', (database) => {
  let app: TestApp;
  let root: LoggedInClient;
  let rootId: string;
  let socket: TestSocket;
  let counter = 0;

  /** A fresh ordinary user (tests share the app, each acts on its own user). */
  const newUser = async () =>
    app.createUser({ username: `user${++counter}`, email: `u${counter}@example.com` });

  async function impersonate(
    userId: string,
    by: TestClient = root,
    reason = 'ticket 4711: cannot see invoices',
  ) {
    return by.post(`/api/admin/user/${userId}/impersonate`, { reason });
  }

  beforeAll(async () => {
    app = await startTestApp({
      database,
      settings: {
        impersonation_enabled: true,
        impersonation_expire_minutes: 20,
        activity_log_enabled: true,
        activity_log_sync: true,
        personal_tokens_enabled: true,
        events_broadcast_enabled: true,
        // SPEC-3 §5: `DELETE /auth/session` ends an impersonation as the logout does.
        cookie_sessions_enabled: true,
      },
    });
    const created = await app.createUser({ username: 'root', isSuperuser: true });
    rootId = created.id;
    root = await app.loginAs(created);
    socket = await openSocket(eventsUrl(app.url, { ticket: await ticketOf(root) }));
  });
  afterAll(async () => {
    await socket.close();
    await app.close();
  });

  it('answers an access token with act: {sub: superuser} in a session of its own, no refresh token', async () => {
    const alice = await newUser();
    const res = await impersonate(alice.id);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(['access_token', 'expires_in', 'token_type']);
    expect(res.body).toMatchObject({ token_type: 'bearer', expires_in: 1200 });
    const claims = jwt.decode(res.body.access_token) as Record<string, any>;
    expect(claims).toMatchObject({ sub: alice.id, type: 'access', act: { sub: rootId } });
    expect(claims.exp - claims.iat).toBe(1200);
    expect(claims.sid).not.toBe((jwt.decode(root.accessToken) as { sid: string }).sid);

    const as = app.as(res.body.access_token);
    const me = await as.get('/api/auth/user');
    expect(me.status).toBe(200);
    expect(me.body.data).toMatchObject({ id: alice.id, impersonatedBy: { id: rootId, username: 'root' } });
    // The user's own login shows no impersonation.
    const own = await app.loginAs(alice);
    expect((await own.get('/api/auth/user')).body.data.impersonatedBy).toBeUndefined();
    const listed = (await own.get('/api/auth/sessions')).body.data as any[];
    const session = listed.find((s) => s.id === claims.sid);
    expect(session).toMatchObject({ current: false, impersonatedBy: { id: rootId, username: 'root' } });
    expect(listed.find((s) => s.current).impersonatedBy).toBeUndefined();

    await socket.waitFor(
      (f) =>
        f.type === 'impersonation_started' &&
        f.data?.userId === alice.id &&
        f.data?.impersonatorId === rootId,
    );
  });

  it('refuses superusers, staff, inactive users and the caller with 403 user.cannot_impersonate; unknown users 404', async () => {
    const other = await app.createUser({ username: `su${++counter}`, isSuperuser: true });
    const staff = await app.createUser({ username: `staff${++counter}`, isStaff: true });
    const inactive = await app.createUser({ username: `off${++counter}`, isActive: false });
    for (const id of [other.id, staff.id, inactive.id, rootId]) {
      const res = await impersonate(id);
      expect(res.status).toBe(403);
      expect(res.body.detail[0]).toMatchObject({ code: 'user.cannot_impersonate', loc: ['path', 'user_id'] });
    }
    expect((await impersonate('00000000-0000-4000-8000-000000000000')).status).toBe(404);
  });

  it('validates the reason (1 to 500 characters) and requires a superuser, never a personal token', async () => {
    const bob = await newUser();
    expect((await impersonate(bob.id, root, '')).status).toBe(422);
    expect((await impersonate(bob.id, root, 'x'.repeat(501))).status).toBe(422);
    expect((await impersonate(bob.id, root, 'x'.repeat(500))).status).toBe(200);
    const plain = await app.loginAs(await newUser());
    const denied = await impersonate(bob.id, plain);
    expect(denied.status).toBe(403);
    expect(denied.body.detail[0].code).toBe('access.superuser_required');
    const pat = await root.post('/api/auth/tokens', { name: 'robot', expiresInDays: 1 });
    expect(pat.status).toBe(201);
    const byToken = await impersonate(bob.id, app.as(pat.body.data.token));
    expect(byToken.status).toBe(403);
    expect(byToken.body.detail[0].code).toBe('access.token_not_allowed');
  });

  it('refuses every credential route with 403 access.impersonation_forbidden before any other check', async () => {
    const carol = await newUser();
    const as = app.as((await impersonate(carol.id)).body.access_token);
    const attempts = [
      () => as.post('/api/auth/user/password', { currentPassword: 'wrong', newPassword: 'x' }),
      () => as.patch('/api/auth/user', { email: 'new@example.com' }),
      () => as.get('/api/auth/sessions'),
      () => as.post('/api/auth/sessions/revoke-others'),
      () => as.delete('/api/auth/sessions/not-a-session'),
      () => as.get('/api/auth/tokens'),
      () => as.post('/api/auth/tokens', { name: 'x', expiresInDays: 1 }), // recent-login rule comes after
      () => as.get('/api/mfa/status'),
      () => as.post('/api/mfa/totp/setup'),
      () => as.get('/api/auth/user/export'),
      () => as.request('DELETE', '/api/auth/user', { body: { password: 'wrong' } }),
    ];
    for (const attempt of attempts) {
      const res = await attempt();
      expect([res.status, res.body.detail?.[0]?.code]).toEqual([403, 'access.impersonation_forbidden']);
    }
    // Reading the user's own things stays allowed.
    expect((await as.get('/api/auth/user')).status).toBe(200);
  });

  it("records the superuser as impersonator_id on the user's activity entries; the audit routes filter by it", async () => {
    const dave = await newUser();
    const started = await impersonate(dave.id, root, 'support call 42');
    const as = app.as(started.body.access_token);
    expect((await as.post('/api/auth/logout')).status).toBe(204);

    const byImpersonator = await root.get(`/api/admin/audit/logs?impersonatorId=${rootId}&userId=${dave.id}`);
    expect(byImpersonator.status).toBe(200);
    const entries = byImpersonator.body.data.items as any[];
    expect(entries.map((e) => [e.path, e.userId, e.impersonatorId, e.description])).toEqual([
      ['/api/auth/logout', dave.id, rootId, 'impersonation ended by logout'],
    ]);
    // The start is the superuser's own entry, with the reason in its description.
    const start = await root.get(
      `/api/admin/audit/activity?pathContains=${encodeURIComponent(`/admin/user/${dave.id}/impersonate`)}`,
    );
    expect(start.body.data).toHaveLength(1);
    expect(start.body.data[0]).toMatchObject({
      userId: rootId,
      impersonatorId: null,
      description: `impersonation of ${dave.username} started: support call 42`,
    });
    const others = await root.get(`/api/admin/audit/activity?impersonatorId=${dave.id}`);
    expect(others.body.data).toEqual([]);
  });

  it("ends only the impersonation session at logout (with or without a body), never the user's others", async () => {
    const erin = await newUser();
    for (const withBody of [false, true]) {
      const own = await app.loginAs(erin);
      const body = withBody ? { refresh_token: own.refreshToken } : undefined;
      const token = (await impersonate(erin.id)).body.access_token;
      const as = app.as(token);
      const res = await as.post('/api/auth/logout', body);
      expect(res.status).toBe(204);
      const after = await as.get('/api/auth/user');
      expect(after.status).toBe(401);
      expect(after.body.detail[0].code).toBe('auth.session_revoked');
      expect((await own.get('/api/auth/user')).status).toBe(200);
      expect((await app.post('/api/auth/refresh-token', { refresh_token: own.refreshToken })).status).toBe(
        200,
      );
      await socket.waitFor((f) => f.type === 'impersonation_ended' && f.data?.userId === erin.id);
    }
  });

  it('lets the user revoke the impersonation session (401 auth.session_revoked, impersonation_ended)', async () => {
    const frank = await newUser();
    const token = (await impersonate(frank.id)).body.access_token;
    const sid = (jwt.decode(token) as { sid: string }).sid;
    const own = await app.loginAs(frank);
    expect((await own.delete(`/api/auth/sessions/${sid}`)).status).toBe(204);
    const res = await app.as(token).get('/api/auth/user');
    expect([res.status, res.body.detail[0].code]).toEqual([401, 'auth.session_revoked']);
    const logged = await root.get(`/api/admin/audit/activity?userId=${frank.id}&method=DELETE`);
    expect(logged.body.data[0]).toMatchObject({
      path: `/api/auth/sessions/${sid}`,
      description: 'impersonation ended by revocation',
      impersonatorId: null,
    });
    await socket.waitFor(
      (f) =>
        f.type === 'impersonation_ended' && f.data?.userId === frank.id && f.data?.impersonatorId === rootId,
    );
  });

  it("records the end by a superuser's revocation and by DELETE /auth/session, with impersonation_ended", async () => {
    const gina = await newUser();
    const token = (await impersonate(gina.id)).body.access_token;
    const sid = (jwt.decode(token) as { sid: string }).sid;
    expect((await root.delete(`/api/admin/user/${gina.id}/sessions/${sid}`)).status).toBe(204);
    expect((await app.as(token).get('/api/auth/user')).status).toBe(401);
    const revoked = await root.get(
      `/api/admin/audit/activity?pathContains=${encodeURIComponent(`/sessions/${sid}`)}`,
    );
    expect(revoked.body.data).toEqual([
      expect.objectContaining({ userId: rootId, description: 'impersonation ended by revocation' }),
    ]);
    await socket.waitFor(
      (f) =>
        f.type === 'impersonation_ended' && f.data?.userId === gina.id && f.data?.impersonatorId === rootId,
    );

    // SPEC-3 §5: `DELETE /auth/session` ends a session as `POST /auth/logout` does, an impersonation's too.
    const second = app.as((await impersonate(gina.id)).body.access_token);
    expect((await second.delete('/api/auth/session')).status).toBe(204);
    expect((await second.get('/api/auth/user')).status).toBe(401);
    const loggedOut = await root.get(`/api/admin/audit/logs?impersonatorId=${rootId}&userId=${gina.id}`);
    expect((loggedOut.body.data.items as any[]).map((e) => [e.method, e.path, e.description])).toEqual([
      ['DELETE', '/api/auth/session', 'impersonation ended by logout'],
    ]);
    let ends = 0; // the second impersonation_ended of gina's (the frames seen so far count too)
    await socket.waitFor(
      (f) => f.type === 'impersonation_ended' && f.data?.userId === gina.id && ++ends === 2,
    );

    // Revoking all of the user's sessions ends an impersonation among them too.
    const third = app.as((await impersonate(gina.id)).body.access_token);
    expect((await root.delete(`/api/admin/user/${gina.id}/sessions`)).status).toBe(204);
    expect((await third.get('/api/auth/user')).status).toBe(401);
    const all = await root.get(
      `/api/admin/audit/activity?pathContains=${encodeURIComponent(`/${gina.id}/sessions`)}&method=DELETE`,
    );
    expect(all.body.data[0]).toMatchObject({
      path: `/api/admin/user/${gina.id}/sessions`,
      description: `ended the sessions of ${gina.id}; impersonation ended by revocation`,
    });
    let more = 0;
    await socket.waitFor(
      (f) => f.type === 'impersonation_ended' && f.data?.userId === gina.id && ++more === 3,
    );

    // And the user's own `revoke-others`.
    const fourth = app.as((await impersonate(gina.id)).body.access_token);
    const own = await app.loginAs(gina);
    expect((await own.post('/api/auth/sessions/revoke-others')).status).toBe(204);
    expect((await fourth.get('/api/auth/user')).status).toBe(401);
    const others = await root.get(`/api/admin/audit/activity?userId=${gina.id}&pathContains=revoke-others`);
    expect(others.body.data).toEqual([
      expect.objectContaining({
        path: '/api/auth/sessions/revoke-others',
        description: 'impersonation ended by revocation',
      }),
    ]);
    let last = 0;
    await socket.waitFor(
      (f) => f.type === 'impersonation_ended' && f.data?.userId === gina.id && ++last === 4,
    );
  });

  it('ends at once when the superuser is demoted or deactivated (401 auth.session_revoked), recording the end', async () => {
    const changes = [
      [{ isSuperuser: false }, 'demotion'],
      [{ isActive: false }, 'deactivation'],
    ] as const;
    for (const [change, cause] of changes) {
      const admin = await app.createUser({ username: `admin${++counter}`, isSuperuser: true });
      const adminClient = await app.loginAs(admin);
      const target = await newUser();
      const token = (await impersonate(target.id, adminClient)).body.access_token;
      expect((await app.as(token).get('/api/auth/user')).status).toBe(200);
      expect((await root.patch(`/api/admin/user/${admin.id}`, change)).status).toBe(200);
      const res = await app.as(token).get('/api/auth/user');
      expect([res.status, res.body.detail[0].code]).toEqual([401, 'auth.session_revoked']);
      await socket.waitFor(
        (f) =>
          f.type === 'impersonation_ended' &&
          f.data?.userId === target.id &&
          f.data?.impersonatorId === admin.id,
      );
      // SPEC-3 §4: the end is in the activity log like the end by logout: the user, the superuser as
      // impersonator, the demoting request's method and path.
      const logged = await root.get(`/api/admin/audit/logs?impersonatorId=${admin.id}&userId=${target.id}`);
      expect(logged.status).toBe(200);
      expect(
        (logged.body.data.items as any[]).map((e) => [e.method, e.path, e.username, e.description]),
      ).toEqual([
        [
          'PATCH',
          `/api/admin/user/${admin.id}`,
          target.username,
          `impersonation ended by the superuser's ${cause}`,
        ],
      ]);
    }
  });

  it(
    'ends and records the impersonations of a superuser demoted or deactivated by svc users update',
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'svc-impersonation-cli-'));
      try {
        writeFileSync(
          join(dir, '.env'),
          [
            `SVC_SECRET_KEY=${TEST_SECRET_KEY}`,
            `SVC_AUTH_DATABASE_URL=${database.url}`,
            'SVC_ACTIVITY_LOG_ENABLED=true',
            'SVC_LOG_LEVEL=ERROR',
            '',
          ].join('\n'),
        );
        const flags = [
          ['--no-superuser', 'demotion'],
          ['--no-active', 'deactivation'],
        ] as const;
        for (const [flag, cause] of flags) {
          const admin = await app.createUser({ username: `cliadmin${++counter}`, isSuperuser: true });
          const target = await newUser();
          const token = (await impersonate(target.id, await app.loginAs(admin))).body.access_token;
          const sid = (jwt.decode(token) as { sid: string }).sid;
          const cli = await runCli(['--base-dir', dir, 'users', 'update', admin.username, flag]);
          expect(cli.code).toBe(0);
          const res = await app.as(token).get('/api/auth/user');
          expect([res.status, res.body.detail[0].code]).toEqual([401, 'auth.session_revoked']);
          const logged = await root.get(
            `/api/admin/audit/logs?impersonatorId=${admin.id}&userId=${target.id}`,
          );
          expect(
            (logged.body.data.items as any[]).map((e) => [e.method, e.path, e.username, e.description]),
          ).toEqual([
            [
              'CLI',
              `svc users update ${admin.username}`,
              target.username,
              `impersonation ended by the superuser's ${cause}`,
            ],
          ]);
          // Ended, not only refused: the user's session list no longer shows it.
          const own = await app.loginAs(target);
          const listed = (await own.get('/api/auth/sessions')).body.data as { id: string }[];
          expect(listed.map((s) => s.id)).not.toContain(sid);
        }
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
    CLI_TIMEOUT_MS,
  );

  it('is not mounted while impersonation_enabled is false', async () => {
    const off = await startTestApp({ database, settings: {} });
    try {
      // The same database as the app above: its superuser and a user of its own.
      const su = await off.loginAs({ username: 'root', password: PASSWORD });
      const target = await newUser();
      expect((await su.post(`/api/admin/user/${target.id}/impersonate`, { reason: 'x' })).status).toBe(404);
    } finally {
      await off.close();
    }
  });
});
