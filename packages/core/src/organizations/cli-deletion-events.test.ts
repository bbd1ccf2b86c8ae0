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

// SPEC-3 §2: `svc users delete` deletes the user's memberships like the routes do, and each removal emits
// `organization_membership_changed` (role null) to the member and superusers. The command is no host: with a
// shared cache (Redis) and `events_broadcast_enabled` it tells the hosts' sockets through the cache's event bus
// (events/standalone.ts), as `svc users update` does for the end of impersonations.
describe('svc users delete announces the memberships it removes (PostgreSQL + Redis)', () => {
  if (!TEST_POSTGRES_URL || !TEST_REDIS_URL) {
    reportSkipped(
      'svc users delete membership events',
      'SVC_TEST_POSTGRES_URL and SVC_TEST_REDIS_URL are both needed',
    );
    return;
  }
  let created: { url: string; drop(): Promise<void> };
  let app: TestApp;
  const prefix = `svctest:${randomBytes(5).toString('hex')}:`;

  beforeAll(async () => {
    created = await createPostgresDatabase();
    const database: TestDatabase = { dialect: 'pg', label: 'postgres', url: created.url };
    const cache: TestCache = { kind: 'redis', url: TEST_REDIS_URL, prefix };
    app = await startTestApp({
      database,
      cache,
      settings: { organizations_enabled: true, events_broadcast_enabled: true },
    });
  }, 60_000);
  afterAll(async () => {
    await app?.close();
    await created?.drop();
  }, 30_000);

  it('emits organization_membership_changed with role null for each membership, through the bus', async () => {
    const root = await app.loginAs(await app.createUser({ username: 'cde_root', isSuperuser: true }));
    const gone = await app.loginAs(await app.createUser({ username: 'cde_gone' }));
    const orgs: string[] = [];
    for (const slug of ['cde-one', 'cde-two']) {
      const res = await gone.post('/api/organizations', { name: slug, slug });
      expect(res.status).toBe(201);
      orgs.push(res.body.data.id);
    }
    const socket = await openSocket(eventsUrl(app.url, { ticket: await ticketOf(root) }));
    const dir = mkdtempSync(join(tmpdir(), 'svc-users-delete-events-'));
    try {
      writeFileSync(
        join(dir, '.env'),
        [
          `SVC_SECRET_KEY=${TEST_SECRET_KEY}`,
          `SVC_AUTH_DATABASE_URL=${created.url}`,
          `SVC_CACHE_URL=${TEST_REDIS_URL}`,
          `SVC_CACHE_PREFIX=${prefix}`,
          'SVC_EVENTS_BROADCAST_ENABLED=true',
          'SVC_LOG_LEVEL=ERROR',
          '',
        ].join('\n'),
      );
      const cli = await runCli(['--base-dir', dir, 'users', 'delete', 'cde_gone', '--yes']);
      expect(cli.code).toBe(0);
      for (const organizationId of orgs)
        await socket.waitFor(
          (f) =>
            f.type === 'organization_membership_changed' &&
            f.data?.userId === gone.user.id &&
            f.data?.organizationId === organizationId &&
            f.data?.role === null,
          10_000,
        );
    } finally {
      await socket.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
