import {
  and,
  eq,
  getTableColumns,
  getTableName,
  gt,
  gte,
  inArray,
  isNull,
  lt,
  lte,
  or,
  sql,
  type Column,
  type SQL,
  type SQLWrapper,
} from 'drizzle-orm';
import type { Database } from '../kernel/db/database.js';
import { columnName as column, textContains } from '../kernel/db/sql.js';
import { createLongReads } from '../kernel/db/sqlite-reader.js';
import {
  buildTrigramIndexes,
  textIndexOnce,
  type TextIndexOptions,
  type TextIndexStep,
} from '../kernel/db/text-index.js';
import type { Logger } from '../kernel/log/logger.js';
import { SvcError } from '../kernel/errors/svc-error.js';
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
    impersonatorId: table.impersonatorId,
  };
}
export type SortableActivityColumn = ReturnType<typeof sortableActivityColumns>[keyof ReturnType<
  typeof sortableActivityColumns
>];

/** The filters of both audit routes (SPEC "Audit routes"), already resolved. */
export interface ActivityFilters {
  search?: string;
  userId?: string;
  /** SPEC-3 §4: entries of requests made while this superuser impersonated. */
  impersonatorId?: string;
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
  /** Keyset continuation: the rows that come after the entry with this id in this order. */
  after?: number;
  /** Count the matches up to this many (`total` is then at most this); absent: no count. */
  countUpTo?: number;
  /**
   * PostgreSQL: each count runs under a statement timeout of this many milliseconds; past it, `total` is what
   * the page tells (one more than the entries up to its end when it is full, more may follow). Absent, and on
   * SQLite: the count runs to its bound.
   */
  countBudgetMs?: number;
}

/**
 * The shortest text the trigram text index can look up (SQLite FTS5 `trigram`, PostgreSQL `pg_trgm`); a shorter
 * `search` is a scan.
 */
export const TEXT_INDEX_MIN_LENGTH = 3;

/**
 * PostgreSQL `pathContains`: up to this many matching paths, the page and the count read each path's entries
 * through the (path, timestamp) index; a text in more paths than that (`/api`) matches so much of the log that
 * the newest-first walk of the timestamp index finds a page sooner (docs/performance.md "The console's lists at
 * a million users").
 */
export const PATHS_PER_PATH_READ_MAX = 200;

