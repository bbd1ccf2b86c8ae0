import { Writable } from 'node:stream';
import { SettingsSchema } from '../config/schema.js';
import { createLogger } from '../log/logger.js';
import { createPostgresDatabase, reportSkipped, TEST_POSTGRES_URL } from '../../testing/each.js';
import { openDatabase, type Database } from './database.js';
import { buildTrigramIndexes } from './text-index.js';

const silent = createLogger({
  level: 'ERROR',
  format: 'text',
  stream: new Writable({ write: (_chunk, _encoding, done) => done() }),
});

// docs/performance.md "The console's lists at a million users": a trigram index built on a table that already
// holds rows (the first start after an upgrade, or after a bulk load) comes with statistics on the expression
// it indexes. Without them PostgreSQL guessed 10 matches for any `lower(email) like '%…%'` and read every match
// through the index before sorting (260 ms for "@example.org" over 100,000 users), where walking the order's
// index stops after the page (1 ms). Autovacuum does not analyze a table for a new index.
describe('trigram indexes on PostgreSQL', () => {
  if (!TEST_POSTGRES_URL) {
    reportSkipped('trigram index statistics', 'SVC_TEST_POSTGRES_URL is not set');
    return;
  }
  let created: { url: string; drop(): Promise<void> };
  let db: Database;
  beforeAll(async () => {
    created = await createPostgresDatabase();
    db = openDatabase({ url: created.url, settings: SettingsSchema.parse({}), log: silent });
  });
  afterAll(async () => {
    await db.close();
    await created.drop();
  });

  it('are built with statistics on their expressions, so the planner knows how many rows match', async () => {
    const sql = db.native as unknown as { unsafe(query: string): Promise<Record<string, unknown>[]> };
    await sql.unsafe('CREATE TABLE people (id serial primary key, email text not null)');
    await sql.unsafe(
      `INSERT INTO people (email) SELECT 'person' || n || (CASE WHEN n % 2 = 0 THEN '@example.org' ELSE '@example.com' END) FROM generate_series(1, 2000) n`,
    );
    // The table's own statistics exist (as after any load autovacuum has seen); the index is new.
    await sql.unsafe('ANALYZE people');
    expect(await buildTrigramIndexes(db, 'people', { people_email_trgm: 'lower(email)' }, silent)).toBe(true);
    const stats = await sql.unsafe(`SELECT 1 FROM pg_stats WHERE tablename = 'people_email_trgm'`);
    expect(stats.length).toBeGreaterThan(0);
    const [plan] = await sql.unsafe(
      `EXPLAIN (FORMAT JSON) SELECT id FROM people WHERE lower(email) LIKE '%@example.org%'`,
    );
    const rows = (plan!['QUERY PLAN'] as { Plan: { 'Plan Rows': number } }[])[0]!.Plan['Plan Rows'];
    // Half of the 2,000 rows match: the estimate is of that order, not a handful.
    expect(rows).toBeGreaterThan(500);
  });
});
