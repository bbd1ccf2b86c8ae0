import {
  createPostgresDatabase,
  reportSkipped,
  startTestApp,
  TEST_POSTGRES_URL,
  type TestApp,
  type TestDatabase,
} from '../testing/index.js';

// Hosts of one deployment start together (a rolling start, a scaled-out service): each keeps the member counts'
// trigger (store.ts `ensureMemberCount`) at start-up. PostgreSQL refuses a `CREATE OR REPLACE FUNCTION` that
// races another on the same function ("tuple concurrently updated"), which stopped a host from starting.
describe('organization member counts: hosts starting together on one PostgreSQL database', () => {
  if (!TEST_POSTGRES_URL) {
    reportSkipped('organizations start-up race', 'SVC_TEST_POSTGRES_URL is needed');
    return;
  }
  let created: { url: string; drop(): Promise<void> };
  beforeAll(async () => {
    created = await createPostgresDatabase();
  });
  afterAll(async () => {
    await created?.drop();
  });

  it('six hosts started at once, three times over, all start', async () => {
    const database: TestDatabase = { dialect: 'pg', label: 'postgres', url: created.url };
    // The schema first, as `svc migrations upgrade` makes it before a deployment's hosts start.
    await (await startTestApp({ database, settings: { organizations_enabled: true } })).close();
    for (let round = 0; round < 3; round++) {
      const started = await Promise.allSettled(
        Array.from({ length: 6 }, () =>
          startTestApp({ database, settings: { organizations_enabled: true } }),
        ),
      );
      const apps = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value as TestApp] : []));
      await Promise.all(apps.map((app) => app.close()));
      const failures = started.flatMap((s) => (s.status === 'rejected' ? [String(s.reason)] : []));
      expect(failures).toEqual([]);
    }
  }, 120_000);
});
