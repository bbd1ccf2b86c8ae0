import { sql } from 'drizzle-orm';
import { coreModules } from '../app/modules.js';
import {
  createPostgresDatabase,
  reportSkipped,
  startTestApp,
  TEST_POSTGRES_URL,
  type LoggedInClient,
  type TestApp,
  type TestDatabase,
} from '../testing/index.js';
import { TOTAL_COUNT_BOUND } from './constants.js';
import { createAuditModule } from './index.js';
import type { ActivityLogTable } from './tables.js';

// docs/activity-log.md "Large logs": on PostgreSQL each bounded count of `total` has a time budget. At ten
// million entries a filter few entries match (`statusCode=404`) makes the count walk many rows for its
// 10,001 matches while the page takes milliseconds; past the budget the answer says what the page tells.
// Here the budget is 1 ms against counts that walk 10,000 to 20,000 rows (6 to 11 ms on a test machine).

const ENTRIES = 80_000;
/**
 * Every fourth entry is a 404, but three in four of those are on the refresh path `excludePaths` leaves out
 * by default (`activity_log_exclude_paths`): 5,000 match, and counting them walks 20,000 (the shape of
 * the slow counts at ten million entries: few matches among many rows the index finds).
 */
const NOT_FOUND = ENTRIES / 16;
/** A status a handful of entries have: its page ends short, so nothing is counted. */
const TEAPOTS = 7;

type Page = {
  items: { id: number; statusCode: number }[];
  total: number;
  page: number;
  pageSize: number;
  pages: number;
};

describe('the time budget of the activity log count on PostgreSQL', () => {
  if (!TEST_POSTGRES_URL) {
    reportSkipped('activity log count budget', 'SVC_TEST_POSTGRES_URL is not set');
    return;
  }
  let created: { url: string; drop(): Promise<void> };
  /** The same database served twice: with a budget no count meets, and with the default one. */
  let budgeted: TestApp;
  let exact: TestApp;
  let admin: LoggedInClient;

  async function logs(app: TestApp, query: string): Promise<Page> {
    const res = await app.as(admin.accessToken).get(`/api/admin/audit/logs?${query}`);
    expect({ query, status: res.status }).toEqual({ query, status: 200 });
    return res.body.data as Page;
  }
  const ids = (page: Page) => page.items.map((item) => item.id);

  beforeAll(async () => {
    created = await createPostgresDatabase();
    const database: TestDatabase = { dialect: 'pg', label: 'postgres', url: created.url };
    const settings = { activity_log_enabled: true };
    budgeted = await startTestApp({
      database,
      settings,
      coreModules: coreModules.map((m) => (m.name === 'audit' ? createAuditModule({ countBudgetMs: 1 }) : m)),
    });
    exact = await startTestApp({ database, settings });
    admin = await budgeted.loginAs(await budgeted.createUser({ username: 'root', isSuperuser: true }));
    await budgeted.app.runtime.ports.get('activity').recent(1); // the login's entry is written first
    const db = budgeted.app.runtime.authDb;
    const table = (budgeted.app.runtime.tables.audit as { activityLog: ActivityLogTable }).activityLog;
    await db.orm.delete(table);
    await db.all(sql`insert into ${table} (timestamp, username, method, path, status_code, duration_ms)
      select timestamp '2026-01-01' + n * interval '1 second', 'bulk',
        case when n % 2 = 0 then 'DELETE' else 'POST' end,
        case when n % 4 = 0 and n % 16 <> 0 then '/api/auth/refresh-token' else '/api/notes/' || (n % 40) end,
        case when n % 4 = 0 then 404 else 200 end, n % 11
      from generate_series(1, ${ENTRIES}) as n`);
    await db.all(sql`update ${table} set status_code = 418 where id in (
      select id from ${table} where status_code = 200 order by id limit ${TEAPOTS})`);
  }, 120_000);
  afterAll(async () => {
    await budgeted?.close();
    await exact?.close();
    await created?.drop();
  });

  it('answers a full page whose count ran out of time with one more than its end: a next page follows', async () => {
    const first = await logs(budgeted, 'statusCode=404&pageSize=50');
    expect(first).toMatchObject({ total: 51, page: 1, pageSize: 50, pages: 2 });
    expect(ids(first)).toEqual(ids(await logs(exact, 'statusCode=404&pageSize=50')));
    expect(first.items.every((item) => item.statusCode === 404)).toBe(true);

    const third = await logs(budgeted, 'statusCode=404&pageSize=50&page=3');
    expect(third).toMatchObject({ total: 151, page: 3, pages: 4 });
    expect(ids(third)).toEqual(ids(await logs(exact, 'statusCode=404&pageSize=50&page=3')));

    // Keyset continuation: the page position is that of `page` after the entry.
    const after = first.items.at(-1)!.id;
    const next = await logs(budgeted, `statusCode=404&pageSize=50&after=${after}`);
    expect(next).toMatchObject({ total: 51, page: 1, pages: 2 });
    expect(ids(next)).toEqual(ids(await logs(exact, 'statusCode=404&pageSize=50&page=2')));

    // Few paths, each read through its own index range (the count runs beside the page).
    const byPath = await logs(budgeted, 'pathContains=notes&pageSize=50');
    expect(byPath).toMatchObject({ total: 51, pages: 2 });
    expect(ids(byPath)).toEqual(ids(await logs(exact, 'pathContains=notes&pageSize=50')));
  });

  it('answers a page past the end whose count ran out of time with the entries before it', async () => {
    const page = 1_000; // 49,950 entries before it, 5,000 match
    expect(await logs(budgeted, `statusCode=404&pageSize=50&page=${page}`)).toMatchObject({
      items: [],
      total: (page - 1) * 50,
      pages: page - 1,
    });
  });

  it('keeps the exact totals of pages that end short, and of counts within the budget', async () => {
    expect(await logs(budgeted, 'statusCode=418&pageSize=50')).toMatchObject({ total: TEAPOTS, pages: 1 });
    expect(await logs(budgeted, 'statusCode=299&pageSize=50')).toMatchObject({ total: 0, pages: 0 });
    // The default budget: the same counts, run to their end.
    const first = await logs(exact, 'statusCode=404&pageSize=50');
    expect(first).toMatchObject({ total: NOT_FOUND, pages: NOT_FOUND / 50 });
    expect(await logs(exact, 'statusCode=404&pageSize=50&page=3')).toMatchObject({ total: NOT_FOUND });
    expect(await logs(exact, 'statusCode=404&pageSize=50&page=1000')).toMatchObject({
      items: [],
      total: NOT_FOUND,
      pages: NOT_FOUND / 50,
    });
    expect(await logs(exact, `statusCode=404&pageSize=50&after=${first.items.at(-1)!.id}`)).toMatchObject({
      total: NOT_FOUND,
    });
    expect(await logs(exact, 'pathContains=notes&pageSize=50')).toMatchObject({
      total: TOTAL_COUNT_BOUND + 1,
    });
  });

  it('leaves the database ready: a count over its budget is no fault of the database', async () => {
    await logs(budgeted, 'statusCode=404&pageSize=50');
    const ready = await budgeted.get('/api/health/ready');
    expect(ready.status).toBe(200);
  });
});
