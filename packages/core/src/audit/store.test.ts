import { Writable } from 'node:stream';
import { asc } from 'drizzle-orm';
import { createAuthSchema } from '../app/create-app.js';
import { SettingsSchema } from '../kernel/config/schema.js';
import { openDatabase, type Database } from '../kernel/db/database.js';
import { createLogger } from '../kernel/log/logger.js';
import { describeEachDatabase } from '../testing/each.js';
import { createActivityStore } from './store.js';
import { activityLogTable, type NewActivity } from './tables.js';

const silent = createLogger({
  level: 'CRITICAL',
  format: 'text',
  stream: new Writable({ write: (_c, _e, cb) => cb() }),
});

describeEachDatabase('Activity store batch insert', (database) => {
  const settings = SettingsSchema.parse({});
  let db: Database;
  let store: ReturnType<typeof createActivityStore>;
  let table: ReturnType<typeof activityLogTable>;
  beforeAll(async () => {
    db = openDatabase({ url: database.url, settings, log: silent });
    table = activityLogTable(settings, db.dialect);
    await createAuthSchema(db, { activityLog: table });
    store = createActivityStore(db, table);
  });
  afterAll(() => db.close());

  const entry = (i: number, extra: Partial<NewActivity> = {}): NewActivity => ({
    timestamp: new Date(Date.UTC(2026, 10, 24, 10, 0, i)),
    userId: '13f1a0d0-5c70-4864-aae5-38fcf76ddc7c',
    username: 'reader',
    method: 'POST',
    path: `/api/notes/${i}/archive`,
    statusCode: 200,
    durationMs: i,
    description: `archived ${i} by reader`,
    impersonatorId: null,
    ...extra,
  });

  it('stores every entry of a batch with its values, absent optional fields as null', async () => {
    await store.insertMany([
      entry(1),
      entry(2, { userId: null, username: null, description: null }),
      entry(3, { userId: undefined, username: undefined, description: undefined, impersonatorId: undefined }),
      // SPEC-3 §4: the impersonating superuser.
      entry(4, { impersonatorId: '5a0b6d2e-8f3c-4e21-9d4a-7b6c5d4e3f21' }),
    ]);
    const rows = await db.orm.select().from(table).orderBy(asc(table.id));
    expect(rows.map(({ id: _id, ...rest }) => rest)).toEqual([
      entry(1),
      entry(2, { userId: null, username: null, description: null }),
      entry(3, { userId: null, username: null, description: null }),
      entry(4, { impersonatorId: '5a0b6d2e-8f3c-4e21-9d4a-7b6c5d4e3f21' }),
    ]);
  });

  it('stores text as it was given: quotes, backslashes, JSON and array syntax, other scripts, milliseconds', async () => {
    const odd = [
      `"quoted" and 'single', back\\slash \\" {a,b} [1,2] {"k":"v"} NULL null`,
      'Zoë, 漢字, emoji 🙂, tab\tand newline\n',
      '',
    ];
    const batch = odd.map((text, i) =>
      entry(20 + i, {
        timestamp: new Date(Date.UTC(2026, 10, 24, 10, 0, 20 + i, 123 + i)),
        username: text === '' ? null : text.slice(0, 20),
        path: `/api/${text}`,
        description: text,
      }),
    );
    await store.insertMany(batch);
    const rows = await db.orm.select().from(table).orderBy(asc(table.id));
    expect(rows.slice(-batch.length).map(({ id: _id, ...rest }) => rest)).toEqual(batch);
  });

  it('stores all entries of a batch or none', async () => {
    const before = (await db.orm.select().from(table)).length;
    const broken = entry(5, { method: null as unknown as string });
    // (The driver's error can come from another realm than jest's, which `rejects.toThrow` does not take.)
    const outcome = store.insertMany([entry(4), broken, entry(6)]).then(
      () => 'stored',
      () => 'refused',
    );
    await expect(outcome).resolves.toBe('refused');
    expect(await db.orm.select().from(table)).toHaveLength(before);
    await store.insertMany([entry(4), entry(6)]);
    expect(await db.orm.select().from(table)).toHaveLength(before + 2);
  });
});
