import { Writable } from 'node:stream';
import { asc, inArray, sql } from 'drizzle-orm';
import { createAuthSchema } from '../app/create-app.js';
import { SettingsSchema } from '../kernel/config/schema.js';
import { openDatabase, type Database } from '../kernel/db/database.js';
import { createLogger } from '../kernel/log/logger.js';
import { createSqliteDatabase } from '../testing/each.js';
import { createActivityStore, type ActivityListOptions } from './store.js';
import { activityLogTable, type NewActivity } from './tables.js';

// docs/activity-log.md "Large logs": on the file database the text index of `search` covers the distinct
// usernames and paths of the log (the terms), kept by triggers, instead of every entry.

const silent = createLogger({
  level: 'CRITICAL',
  format: 'text',
  stream: new Writable({ write: (_c, _e, cb) => cb() }),
});
const settings = SettingsSchema.parse({});

const entry = (i: number, username: string | null, path: string): NewActivity => ({
  timestamp: new Date(Date.UTC(2026, 10, 25, 6, 0, i)),
  userId: null,
  username,
  method: 'POST',
  path,
  statusCode: 200,
  durationMs: 1,
  description: null,
});

describe('Text index of the activity log on the file database', () => {
  let file: ReturnType<typeof createSqliteDatabase>;
  let db: Database;
  let table: ReturnType<typeof activityLogTable>;
  let store: ReturnType<typeof createActivityStore>;
  beforeEach(async () => {
    file = createSqliteDatabase();
    db = openDatabase({ url: file.url, settings, log: silent });
    table = activityLogTable(settings, 'sqlite');
    await createAuthSchema(db, { activityLog: table });
    store = createActivityStore(db, table, silent);
  });
  afterEach(async () => {
    await store.close();
    await db.close();
    await file.drop();
  });

  const terms = async () =>
    (
      await db.all<{ kind: number; value: string }>(
        sql`select kind, value from svc_activity_log_terms order by kind, value`,
      )
    ).map((t) => `${t.kind}:${t.value}`);
  const search = async (text: string, field: 'search' | 'pathContains' = 'search') => {
    const options: ActivityListOptions = {
      filters: { [field]: text, excludePaths: [] },
      orderBy: table.id,
      descending: false,
      limit: 100,
      offset: 0,
    };
    return (await store.list(options)).rows.map((r) => r.id);
  };

  it('holds each distinct username and path once, follows inserts, updates and deletes, and finds through them', async () => {
    await store.ensureTextIndex();
    await store.insertMany([
      entry(1, 'alice', '/api/notes/1/archive'),
      entry(2, 'alice', '/api/notes/1/archive'),
      entry(3, null, '/api/auth/token'),
      entry(4, 'Bob', '/api/notes/2/archive'),
    ]);
    expect(await terms()).toEqual([
      '0:Bob',
      '0:alice',
      '1:/api/auth/token',
      '1:/api/notes/1/archive',
      '1:/api/notes/2/archive',
    ]);
    const ids = (await db.orm.select({ id: table.id }).from(table).orderBy(asc(table.id))).map((r) => r.id);
    expect(await search('ALICE')).toEqual(ids.slice(0, 2));
    expect(await search('bob')).toEqual([ids[3]]);
    expect(await search('notes/')).toEqual([ids[0], ids[1], ids[3]]);
    expect(await search('auth', 'pathContains')).toEqual([ids[2]]);

    // A value goes when its last entry goes (retention purge): nothing of a purged user stays searchable.
    await db.orm.delete(table).where(inArray(table.id, [ids[0]!, ids[3]!]));
    expect(await terms()).toEqual(['0:alice', '1:/api/auth/token', '1:/api/notes/1/archive']);
    await db.orm
      .update(table)
      .set({ username: 'carol', path: '/api/x/1' })
      .where(inArray(table.id, [ids[1]!]));
    expect(await terms()).toEqual(['0:carol', '1:/api/auth/token', '1:/api/x/1']);
    expect(await search('alice')).toEqual([]);
    expect(await search('bob')).toEqual([]);
    expect(await search('caro')).toEqual([ids[1]]);
    expect(await search('notes')).toEqual([]);
  });

  it('replaces the index of an earlier release (FTS5 over every entry) and builds the terms from the log', async () => {
    await store.insertMany([entry(1, 'alice', '/api/notes/1/archive'), entry(2, 'dave', '/api/auth/token')]);
    // The earlier release's index, as it created it.
    const legacy = [
      `CREATE VIRTUAL TABLE "svc_activity_log_search" USING fts5(username, path, content="svc_activity_log", content_rowid='id', tokenize='trigram')`,
      `CREATE TRIGGER "svc_activity_log_search_insert" AFTER INSERT ON "svc_activity_log" BEGIN INSERT INTO "svc_activity_log_search"(rowid, username, path) VALUES (new.id, new.username, new.path); END`,
      `CREATE TRIGGER "svc_activity_log_search_delete" AFTER DELETE ON "svc_activity_log" BEGIN INSERT INTO "svc_activity_log_search"("svc_activity_log_search", rowid, username, path) VALUES ('delete', old.id, old.username, old.path); END`,
      `CREATE TRIGGER "svc_activity_log_search_update" AFTER UPDATE ON "svc_activity_log" BEGIN INSERT INTO "svc_activity_log_search"("svc_activity_log_search", rowid, username, path) VALUES ('delete', old.id, old.username, old.path); INSERT INTO "svc_activity_log_search"(rowid, username, path) VALUES (new.id, new.username, new.path); END`,
      `INSERT INTO "svc_activity_log_search"("svc_activity_log_search") VALUES ('rebuild')`,
    ];
    for (const statement of legacy) await db.exec(statement);

    await store.ensureTextIndex();
    const names = await db.all<{ name: string }>(
      sql`select name from sqlite_master where name like 'svc_activity_log_search%' order by name`,
    );
    expect(names).toEqual([]);
    expect(await terms()).toEqual(['0:alice', '0:dave', '1:/api/auth/token', '1:/api/notes/1/archive']);
    expect(await search('dav')).toHaveLength(1);
    // Entries still delete and insert without the dropped triggers' table.
    await db.orm.delete(table);
    await store.insertMany([entry(3, 'erin', '/api/y')]);
    expect(await terms()).toEqual(['0:erin', '1:/api/y']);
  });
});
