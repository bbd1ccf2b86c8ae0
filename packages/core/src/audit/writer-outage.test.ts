import { PassThrough } from 'node:stream';
import { sql } from 'drizzle-orm';
import { createAuthSchema } from '../app/create-app.js';
import { SettingsSchema } from '../kernel/config/schema.js';
import { openDatabase, type Database } from '../kernel/db/database.js';
import { createLogger } from '../kernel/log/logger.js';
import { describeEachDatabase } from '../testing/each.js';
import { createActivityStore } from './store.js';
import { auditTables, type NewActivity } from './tables.js';
import { createActivityWriter } from './writer.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function entry(n: number): NewActivity {
  return { timestamp: new Date(), method: 'POST', path: `/api/x/${n}`, statusCode: 200, durationMs: 1 };
}

// Issue 7 item 2: a database outage is retried with a bounded queue, and what had to be dropped is logged.
// The outage is real: the activity table is renamed away, so every INSERT fails, then renamed back.
describeEachDatabase('activity log write-behind during a database outage', (database) => {
  const settings = SettingsSchema.parse({});
  let db: Database;
  let lines: string[];
  let log: ReturnType<typeof createLogger>;
  const table = () => auditTables(settings, db.dialect).activityLog;
  const count = async () =>
    Number((await db.all<{ n: number }>(sql`select count(*) as n from svc_activity_log`))[0]!.n);
  const hide = () => db.exec('ALTER TABLE svc_activity_log RENAME TO svc_activity_log_away');
  const restore = () => db.exec('ALTER TABLE svc_activity_log_away RENAME TO svc_activity_log');

  beforeAll(async () => {
    const stream = new PassThrough();
    lines = [];
    stream.on('data', (chunk: Buffer) => lines.push(...chunk.toString().split('\n').filter(Boolean)));
    log = createLogger({ level: 'INFO', format: 'text', stream });
    db = openDatabase({ url: database.url, settings, log });
    await createAuthSchema(db, auditTables(settings, db.dialect));
  });
  afterAll(() => db.close());
  beforeEach(async () => {
    await db.exec('DELETE FROM svc_activity_log');
    lines.length = 0;
  });

  it('keeps the entries while inserts fail and writes them all once the database is back', async () => {
    const store = createActivityStore(db, table());
    const writer = createActivityWriter({
      insertMany: (e) => store.insertMany(e),
      log,
      flushIntervalMs: 20,
      batchSize: 10,
    });
    await hide();
    for (let i = 0; i < 25; i++) writer.enqueue(entry(i));
    await sleep(150);
    expect(writer.pending).toBe(25);
    expect(lines.some((l) => /writing 10 entries failed, retrying in 500 ms/.test(l))).toBe(true);
    await restore();
    await sleep(1_200); // the 500 ms back-off, then the batches
    expect(writer.pending).toBe(0);
    expect(await count()).toBe(25);
    expect(lines.some((l) => /database writes recovered/.test(l))).toBe(true);
    await writer.close();
  });

  it('bounds the queue during an outage, drops the oldest and logs how many', async () => {
    const store = createActivityStore(db, table());
    const writer = createActivityWriter({
      insertMany: (e) => store.insertMany(e),
      log,
      flushIntervalMs: 20,
      batchSize: 10,
      maxQueued: 30,
    });
    await hide();
    writer.enqueue(entry(0));
    await sleep(100); // the first attempt fails: the writer is in back-off now
    for (let i = 1; i < 100; i++) writer.enqueue(entry(i));
    expect(writer.pending).toBe(30);
    await restore();
    await sleep(1_200);
    expect(writer.pending).toBe(0);
    expect(await count()).toBe(30);
    const paths = (await db.orm.select().from(table())).map((row) => row.path);
    expect(paths).toContain('/api/x/99'); // the newest are kept
    expect(
      lines.some((l) => /activity log: dropped 70 entries \(queue full while the database failed\)/.test(l)),
    ).toBe(true);
    await writer.close();
  });
});
