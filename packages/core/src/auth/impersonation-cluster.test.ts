import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '../../../../testing/cli-process.js';
import { eventsUrl, openSocket, ticketOf } from '../../../../testing/events.js';
import {
  createPostgresDatabase,
  reportSkipped,
  startTestApp,
  TEST_POSTGRES_URL,
  TEST_REDIS_URL,
  TEST_SECRET_KEY,
  type TestApp,
  type TestCache,
  type TestDatabase,
} from '../testing/index.js';

// SPEC-3 §4: demoting or deactivating the superuser ends their impersonation at once, on every host. Two app
// instances on one PostgreSQL database and one Redis stand for two hosts: the change made through A (or by
// the CLI, outside any app) is refused on B at the very next request, by the guard's own single query.
describe('impersonation ended across two app instances (PostgreSQL + Redis)', () => {
  if (!TEST_POSTGRES_URL || !TEST_REDIS_URL) {
    reportSkipped(
      'impersonation across instances',
      'SVC_TEST_POSTGRES_URL and SVC_TEST_REDIS_URL are both needed',
    );
    return;
  }
  let created: { url: string; drop(): Promise<void> };
  let a: TestApp;
  let b: TestApp;
  const prefix = `svctest:${randomBytes(5).toString('hex')}:`;

  beforeAll(async () => {
    created = await createPostgresDatabase();
    const database: TestDatabase = { dialect: 'pg', label: 'postgres', url: created.url };
    const cache: TestCache = { kind: 'redis', url: TEST_REDIS_URL, prefix };
    const settings = {
      impersonation_enabled: true,
      events_broadcast_enabled: true,
      activity_log_enabled: true,
      activity_log_sync: true,
    };
    a = await startTestApp({ database, cache, settings });
    b = await startTestApp({ database, cache, settings });
  }, 60_000);
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await created?.drop();
  }, 30_000);

  it.each([
    ['demoted', { isSuperuser: false }],
    ['deactivated', { isActive: false }],
  ])(
    'refuses the token on B once the superuser is %s through A (401 auth.session_revoked)',
    async (label, change) => {
      const root = await a.loginAs(await a.createUser({ username: `root-${label}`, isSuperuser: true }));
      const support = await a.createUser({ username: `support-${label}`, isSuperuser: true });
      const target = await a.createUser({ username: `target-${label}` });
      const started = await (
        await b.loginAs(support)
      ).post(`/api/admin/user/${target.id}/impersonate`, {
        reason: 'cluster check',
      });
      expect(started.status).toBe(200);
      const onB = b.as(started.body.access_token);
      expect((await onB.get('/api/auth/user')).body.data.impersonatedBy.id).toBe(support.id);

      expect((await root.patch(`/api/admin/user/${support.id}`, change)).status).toBe(200);
      const res = await onB.get('/api/auth/user');
      expect([res.status, res.body.detail[0].code]).toEqual([401, 'auth.session_revoked']);
    },
  );

  it('svc users update --no-superuser ends the impersonation, records it, and tells the superusers of every host', async () => {
    const watcher = await b.createUser({ username: 'root-bus', isSuperuser: true });
    const socket = await openSocket(eventsUrl(b.url, { ticket: await ticketOf(await b.loginAs(watcher)) }));
    const dir = mkdtempSync(join(tmpdir(), 'svc-impersonation-bus-'));
    try {
      const support = await a.createUser({ username: 'support-bus', isSuperuser: true });
      const target = await a.createUser({ username: 'target-bus' });
      const token = (
        await (await a.loginAs(support)).post(`/api/admin/user/${target.id}/impersonate`, { reason: 'x' })
      ).body.access_token as string;
      writeFileSync(
        join(dir, '.env'),
        [
          `SVC_SECRET_KEY=${TEST_SECRET_KEY}`,
          `SVC_AUTH_DATABASE_URL=${created.url}`,
          `SVC_CACHE_URL=${TEST_REDIS_URL}`,
          `SVC_CACHE_PREFIX=${prefix}`,
          'SVC_EVENTS_BROADCAST_ENABLED=true',
          'SVC_ACTIVITY_LOG_ENABLED=true',
          'SVC_LOG_LEVEL=ERROR',
          '',
        ].join('\n'),
      );
      const cli = await runCli(['--base-dir', dir, 'users', 'update', 'support-bus', '--no-superuser']);
      expect(cli.code).toBe(0);
      // The command is no host: the event reached B's socket through the shared cache's bus.
      await socket.waitFor(
        (f) =>
          f.type === 'impersonation_ended' &&
          f.data?.userId === target.id &&
          f.data?.impersonatorId === support.id,
        10_000,
      );
      const res = await b.as(token).get('/api/auth/user');
      expect([res.status, res.body.detail[0].code]).toEqual([401, 'auth.session_revoked']);
      const logged = await (
        await b.loginAs(watcher)
      ).get(`/api/admin/audit/logs?impersonatorId=${support.id}&userId=${target.id}`);
      expect((logged.body.data.items as any[]).map((e) => [e.method, e.description])).toEqual([
        ['CLI', "impersonation ended by the superuser's demotion"],
      ]);
    } finally {
      await socket.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);

  it('refuses the token on A and B when the demotion bypasses both apps (the CLI writes the table)', async () => {
    const support = await a.createUser({ username: 'support-cli', isSuperuser: true });
    const target = await a.createUser({ username: 'target-cli' });
    const token = (
      await (await a.loginAs(support)).post(`/api/admin/user/${target.id}/impersonate`, { reason: 'x' })
    ).body.access_token as string;
    const { authDb } = a.app.runtime;
    await authDb.exec(`UPDATE svc_user SET is_superuser = false WHERE id = '${support.id}'`);
    for (const app of [a, b]) {
      const res = await app.as(token).get('/api/auth/user');
      expect([res.status, res.body.detail[0].code]).toEqual([401, 'auth.session_revoked']);
    }
  });
});
