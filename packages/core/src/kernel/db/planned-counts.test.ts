import { sql } from 'drizzle-orm';
import {
  createPostgresDatabase,
  reportSkipped,
  startTestApp,
  TEST_POSTGRES_URL,
  type TestApp,
} from '../../testing/index.js';

/**
 * docs/performance.md "A count's generic plan": PostgreSQL plans a statement kept prepared for its values five
 * times, then may keep a generic plan, planned without them (a users search's count: 25 ms with its own plan,
 * 134 ms with the generic one, at a million users). The console's searches and filters, their counts
 * included, go unnamed: planned for their values on every run. Seen through the routes the console calls, on an
 * app with one connection, whose prepared statements `pg_prepared_statements` lists.
 */
describe('the console lists on PostgreSQL: searches and their counts planned for their values', () => {
  if (!TEST_POSTGRES_URL) {
    reportSkipped('the console lists on PostgreSQL', 'SVC_TEST_POSTGRES_URL is not set');
    return;
  }
  let created: { url: string; drop(): Promise<void> };
  let app: TestApp;
  beforeAll(async () => {
    created = await createPostgresDatabase();
    app = await startTestApp({
      database: { dialect: 'pg', label: 'PostgreSQL', url: created.url },
      settings: {
        db_pool_size: 1,
        db_max_overflow: 0,
        organizations_enabled: true,
        activity_log_enabled: true,
      },
    });
  });
  afterAll(async () => {
    await app?.close();
    await created?.drop();
  });

  it('keeps no statement of a search prepared after many runs, and keeps the others', async () => {
    const root = await app.loginAs(await app.createUser({ username: 'root', isSuperuser: true }));
    const org = await root.post('/api/organizations', { name: 'Planned', slug: 'planned' });
    expect(org.status).toBe(201);
    const orgId = org.body.data.id as string;
    const calls = [
      '/api/admin/user/?search=roo',
      '/api/admin/organizations?search=plan',
      `/api/organizations/${orgId}/members?search=roo`,
      '/api/admin/audit/logs?search=admin',
      '/api/admin/audit/logs?pathContains=admin&method=POST',
    ];
    for (let run = 0; run < 7; run++) {
      for (const path of calls) {
        const res = await root.get(path);
        expect([path, res.status]).toEqual([path, 200]);
      }
    }
    const kept = (
      await app.app.runtime.authDb.all<{ statement: string }>(
        sql`select statement from pg_prepared_statements`,
      )
    ).map((row) => row.statement);
    expect(kept.filter((text) => /\blike\b|strpos/.test(text))).toEqual([]);
    // The check sees the connection's kept statements: the user lookup of every authenticated request is one.
    expect(kept.length).toBeGreaterThan(1);
  });
});
