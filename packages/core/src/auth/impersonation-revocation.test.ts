import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '../../../../testing/cli-process.js';
import { eventsUrl, openSocket, ticketOf, type TestSocket } from '../../../../testing/events.js';
import {
  describeEachDatabase,
  startTestApp,
  TEST_SECRET_KEY,
  type LoggedInClient,
  type TestApp,
} from '../testing/index.js';

// SPEC-3 §4: an impersonation ends by logout, revocation or the superuser's demotion, and each end is recorded
// in the activity log and emits `impersonation_ended` `{userId, impersonatorId}` to superusers. The
// impersonation session is one of the user's sessions, so whatever ends all of them (SPEC "Authentication" 8:
// the user's own password change, an administrator's new password or deactivation; a logout without the
// caller's refresh token) revokes it too: that end is recorded once, like the others.

const PASSWORD = 'correct-horse-battery';

describeEachDatabase('Impersonation ended with all of the user’s sessions', (database) => {
  let app: TestApp;
  let root: LoggedInClient;
  let socket: TestSocket;
  let counter = 0;

  const newUser = async () =>
    app.createUser({
      username: `ir_user${++counter}`,
      email: `ir${counter}@example.com`,
      password: PASSWORD,
    });
  const impersonate = async (userId: string) => {
    const res = await root.post(`/api/admin/user/${userId}/impersonate`, { reason: 'support case' });
    expect(res.status).toBe(200);
    return app.as(res.body.access_token as string);
  };

  /** The `impersonation_ended` frames of the user, once a later marker event has arrived (the bus keeps order). */
  async function endsOf(userId: string): Promise<unknown[]> {
    const marker = await app.createUser({ username: `ir_marker${++counter}` });
    await impersonate(marker.id);
    await socket.waitFor((f) => f.type === 'impersonation_started' && f.data?.userId === marker.id);
    return socket.frames.filter((f) => f.type === 'impersonation_ended' && f.data?.userId === userId);
  }

  /** The activity entries of the user made while or about being impersonated: [method, path, description]. */
  async function impersonatorEntries(userId: string) {
    const logged = await root.get(`/api/admin/audit/logs?impersonatorId=${root.user.id}&userId=${userId}`);
    expect(logged.status).toBe(200);
    return (logged.body.data.items as any[]).map((e) => [e.method, e.path, e.description]);
  }

  beforeAll(async () => {
    app = await startTestApp({
      database,
      settings: {
        impersonation_enabled: true,
        activity_log_enabled: true,
        activity_log_sync: true,
        events_broadcast_enabled: true,
      },
    });
    root = await app.loginAs(await app.createUser({ username: 'ir_root', isSuperuser: true }));
    socket = await openSocket(eventsUrl(app.url, { ticket: await ticketOf(root) }));
  });
  afterAll(async () => {
    await socket.close();
    await app.close();
  });

  it('the user’s own password change ends the impersonation and records its end once', async () => {
    const target = await newUser();
    const as = await impersonate(target.id);
    const own = await app.loginAs(target);
    const changed = await own.post('/api/auth/user/password', {
      currentPassword: PASSWORD,
      newPassword: 'another-long-password',
    });
    expect(changed.status).toBe(204);
    const res = await as.get('/api/auth/user');
    expect(res.status).toBe(401);
    expect(await endsOf(target.id)).toEqual([
      expect.objectContaining({ data: { userId: target.id, impersonatorId: root.user.id } }),
    ]);
    expect(await impersonatorEntries(target.id)).toEqual([
      ['POST', '/api/auth/user/password', 'impersonation ended by revocation'],
    ]);
  });

  it('an administrator’s new password or deactivation of the user ends it and records its end once', async () => {
    // SPEC "Authentication": the token of an ended session answers 401, an inactive user's 400.
    const changes = [
      [{ password: 'admin-set-password' }, 401],
      [{ isActive: false }, 400],
    ] as const;
    for (const [change, refused] of changes) {
      const target = await newUser();
      const as = await impersonate(target.id);
      expect((await root.patch(`/api/admin/user/${target.id}`, change)).status).toBe(200);
      expect((await as.get('/api/auth/user')).status).toBe(refused);
      expect(await endsOf(target.id)).toHaveLength(1);
      expect(await impersonatorEntries(target.id)).toEqual([
        ['PATCH', `/api/admin/user/${target.id}`, 'impersonation ended by revocation'],
      ]);
    }
  });

  it('the user’s logout without their refresh token (every session) ends it and records its end once', async () => {
    const target = await newUser();
    const as = await impersonate(target.id);
    const own = await app.loginAs(target);
    expect((await own.post('/api/auth/logout')).status).toBe(204);
    expect((await as.get('/api/auth/user')).status).toBe(401);
    expect(await endsOf(target.id)).toHaveLength(1);
    expect(await impersonatorEntries(target.id)).toEqual([
      ['POST', '/api/auth/logout', 'impersonation ended by revocation'],
    ]);
  });

  it('an impersonation already ended is not ended again by a later revocation of everything', async () => {
    const target = await newUser();
    const as = await impersonate(target.id);
    expect((await as.post('/api/auth/logout')).status).toBe(204);
    const own = await app.loginAs(target);
    expect(
      (
        await own.post('/api/auth/user/password', {
          currentPassword: PASSWORD,
          newPassword: 'another-long-password',
        })
      ).status,
    ).toBe(204);
    expect(await endsOf(target.id)).toHaveLength(1);
    expect((await impersonatorEntries(target.id)).map((e) => e[2])).toEqual([
      'impersonation ended by logout',
    ]);
  });

  it('svc users sessions --revoke-all, update --password or --no-active end it and record its end once, named by the command', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-impersonation-revoke-all-'));
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
      for (const [flags, refused] of [
        [['--password', 'a-new-long-password'], 401],
        [['--no-active'], 400],
      ] as const) {
        const changed = await newUser();
        const impersonated = await impersonate(changed.id);
        const update = await runCli(['--base-dir', dir, 'users', 'update', changed.username, ...flags]);
        expect(update.code).toBe(0);
        expect((await impersonated.get('/api/auth/user')).status).toBe(refused);
        expect(await impersonatorEntries(changed.id)).toEqual([
          ['CLI', `svc users update ${changed.username}`, 'impersonation ended by revocation'],
        ]);
      }
      const target = await newUser();
      const as = await impersonate(target.id);
      const cli = await runCli([
        '--base-dir',
        dir,
        'users',
        'sessions',
        target.username,
        '--revoke-all',
        '--yes',
      ]);
      expect(cli.code).toBe(0);
      expect((await as.get('/api/auth/user')).status).toBe(401);
      expect(await impersonatorEntries(target.id)).toEqual([
        ['CLI', `svc users sessions ${target.username} --revoke-all`, 'impersonation ended by revocation'],
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
