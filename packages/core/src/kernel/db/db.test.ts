import BetterSqlite3 from 'better-sqlite3';
import { eq, inArray, sql } from 'drizzle-orm';
import { createAuthSchema } from '../../app/create-app.js';
import { buildAuthSchema } from '../../app/auth-schema.js';
import { SettingsSchema } from '../config/schema.js';
import { mapDatabaseError, NO_ANSWER_CODE } from '../errors/format.js';
import { createLogger } from '../log/logger.js';
import {
  createPostgresDatabase,
  describeEachDatabase,
  reportSkipped,
  TEST_POSTGRES_URL,
} from '../../testing/each.js';
import { openDatabase, sqlitePath, type Database } from './database.js';
import { createLongReads } from './sqlite-reader.js';
import { placeholderFor } from './sql.js';
import { coreTables, type CoreTables } from './tables.js';

const log = createLogger({ level: 'CRITICAL', format: 'text' });

describeEachDatabase('database layer', (database) => {
  const settings = SettingsSchema.parse({ table_prefix: 'app_', user_table: 'people', db_pool_size: 2 });
  let db: Database;
  let t: CoreTables;
  beforeAll(async () => {
    db = openDatabase({ url: database.url, settings, log });
    t = coreTables(settings, db.dialect);
    await createAuthSchema(db, buildAuthSchema(settings, db.dialect));
  });
  afterAll(() => db.close());

  it('names tables from table_prefix and the *_table settings', async () => {
    const names =
      db.dialect === 'pg'
        ? (
            await db.all<{ name: string }>(
              sql`select table_name as name from information_schema.tables where table_schema = 'public'`,
            )
          ).map((r) => r.name)
        : (await db.all<{ name: string }>(sql`select name from sqlite_master where type = 'table'`)).map(
            (r) => r.name,
          );
    expect(names).toEqual(
      expect.arrayContaining([
        'people',
        'app_group',
        'app_permission',
        'app_refresh_token',
        'app_user_settings',
      ]),
    );
    expect(names).not.toContain('app_user');
  });

  it('creates the schema idempotently', async () => {
    await expect(createAuthSchema(db, buildAuthSchema(settings, db.dialect))).resolves.toBeUndefined();
  });

  it('enforces foreign keys and cascades deletes', async () => {
    const [user] = await db.orm.insert(t.user).values({ username: 'fk', passwordHash: 'x' }).returning();
    const [group] = await db.orm.insert(t.group).values({ name: 'g1' }).returning();
    await db.orm.insert(t.userGroup).values({ userId: user!.id, groupId: group!.id });
    const dangling = db.orm.insert(t.userGroup).values({ userId: user!.id, groupId: 999999 }).returning();
    const error = await dangling.then(
      () => null,
      (e: unknown) => e,
    );
    expect(mapDatabaseError(error)?.code).toBe('db.invalid_value');
    await db.orm.delete(t.user).where(eq(t.user.id, user!.id)).returning();
    expect(await db.orm.select().from(t.userGroup).where(eq(t.userGroup.groupId, group!.id))).toEqual([]);
  });

  it('maps unique violations to db.conflict', async () => {
    await db.orm.insert(t.permission).values({ codename: 'dup.x' }).returning();
    const error = await db.orm
      .insert(t.permission)
      .values({ codename: 'dup.x' })
      .returning()
      .then(
        () => null,
        (e: unknown) => e,
      );
    expect(mapDatabaseError(error)?.code).toBe('db.conflict');
  });

  it('round-trips booleans, dates and JSON alike on both dialects', async () => {
    const at = new Date('2026-01-02T03:04:05.678Z');
    const [user] = await db.orm
      .insert(t.user)
      .values({ username: 'types', passwordHash: 'x', isStaff: true, lastLoginAt: at })
      .returning();
    expect(user).toMatchObject({
      isStaff: true,
      isSuperuser: false,
      isActive: true,
      lastLoginAt: at,
      email: null,
    });
    expect(user!.createdAt).toBeInstanceOf(Date);
    await db.orm.insert(t.userSettings).values({ userId: user!.id, data: { appearance: { theme: 'dark' } } });
    const [row] = await db.orm.select().from(t.userSettings).where(eq(t.userSettings.userId, user!.id));
    expect(row!.data).toEqual({ appearance: { theme: 'dark' } });
  });

  it('runs a kept statement with placeholders again with other values, dates encoded as its columns', async () => {
    const [a] = await db.orm.insert(t.user).values({ username: 'kept-a', passwordHash: 'x' }).returning();
    const [b] = await db.orm.insert(t.user).values({ username: 'kept-b', passwordHash: 'x' }).returning();
    // One statement object, as a hot path keeps it (sql.ts `compiledWith`): compiled once, filled per call.
    const kept = db.orm
      .update(t.user)
      .set({
        lastName: placeholderFor(t.user.lastName, 'name'),
        lastLoginAt: placeholderFor(t.user.lastLoginAt, 'at'),
      })
      .where(eq(t.user.id, placeholderFor(t.user.id, 'id')))
      .returning({ id: t.user.id })
      .getSQL();
    const first = new Date('2026-03-04T05:06:07.891Z');
    const second = new Date('2026-05-06T07:08:09.123Z');
    expect(await db.allPrepared(kept, { id: a!.id, name: 'First', at: first })).toEqual([{ id: a!.id }]);
    expect(await db.allPrepared(kept, { id: b!.id, name: 'Second', at: second })).toEqual([{ id: b!.id }]);
    const rows = await db.orm
      .select()
      .from(t.user)
      .where(inArray(t.user.id, [a!.id, b!.id]));
    const byName = Object.fromEntries(rows.map((row) => [row.username, row]));
    expect(byName['kept-a']).toMatchObject({ lastName: 'First', lastLoginAt: first });
    expect(byName['kept-b']).toMatchObject({ lastName: 'Second', lastLoginAt: second });
    // A null is written as null, not through the column's encoder.
    expect(await db.allPrepared(kept, { id: a!.id, name: 'Third', at: null })).toEqual([{ id: a!.id }]);
    const [third] = await db.orm.select().from(t.user).where(eq(t.user.id, a!.id));
    expect(third).toMatchObject({ lastName: 'Third', lastLoginAt: null });
  });

  it('answers a read planned per run with the same rows as a kept one', async () => {
    await db.orm.insert(t.user).values({ username: 'planned-rows', passwordHash: 'x' });
    const query = sql`select ${t.user.username} as username, count(*) over () as n from ${t.user} where ${t.user.username} like ${'planned-%'}`;
    const rows = await db.allPlanned<{ username: string; n: number | string }>(query);
    expect(rows.map((row) => [row.username, Number(row.n)])).toEqual([['planned-rows', 1]]);
    expect(await db.allPlanned(query)).toEqual(await db.all(query));
  });

  it('rolls a failed transaction back', async () => {
    await expect(
      db.transaction(async (tx) => {
        await tx.insert(t.group).values({ name: 'tx-group' }).returning();
        throw new Error('abort');
      }),
    ).rejects.toThrow('abort');
    expect(await db.orm.select().from(t.group).where(eq(t.group.name, 'tx-group'))).toEqual([]);
    await db.transaction(async (tx) => tx.insert(t.group).values({ name: 'tx-group' }).returning());
    expect(await db.orm.select().from(t.group).where(eq(t.group.name, 'tx-group'))).toHaveLength(1);
  });

  it('answers ping', async () => {
    expect(await db.ping(3000)).toBe(true);
  });

  it('sizes the server pool from db_pool_size + db_max_overflow and db_pool_recycle', () => {
    if (db.dialect !== 'pg') {
      expect(db.native).toBeInstanceOf(BetterSqlite3); // a file database has no pool
      return;
    }
    const options = (db.native as { options: { max: number; max_lifetime: number | null } }).options;
    expect(options.max).toBe(2 + 10);
    expect(options.max_lifetime).toBe(1800);
  });
});