/** Every query on the activity log table (STYLE "A feature is one folder": store.ts). */
export function createActivityStore(
  db: Database,
  table: ActivityLogTable,
  log?: Logger,
  textIndexOptions: TextIndexOptions = { concurrently: true },
) {
  const orm = db.orm;
  const name = getTableName(table);
  const columns: Record<keyof StoredActivity, Column> = getTableColumns(table);
  // docs/performance.md "Large tables": long reads of a file database run on a worker thread.
  const reads = createLongReads(db);
  /**
   * SQLite's text index (docs/activity-log.md "Large logs"): the distinct usernames and paths of the log
   * (`kind` 0 and 1), kept by triggers on the log, and an FTS5 trigram index over those values. A new entry
   * usually repeats a known user and path, so writing it costs two lookups of the unique index instead of
   * some thirty trigram postings (about 25 µs an entry on the event loop with an FTS5 index over every entry).
   */
  const termsTable = `${name}_terms`;
  const termsSearch = `${name}_terms_search`;
  /** The FTS5 index over every entry that came before the terms (dropped when the terms are built). */
  const entriesSearch = `${name}_search`;
  const USERNAME_TERM = 0;
  const PATH_TERM = 1;
  /**
   * PostgreSQL's counterpart of the path terms: the distinct paths of the log with a pg_trgm index, kept by a
   * statement trigger on the log (one unique-index probe per distinct path of a written batch), so that
   * `pathContains` finds its few paths first instead of testing every entry. Never pruned: a path the purge
   * emptied costs one index probe that finds nothing (pruning would race with a batch logging it again).
   */
  const pathsTable = `${name}_paths`;
  /** The comment of a paths table holding every path of the log (the backfill finished). */
  const PATHS_COMPLETE = 'svc: every path of the activity log';

  // SQLite (docs/performance.md): one prepared single-row INSERT run for each entry in one transaction costs 5 to 7 us an
  // entry, where drizzle building a multi-row INSERT (and SQLite compiling it, its text changing with the batch
  // size) cost 23 to 29 us. PostgreSQL: one statement a batch (`insertBatch`).
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
            impersonatorId: sql.placeholder('impersonatorId'),
          })
          .prepare()
      : undefined;

  /**
   * PostgreSQL: a batch of any size in one statement whose text never changes (the entries as one JSON
   * parameter, turned into rows by `json_to_recordset`), so postgres-js keeps it prepared per connection
   * (`db.all`). drizzle's multi-row INSERT was built per batch (about 50 µs of svc's CPU an entry under load)
   * and its text changed with the batch size, so PostgreSQL parsed and planned every one (docs/performance.md
   * "Fourth round").
   */
  const batchColumns = [
    [table.timestamp, 'timestamptz'],
    [table.userId, 'uuid'],
    [table.username, 'text'],
    [table.method, 'text'],
    [table.path, 'text'],
    [table.statusCode, 'int'],
    [table.durationMs, 'int'],
    [table.description, 'text'],
    [table.impersonatorId, 'uuid'],
  ] as const;
  const columnList = sql.join(
    batchColumns.map(([c]) => column(c)),
    sql`, `,
  );
  const recordType = sql.join(
    batchColumns.map(([c, type]) => sql`${column(c)} ${sql.raw(type)}`),
    sql`, `,
  );
  const insertBatch = (entries: NewActivity[]) => {
    const rows = entries.map((e) => ({
      [table.timestamp.name]: e.timestamp,
      [table.userId.name]: e.userId ?? null,
      [table.username.name]: e.username ?? null,
      [table.method.name]: e.method,
      [table.path.name]: e.path,
      [table.statusCode.name]: e.statusCode,
      [table.durationMs.name]: e.durationMs,
      [table.description.name]: e.description ?? null,
      [table.impersonatorId.name]: e.impersonatorId ?? null,
    }));
    return db.all(sql`INSERT INTO ${table} (${columnList}) SELECT ${columnList}
      FROM json_to_recordset(${JSON.stringify(rows)}::text::json) AS entry(${recordType})`);
  };

  /**
   * The text index of `search` (docs/activity-log.md "Large logs"). SQLite: the terms table and its FTS5 index
   * (trigram tokenizer) above, filled once from the log. PostgreSQL: GIN indexes of pg_trgm on the lower-cased
   * columns the search compares; without the extension, search scans, with a warning. Not in the migrations:
   * drizzle's table definitions cannot hold a virtual table, a trigger or an operator class.
   */
  async function createTextIndex(): Promise<boolean> {
    if (db.dialect === 'sqlite') {
      const q = (s: string) => `"${s.replace(/"/g, '""')}"`;
      const existing = await db.all<{ name: string }>(
        sql`select name from sqlite_master where name = ${termsSearch}`,
      );
      if (existing.length > 0) return true;
      const [log, terms, search] = [q(name), q(termsTable), q(termsSearch)];
      // A new or changed entry's username and path as terms.
      const addNew =
        `INSERT OR IGNORE INTO ${terms}(kind, value) SELECT ${USERNAME_TERM}, new.username WHERE new.username IS NOT NULL; ` +
        `INSERT OR IGNORE INTO ${terms}(kind, value) VALUES (${PATH_TERM}, new.path);`;
      // A deleted or changed entry's terms that no entry holds any more (the (username, timestamp) and
      // (path, timestamp) indexes answer the NOT EXISTS).
      const pruneOld =
        `DELETE FROM ${terms} WHERE kind = ${USERNAME_TERM} AND value = old.username AND NOT EXISTS (SELECT 1 FROM ${log} WHERE username = old.username); ` +
        `DELETE FROM ${terms} WHERE kind = ${PATH_TERM} AND value = old.path AND NOT EXISTS (SELECT 1 FROM ${log} WHERE path = old.path);`;
      await db.transaction(async () => {
        // An index of an earlier release: FTS5 over every entry, kept by three triggers.
        for (const trigger of ['insert', 'delete', 'update'])
          await db.exec(`DROP TRIGGER IF EXISTS ${q(`${entriesSearch}_${trigger}`)}`);
        await db.exec(`DROP TABLE IF EXISTS ${q(entriesSearch)}`);
        await db.exec(
          `CREATE TABLE IF NOT EXISTS ${terms} (id INTEGER PRIMARY KEY, kind INTEGER NOT NULL, value TEXT NOT NULL, UNIQUE (kind, value))`,
        );
        await db.exec(
          `CREATE VIRTUAL TABLE ${search} USING fts5(value, content=${terms}, content_rowid='id', tokenize='trigram')`,
        );
        await db.exec(
          `CREATE TRIGGER ${q(`${termsTable}_insert`)} AFTER INSERT ON ${terms} BEGIN ` +
            `INSERT INTO ${search}(rowid, value) VALUES (new.id, new.value); END`,
        );
        await db.exec(
          `CREATE TRIGGER ${q(`${termsTable}_delete`)} AFTER DELETE ON ${terms} BEGIN ` +
            `INSERT INTO ${search}(${search}, rowid, value) VALUES ('delete', old.id, old.value); END`,
        );
        await db.exec(
          `CREATE TRIGGER ${q(`${termsTable}_entry_insert`)} AFTER INSERT ON ${log} BEGIN ${addNew} END`,
        );
        await db.exec(
          `CREATE TRIGGER ${q(`${termsTable}_entry_delete`)} AFTER DELETE ON ${log} BEGIN ${pruneOld} END`,
        );
        await db.exec(
          `CREATE TRIGGER ${q(`${termsTable}_entry_update`)} AFTER UPDATE OF username, path ON ${log} BEGIN ${addNew} ${pruneOld} END`,
        );
        await db.exec(
          `INSERT OR IGNORE INTO ${terms}(kind, value) SELECT DISTINCT ${USERNAME_TERM}, username FROM ${log} WHERE username IS NOT NULL`,
        );
        await db.exec(
          `INSERT OR IGNORE INTO ${terms}(kind, value) SELECT DISTINCT ${PATH_TERM}, path FROM ${log}`,
        );
      });
      return true;
    }
    return buildTrigramIndexes(
      db,
      name,
      {
        [`${name}_username_trgm_idx`]: `lower(coalesce("username", ''))`,
        [`${name}_path_trgm_idx`]: `lower("path")`,
      },
      log,
      textIndexOptions,
      buildPaths,
    );
  }

  /**
   * PostgreSQL: the paths table, its trigram index and the triggers that keep it, then the paths already
   * logged (the triggers first: an entry written during the backfill is in either). Once, under the text index
   * builds' advisory lock; the comment marks it complete.
   */
  const buildPaths: TextIndexStep = async (run) => {
    const q = (s: string) => `"${s.replace(/"/g, '""')}"`;
    const literal = (s: string) => `'${s.replace(/'/g, "''")}'`;
    const [log, paths, add] = [q(name), q(pathsTable), q(`${pathsTable}_add`)];
    const [state] = await run(`select obj_description(to_regclass(${literal(paths)}), 'pg_class') as note`);
    if (state?.note === PATHS_COMPLETE) return;
    await run(`CREATE TABLE IF NOT EXISTS ${paths} (path text PRIMARY KEY)`);
    await run(
      `CREATE INDEX IF NOT EXISTS ${q(`${pathsTable}_trgm_idx`)} ON ${paths} USING gin (path gin_trgm_ops)`,
    );
    // In path order: two batches adding the same new paths wait on each other instead of deadlocking.
    await run(
      `CREATE OR REPLACE FUNCTION ${add}() RETURNS trigger LANGUAGE plpgsql AS $svc$ BEGIN ` +
        `INSERT INTO ${paths} (path) SELECT DISTINCT path FROM new_entries ORDER BY path ON CONFLICT DO NOTHING; ` +
        `RETURN NULL; END $svc$`,
    );
    for (const event of ['insert', 'update']) {
      const trigger = q(`${pathsTable}_${event}`);
      await run(`DROP TRIGGER IF EXISTS ${trigger} ON ${log}`);
      await run(
        `CREATE TRIGGER ${trigger} AFTER ${event.toUpperCase()} ON ${log} REFERENCING NEW TABLE AS new_entries ` +
          `FOR EACH STATEMENT EXECUTE FUNCTION ${add}()`,
      );
    }
    await run(`INSERT INTO ${paths} (path) SELECT DISTINCT path FROM ${log} ON CONFLICT DO NOTHING`);
    // Its statistics now, not at autovacuum's next visit: the planner sizes the trigram lookup by them.
    await run(`ANALYZE ${paths}`);
    await run(`COMMENT ON TABLE ${paths} IS ${literal(PATHS_COMPLETE)}`);
  };

  /**
   * PostgreSQL: the paths of the log that contain `text` (case-sensitive, as `contains`), through the paths
   * table's trigram index, less those holding one of `excluded` (`excludePaths` is a test of the path alone: its
   * entries need not be read to be left out); undefined when more than {@link PATHS_PER_PATH_READ_MAX} do.
   */
  async function pathsContaining(text: string, excluded: string[]): Promise<string[] | undefined> {
    const pattern = `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    const query = sql`select path from ${sql.identifier(pathsTable)} where path like ${pattern} escape '\\'
        and strpos(path, ${text}) > 0
        ${sql.join(
          excluded.map((fragment) => sql`and not (${contains(sql.raw('path'), fragment)})`),
          sql` `,
        )} limit ${PATHS_PER_PATH_READ_MAX + 1}`;
    // Planned for the text on every run, as the long reads.
    const rows = await db.allPlanned<{ path: string }>(query);
    return rows.length > PATHS_PER_PATH_READ_MAX ? undefined : rows.map((row) => row.path);
  }

  /**
   * `select` of the entries of each of `paths` matching `condition`, at most `limit` a path in `order`: one
   * range of the (path, timestamp) index per path, whatever the size of the log.
   */
  function perPath(
    paths: string[],
    condition: SQL | undefined,
    select: SQL,
    order: SQL[] | undefined,
    limit: number,
  ) {
    return sql`select per_path.* from json_array_elements_text(${JSON.stringify(paths)}::text::json) as matched(path)
      cross join lateral (select ${select} from ${table} where ${table.path} = matched.path
        ${condition ? sql`and ${condition}` : sql``}
        ${order ? sql`order by ${sql.join(order, sql`, `)}` : sql``} limit ${limit}) as per_path`;
  }

  const textIndex = textIndexOnce(db, 'the activity log', createTextIndex, textIndexOptions, log);

  /** Case-sensitive substring test, the same on both dialects (LIKE is case-insensitive on SQLite). */
  function contains(column: SQLWrapper, text: string): SQL {
    return db.dialect === 'pg' ? sql`strpos(${column}, ${text}) > 0` : sql`instr(${column}, ${text}) > 0`;
  }

  /**
   * Rows whose username or path contains `text` per the trigram index of the terms (case-insensitive): the
   * matching values, then the entries holding them through the (username, timestamp) and (path, timestamp)
   * indexes.
   */
  function textMatch(text: string, column?: 'path'): SQL {
    const phrase = `"${text.replace(/"/g, '""')}"`;
    const [terms, search] = [sql.identifier(termsTable), sql.identifier(termsSearch)];
    const values = (kind: number) =>
      sql`select value from ${terms} where kind = ${sql.raw(String(kind))} and id in (select rowid from ${search} where ${search} match ${phrase})`;
    const path = sql`${table.path} in (${values(PATH_TERM)})`;
    if (column === 'path') return path;
    return sql`(${table.username} in (${values(USERNAME_TERM)}) or ${path})`;
  }

  function where(filters: ActivityFilters, ftsReady: boolean): SQL | undefined {
    const conditions: (SQL | undefined)[] = [];
    const search = filters.search?.trim();
    if (search) {
      if (ftsReady && [...search].length >= TEXT_INDEX_MIN_LENGTH) {
        conditions.push(textMatch(search));
      } else {
        // PostgreSQL: the pg_trgm GIN indexes are on exactly these expressions.
        const like = textContains(db.dialect, search);
        conditions.push(or(like(sql`coalesce(${table.username}, '')`), like(table.path)));
      }
    }
    if (filters.userId !== undefined) conditions.push(eq(table.userId, filters.userId));
    if (filters.impersonatorId !== undefined)
      conditions.push(eq(table.impersonatorId, filters.impersonatorId));
    if (filters.method !== undefined) conditions.push(eq(table.method, filters.method));
    if (filters.statusCode !== undefined) conditions.push(eq(table.statusCode, filters.statusCode));
    if (filters.dateFrom) conditions.push(gte(table.timestamp, filters.dateFrom));
    if (filters.dateTo) conditions.push(lte(table.timestamp, filters.dateTo));
    if (filters.pathContains) {
      // The index narrows (case-insensitively), instr() keeps the case-sensitive meaning.
      if (ftsReady && [...filters.pathContains].length >= TEXT_INDEX_MIN_LENGTH)
        conditions.push(textMatch(filters.pathContains, 'path'));
      conditions.push(contains(table.path, filters.pathContains));
    }
    for (const fragment of filters.excludePaths)
      conditions.push(sql`not (${contains(table.path, fragment)})`);
    return and(...conditions);
  }

  /**
   * The sort: the requested column, then timestamp, then id, all in the requested direction, NULLs last. The
   * timestamp tie-breaker lets one index per column ((column, timestamp), id being SQLite's rowid) serve both
   * "filter on the column, newest first" and "sort by the column".
   */
  function sortKeys(orderBy: SortableActivityColumn): Column[] {
    if (orderBy === table.id) return [table.id];
    if (orderBy === table.timestamp) return [table.timestamp, table.id];
    return [orderBy, table.timestamp, table.id];
  }

  function orderClause(keys: Column[], descending: boolean): SQL[] {
    const direction = descending ? sql`desc` : sql`asc`;
    return keys.map((key) => (key.notNull ? sql`${key} ${direction}` : sql`${key} ${direction} nulls last`));
  }

  /** Rows strictly after `values` in the order of `keys` (NULLs last in both directions). */
  function afterCondition(keys: Column[], values: unknown[], descending: boolean): SQL {
    if (keys.every((key) => key.notNull)) {
      // A row value comparison: both databases turn it into one range of the index.
      const list = (items: SQL[]) => sql.join(items, sql`, `);
      const columns = list(keys.map((key) => sql`${key}`));
      const bound = list(values.map((value, i) => sql`${sql.param(value, keys[i]!)}`));
      return descending ? sql`(${columns}) < (${bound})` : sql`(${columns}) > (${bound})`;
    }
    const [key, ...rest] = keys as [Column, ...Column[]];
    const value = values[0];
    const tail = rest.length > 0 ? afterCondition(rest, values.slice(1), descending) : undefined;
    if (value === null || value === undefined) return and(isNull(key), tail ?? sql`false`)!;
    const beyond = descending ? lt(key, value) : gt(key, value);
    const sameThenTail = tail ? and(eq(key, value), tail) : undefined;
    return or(beyond, isNull(key), sameThenTail)!;
  }

  /** The values of `row` in the sort `keys`. */
  const sortValues = (keys: Column[], row: StoredActivity) =>
    keys.map((key) => {
      const field = Object.entries(columns).find(([, c]) => c === key)![0] as keyof StoredActivity;
      return row[field];
    });

  const readRows = (query: { toSQL(): { sql: string; params: unknown[] } } & PromiseLike<StoredActivity[]>) =>
    reads.rows<StoredActivity>(table, query);
  const readNumber = (query: SQL) => reads.number(query);
  /** A count: on PostgreSQL within `budgetMs` when given (undefined past it); otherwise to its end. */
  const readCount = (query: SQL, budgetMs: number | undefined) =>
    budgetMs === undefined ? reads.number(query) : reads.numberWithin(query, budgetMs);

  return {
    /** Builds the text index when missing: at start-up (file database: also on first use). */
    ensureTextIndex: () => textIndex.start(),

    /** Stops the read worker of a file database (the last holder stops it). */
    async close(): Promise<void> {
      await textIndex.stop();
      await reads.release();
    },

    /** All entries or none: one transaction of prepared INSERTs on SQLite, one statement on PostgreSQL. */
    async insertMany(entries: NewActivity[]): Promise<void> {
      if (entries.length === 0) return;
      if (!insertOne) {
        await insertBatch(entries);
        return;
      }
      // Run synchronously (better-sqlite3): nothing else runs on the connection between the inserts.
      await db.transaction(async () => {
        for (const entry of entries) {
          // A placeholder must get a value: the optional fields an entry may leave out are null.
          const { userId = null, username = null, description = null, impersonatorId = null } = entry;
          insertOne.run({ ...entry, userId, username, description, impersonatorId });
        }
      });
    },

    /**
     * One page of entries and, with `countUpTo`, how many match (counted up to that bound, docs/activity-log.md
     * "Large logs"). With `after`, the page starts right after that entry (keyset continuation): no OFFSET walk.
     */
    async list(options: ActivityListOptions): Promise<{ rows: StoredActivity[]; total: number }> {
      const indexed =
        options.filters.search || options.filters.pathContains ? await textIndex.ensure() : false;
      const ftsReady = indexed && db.dialect === 'sqlite';
      // PostgreSQL `pathContains`: the matching paths first (paths table), then their entries by path.
      const paths =
        indexed && db.dialect === 'pg' && options.filters.pathContains
          ? await pathsContaining(options.filters.pathContains, options.filters.excludePaths)
          : undefined;
      const others = where(
        paths ? { ...options.filters, pathContains: undefined, excludePaths: [] } : options.filters,
        ftsReady,
      );
      // Each path's entries through (path, timestamp) when nothing else is filtered. With other filters too
      // (`DELETE` and 404 within the paths of `token`), a big path would be read to its end to find the few
      // that pass them: the paths are then one more condition, and the planner reads through the index of
      // whichever filter is the most selective. The paths go as one `text[]` parameter, which the planner
      // reads like constants: behind `array(select …)` it could not see them, guessed a few rows, and read every
      // match of both filters through a BitmapAnd to sort them (2 s at ten million entries, docs/performance.md
      // "The console's lists at a million users") instead of walking the 404s newest first (milliseconds).
      const byPath = others === undefined ? paths : undefined;
      const condition =
        paths && !byPath ? and(others, sql`${table.path} = any(${sql.param(paths)}::text[])`) : others;
      const keys = sortKeys(options.orderBy);
      let pageCondition = condition;
      if (options.after !== undefined) {
        const [anchor] = await readRows(orm.select().from(table).where(eq(table.id, options.after)).limit(1));
        if (!anchor) {
          throw new SvcError('request.validation_error', {
            loc: ['query', 'after'],
            message: 'after must be the id of an entry that still exists',
          });
        }
        pageCondition = and(condition, afterCondition(keys, sortValues(keys, anchor), options.descending));
      }
      const order = orderClause(keys, options.descending);
      const direction = options.descending ? sql`desc` : sql`asc`;
      // Newest (or oldest) first among few paths: the first `offset + limit` entries of each path, merged, then
      // the page's rows by primary key. Another order: the paths as a filter.
      const pathPage =
        byPath && options.orderBy === table.timestamp
          ? sql`select merged.id from (${perPath(
              byPath,
              pageCondition,
              sql`${table.id}, ${table.timestamp}`,
              order,
              options.offset + options.limit,
            )}) as merged order by merged.${sql.identifier(table.timestamp.name)} ${direction},
              merged.${sql.identifier(table.id.name)} ${direction} limit ${options.limit} offset ${options.offset}`
          : undefined;
      if (byPath && !pathPage)
        pageCondition = and(pageCondition, sql`${table.path} = any(${sql.param(byPath)}::text[])`);
      // A page past the first on PostgreSQL: the OFFSET walk picks ids only, then the page's rows are read by
      // primary key (a deferred join). Where an index holds the sort and the filtered columns (the default
      // list: (timestamp, id, path)), the walk is an index-only scan instead of a million heap rows: 100 against
      // 260 ms of a backend for page 20,000 of a million entries (docs/performance.md "Large tables").
      const rowsQuery = pathPage
        ? orm
            .select()
            .from(table)
            .where(sql`${table.id} = any(array(${pathPage}))`)
            .orderBy(...order)
        : db.dialect === 'pg' && options.offset > 0
          ? orm
              .select()
              .from(table)
              .where(
                // `= any(array(…))`: the ids are collected first, then read through the primary key, whatever
                // the planner guesses of the subquery's size (an IN can become a hash join over the table).
                sql`${table.id} = any(array(${orm
                  .select({ id: table.id })
                  .from(table)
                  .where(pageCondition)
                  .orderBy(...order)
                  .limit(options.limit)
                  .offset(options.offset)}))`,
              )
              .orderBy(...order)
          : orm
              .select()
              .from(table)
              .where(pageCondition)
              .orderBy(...order)
              .limit(options.limit)
              .offset(options.offset);
      const bound = options.countUpTo;
      // Undefined: PostgreSQL stopped the count at its time budget (docs/activity-log.md "Large logs").
      const countUpTo = (matching: SQL | undefined, upTo: number) =>
        readCount(
          byPath
            ? sql`select count(*) from (${perPath(byPath, matching, sql`1`, undefined, upTo)} limit ${upTo}) as bounded`
            : sql`select count(*) from (select 1 from ${table} ${matching ? sql`where ${matching}` : sql``} limit ${upTo}) as bounded`,
          options.countBudgetMs,
        );
      // A count over its budget: what the page tells. A full page: one more than its end (more may follow,
      // `pages` offers the next page, as past the bound); a short page ends the matches; an empty page past
      // the end: the matches end before it.
      const untold = (rows: StoredActivity[]) =>
        options.offset + rows.length + (rows.length === options.limit ? 1 : 0);
      if (bound === undefined) return { rows: await readRows(rowsQuery), total: 0 };
      if (options.after !== undefined) {
        const [rows, total] = await Promise.all([readRows(rowsQuery), countUpTo(condition, bound)]);
        return { rows, total: total ?? untold(rows) };
      }
      // The page first, then only what it cannot tell: a page that ends short ends the matches (exact, no
      // count); after a full page, what follows its last row up to the bound (keyset: no second walk of the
      // OFFSET); only a page past the end counts from the start. Same figure as counting all matches up to
      // the bound (docs/activity-log.md "Large logs"), one OFFSET walk instead of two.
      // Few paths: each path's matches up to the bound, from its start in the (path, timestamp) index (an
      // index-only scan when nothing else is filtered) rather than past the page's last row (which needs the
      // id, a heap read per entry); the same figure.
      // A first page: the count from the start beside the page rather than after it (the same figure, there
      // is no OFFSET to walk twice), so that a slow count and the page take the longer of the two, not both.
      if (byPath || options.offset === 0) {
        const [rows, total] = await Promise.all([readRows(rowsQuery), countUpTo(condition, bound)]);
        // A short page with entries ends the matches: exact whatever became of the count.
        if (rows.length > 0 && rows.length < options.limit)
          return { rows, total: options.offset + rows.length };
        return { rows, total: total ?? untold(rows) };
      }
      const rows = await readRows(rowsQuery);
      const seen = options.offset + rows.length;
      if (rows.length === 0)
        return {
          rows,
          total: options.offset === 0 ? 0 : ((await countUpTo(condition, bound)) ?? untold(rows)),
        };
      if (rows.length < options.limit) return { rows, total: seen };
      const beyond = afterCondition(keys, sortValues(keys, rows.at(-1)!), options.descending);
      const following = await countUpTo(and(condition, beyond), bound - seen);
      return { rows, total: following === undefined ? untold(rows) : seen + following };
    },

    /** The last `limit` entries, newest first. */
    async latest(limit: number): Promise<StoredActivity[]> {
      return orm
        .select()
        .from(table)
        .orderBy(sql`${table.timestamp} desc`, sql`${table.id} desc`)
        .limit(limit);
    },

    /** The user's newest `limit` entries: one query on the (user_id, timestamp) index. */
    async ofUser(userId: string, limit: number): Promise<StoredActivity[]> {
      return readRows(
        orm
          .select()
          .from(table)
          .where(eq(table.userId, userId))
          .orderBy(sql`${table.timestamp} desc`, sql`${table.id} desc`)
          .limit(limit),
      );
    },

    async countOlderThan(cutoff: Date): Promise<number> {
      return readNumber(sql`select count(*) from ${table} where ${lt(table.timestamp, cutoff)}`);
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
