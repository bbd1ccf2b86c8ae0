import { and, count, eq, gte, inArray, lt, lte, or, sql, type SQL, type SQLWrapper } from 'drizzle-orm';
import type { Database } from '../kernel/db/database.js';
import { likePattern } from '../kernel/pagination.js';
import type { ActivityLogTable, NewActivity, StoredActivity } from './tables.js';

/** The `orderBy` names of the audit routes (camelCase; snake_case accepted by `resolveOrderBy`). */
export function sortableActivityColumns(table: ActivityLogTable) {
  return {
    id: table.id,
    timestamp: table.timestamp,
    userId: table.userId,
    username: table.username,
    method: table.method,
    path: table.path,
    statusCode: table.statusCode,
    durationMs: table.durationMs,
  };
}
export type SortableActivityColumn = ReturnType<typeof sortableActivityColumns>[keyof ReturnType<
  typeof sortableActivityColumns
>];

/** The filters of both audit routes (SPEC "Audit routes"), already resolved. */
export interface ActivityFilters {
  search?: string;
  userId?: string;
  method?: string;
  statusCode?: number;
  /** Inclusive bounds. */
  dateFrom?: Date;
  dateTo?: Date;
  pathContains?: string;
  /** Entries whose path contains any of these are left out of the result. */
  excludePaths: string[];
}

export interface ActivityListOptions {
  filters: ActivityFilters;
  orderBy: SortableActivityColumn;
  descending: boolean;
  limit: number;
  offset: number;
}

/** Every query on the activity log table (STYLE "A feature is one folder": store.ts). */
export function createActivityStore(db: Database, table: ActivityLogTable) {
  const orm = db.orm;
  // SQLite (docs/performance.md): one prepared single-row INSERT run for each entry in one transaction costs 5 to 7 us an
  // entry, where drizzle building a multi-row INSERT (and SQLite compiling it, its text changing with the batch
  // size) cost 23 to 29 us. PostgreSQL keeps the one multi-row statement: one round trip a batch.
  const insertOne =
    db.dialect === 'sqlite'
      ? orm
          .insert(table)
          .values({
            timestamp: sql.placeholder('timestamp'),
            userId: sql.placeholder('userId'),
            username: sql.placeholder('username'),
            method: sql.placeholder('method'),
            path: sql.placeholder('path'),
            statusCode: sql.placeholder('statusCode'),
            durationMs: sql.placeholder('durationMs'),
            description: sql.placeholder('description'),
          })
          .prepare()
      : undefined;

  /** Case-sensitive substring test, the same on both dialects (LIKE is case-insensitive on SQLite). */
  function contains(column: SQLWrapper, text: string): SQL {
    return db.dialect === 'pg' ? sql`strpos(${column}, ${text}) > 0` : sql`instr(${column}, ${text}) > 0`;
  }

  function where(filters: ActivityFilters): SQL | undefined {
    const conditions: (SQL | undefined)[] = [];
    const search = filters.search?.trim();
    if (search) {
      const pattern = likePattern(search);
      const like = (column: SQLWrapper) => sql`lower(${column}) like ${pattern} escape '\\'`;
      conditions.push(or(like(sql`coalesce(${table.username}, '')`), like(table.path)));
    }
    if (filters.userId !== undefined) conditions.push(eq(table.userId, filters.userId));
    if (filters.method !== undefined) conditions.push(eq(table.method, filters.method));
    if (filters.statusCode !== undefined) conditions.push(eq(table.statusCode, filters.statusCode));
    if (filters.dateFrom) conditions.push(gte(table.timestamp, filters.dateFrom));
    if (filters.dateTo) conditions.push(lte(table.timestamp, filters.dateTo));
    if (filters.pathContains) conditions.push(contains(table.path, filters.pathContains));
    for (const fragment of filters.excludePaths)
      conditions.push(sql`not (${contains(table.path, fragment)})`);
    return and(...conditions);
  }

  return {
    /** All entries or none: one transaction of prepared INSERTs on SQLite, one multi-row INSERT on PostgreSQL. */
    async insertMany(entries: NewActivity[]): Promise<void> {
      if (entries.length === 0) return;
      if (!insertOne) {
        await orm.insert(table).values(entries);
        return;
      }
      // Run synchronously (better-sqlite3): nothing else runs on the connection between the inserts.
      await db.transaction(async () => {
        for (const entry of entries) {
          // A placeholder must get a value: the optional fields an entry may leave out are null.
          const { userId = null, username = null, description = null } = entry;
          insertOne.run({ ...entry, userId, username, description });
        }
      });
    },

    async list(options: ActivityListOptions): Promise<{ rows: StoredActivity[]; total: number }> {
      const condition = where(options.filters);
      const direction = options.descending ? sql`desc` : sql`asc`;
      // NULLS LAST on both dialects and the id (in the same direction) as tie-breaker keep pages stable.
      const [rows, [totalRow]] = await Promise.all([
        orm
          .select()
          .from(table)
          .where(condition)
          .orderBy(sql`${options.orderBy} ${direction} nulls last`, sql`${table.id} ${direction}`)
          .limit(options.limit)
          .offset(options.offset),
        orm.select({ total: count() }).from(table).where(condition),
      ]);
      return { rows, total: Number(totalRow?.total ?? 0) };
    },

    /** The last `limit` entries, newest first. */
    async latest(limit: number): Promise<StoredActivity[]> {
      return orm
        .select()
        .from(table)
        .orderBy(sql`${table.timestamp} desc`, sql`${table.id} desc`)
        .limit(limit);
    },

    async countOlderThan(cutoff: Date): Promise<number> {
      const [row] = await orm.select({ total: count() }).from(table).where(lt(table.timestamp, cutoff));
      return Number(row?.total ?? 0);
    },

    /** Deletes at most `batchSize` entries older than `cutoff` (oldest first); returns how many went. */
    async deleteOlderThan(cutoff: Date, batchSize: number): Promise<number> {
      const ids = orm
        .select({ id: table.id })
        .from(table)
        .where(lt(table.timestamp, cutoff))
        .orderBy(table.timestamp)
        .limit(batchSize);
      const deleted = await orm.delete(table).where(inArray(table.id, ids)).returning({ id: table.id });
      return deleted.length;
    },
  };
}

export type ActivityStore = ReturnType<typeof createActivityStore>;