describe('SQLite connection settings (docs/performance.md "SQLite settings")', () => {
  it('runs in WAL mode with synchronous, busy_timeout and foreign keys set', async () => {
    const { createSqliteDatabase } = await import('../../testing/each.js');
    const file = createSqliteDatabase();
    for (const [mode, expected] of [
      ['NORMAL', 1],
      ['FULL', 2],
    ] as const) {
      const db = openDatabase({
        url: file.url,
        settings: SettingsSchema.parse({ sqlite_synchronous: mode }),
        log,
      });
      const client = db.native as BetterSqlite3.Database;
      expect(client.pragma('journal_mode', { simple: true })).toBe('wal');
      expect(client.pragma('synchronous', { simple: true })).toBe(expected);
      expect(client.pragma('busy_timeout', { simple: true })).toBe(5000);
      expect(client.pragma('foreign_keys', { simple: true })).toBe(1);
      await db.close();
    }
    await file.drop();
  });

  it("lowers the server's busy_timeout to db_statement_timeout_seconds, never above 5 s", async () => {
    const { createSqliteDatabase } = await import('../../testing/each.js');
    const file = createSqliteDatabase();
    for (const [seconds, expected] of [
      [2, 2000],
      [10, 5000],
    ] as const) {
      const settings = SettingsSchema.parse({ db_statement_timeout_seconds: seconds });
      const server = openDatabase({ url: file.url, settings, log, server: true });
      const maintenance = openDatabase({ url: file.url, settings, log });
      expect((server.native as BetterSqlite3.Database).pragma('busy_timeout', { simple: true })).toBe(
        expected,
      );
      expect((maintenance.native as BetterSqlite3.Database).pragma('busy_timeout', { simple: true })).toBe(
        5000,
      );
      await server.close();
      await maintenance.close();
    }
    await file.drop();
  });

  it('resolves file URLs relative to the project directory', () => {
    expect(sqlitePath('file:./auth.db', '/srv/app')).toBe('/srv/app/auth.db');
    expect(sqlitePath('file:auth.db', '/srv/app')).toBe('/srv/app/auth.db');
    expect(sqlitePath('file:///var/db/auth.db', '/srv/app')).toBe('/var/db/auth.db');
    expect(sqlitePath('file:/var/db/auth.db?mode=rwc', '/srv/app')).toBe('/var/db/auth.db');
  });
});

// SPEC "Errors": a database the request cannot use answers 503 db.unavailable, whatever the driver says.
describe('database faults', () => {
  it.each([
    ['57014', 'PostgreSQL statement_timeout or cancel'],
    ['55P03', 'PostgreSQL lock_timeout or NOWAIT'],
    [NO_ANSWER_CODE, 'no answer within the client-side bound'],
    ['SQLITE_IOERR_WRITE', 'a write the file system refused'],
    ['SQLITE_IOERR_SHMSIZE', 'the shared-memory file could not grow'],
    ['SQLITE_READONLY', 'a read-only file'],
    ['SQLITE_READONLY_DBMOVED', 'a file moved under the connection'],
    ['SQLITE_FULL', 'a full disk'],
    ['SQLITE_CORRUPT', 'a damaged file'],
    ['SQLITE_NOTADB', 'a file that is not a database'],
  ])('maps %s (%s) to db.unavailable, also as a cause', (code) => {
    const error = Object.assign(new Error('driver error'), { code });
    expect(mapDatabaseError(error)?.code).toBe('db.unavailable');
    expect(mapDatabaseError(new Error('wrapped', { cause: error }))?.code).toBe('db.unavailable');
  });
});

// docs/activity-log.md "Large logs": the bounded counts of the activity log run within a time budget.
describe('a PostgreSQL read within a time budget', () => {
  if (!TEST_POSTGRES_URL) {
    reportSkipped('a PostgreSQL read within a time budget', 'SVC_TEST_POSTGRES_URL is not set');
    return;
  }
  let created: { url: string; drop(): Promise<void> };
  let db: Database;
  beforeAll(async () => {
    created = await createPostgresDatabase();
    // One connection: the statements after the budgeted ones run where those ran.
    const settings = SettingsSchema.parse({ db_pool_size: 1, db_max_overflow: 0 });
    db = openDatabase({ url: created.url, settings, log, server: true });
  });
  afterAll(async () => {
    await db.close();
    await created.drop();
  });

  it('answers undefined for a query its budget stopped, throws any other error, and leaves the connection as it was', async () => {
    const within = db.allWithin!.bind(db);
    expect(await within(sql`select 1 as n`, 1_000)).toEqual([{ n: 1 }]);
    expect(await within(sql`select pg_sleep(2)`, 20)).toBeUndefined();
    await expect(within(sql`select 1 / ${0}::int as n`, 1_000)).rejects.toMatchObject({ code: '22012' });
    expect(await within(sql`select 2 as n`, 1_000)).toEqual([{ n: 2 }]);
    // SET LOCAL ended with each transaction: the connection has the server's bound again, and no transaction.
    expect(await db.all(sql`show statement_timeout`)).toEqual([{ statement_timeout: '10s' }]);
    expect(await db.all(sql`select now() = statement_timestamp() as outside`)).toEqual([{ outside: true }]);
    // A query stopped by the budget it asked for is no fault of the database: the probe stays ready.
    expect(await db.ping(3_000)).toBe(true);
  });

  // docs/performance.md "One process a statement": no parallel workers on the server's connections, even for
  // a plan PostgreSQL would otherwise run in parallel (made so here by costing parallelism at nothing).
  it('plans no parallel workers on the server’s connections', async () => {
    // Unnamed (allPlanned): the test below reads which statements the connection keeps prepared.
    expect(await db.allPlanned(sql`show max_parallel_workers_per_gather`)).toEqual([
      { max_parallel_workers_per_gather: '0' },
    ]);
    await db.exec(
      'set parallel_setup_cost = 0; set parallel_tuple_cost = 0; set min_parallel_table_scan_size = 0',
    );
    try {
      const plan = await db.allPlanned<{ 'QUERY PLAN': string }>(
        sql`explain select count(*) from pg_class where relname like ${'%a%'}`,
      );
      expect(plan.map((row) => row['QUERY PLAN']).join('\n')).not.toMatch(/Gather|Parallel/);
    } finally {
      await db.exec(
        'reset parallel_setup_cost; reset parallel_tuple_cost; reset min_parallel_table_scan_size',
      );
    }
  });

  // docs/performance.md "The console's lists at a million users": a statement kept prepared may be run with a
  // generic plan from its sixth run on; the long reads (searches, filters, their counts) are planned for their
  // values every time. Seen from the one connection's prepared statements (pg_prepared_statements).
  it('sends the long reads unnamed, planned for their values on every run, and keeps other statements prepared', async () => {
    const settings = SettingsSchema.parse({});
    const t = coreTables(settings, db.dialect);
    await createAuthSchema(db, buildAuthSchema(settings, db.dialect));
    const created = new Date('2026-11-27T12:00:00.000Z');
    await db.orm.insert(t.user).values({
      id: 'b3f1c1de-0000-4000-8000-000000000001',
      username: 'planned',
      passwordHash: '!',
      createdAt: created,
    });
    const kept = async () =>
      (await db.all<{ statement: string }>(sql`select statement from pg_prepared_statements`)).map(
        (r) => r.statement,
      );
    const reads = createLongReads(db);
    for (let run = 0; run < 7; run++) {
      const rows = await reads.rows(
        t.user,
        db.orm
          .select()
          .from(t.user)
          .where(sql`lower(${t.user.username}) like ${'%lann%'}`),
      );
      // Mapped as drizzle maps them.
      expect(rows).toEqual([
        expect.objectContaining({ username: 'planned', createdAt: created, isActive: true }),
      ]);
      expect(
        await reads.number(
          sql`select count(*) from ${t.user} where lower(${t.user.username}) like ${'%lann%'}`,
        ),
      ).toBe(1);
      expect(
        await reads.numberWithin(
          sql`select count(*) from ${t.user} where ${t.user.username} like ${'plan%'}`,
          1_000,
        ),
      ).toBe(1);
    }
    await db.all(sql`select ${1}::int as ordinary`);
    const statements = await kept();
    expect(statements.filter((text) => text.includes('like'))).toEqual([]);
    // Other statements are kept: the check above would see a long read kept prepared.
    expect(statements).toContain('select $1::int as ordinary');
  });
});
