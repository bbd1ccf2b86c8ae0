import type { BuildColumns } from 'drizzle-orm';
import * as pg from 'drizzle-orm/pg-core';
import * as sq from 'drizzle-orm/sqlite-core';

/** The two databases svc runs on: a SQLite file (better-sqlite3) or PostgreSQL. */
export type Dialect = 'sqlite' | 'pg';

/**
 * What one dialect-neutral column kind becomes on each database (docs/modules.md "Tables"). This is the only
 * place that maps them; every table of svc and of a project goes through it.
 *
 * | kind                   | SQLite                                  | PostgreSQL                                    |
 * | ---------------------- | --------------------------------------- | --------------------------------------------- |
 * | `uuid(name)`           | `text`                                  | `uuid`                                        |
 * | `text(name)`           | `text`                                  | `text`                                        |
 * | `text(name, {length})` | `text(length)`                          | `varchar(length)`                             |
 * | `integer(name)`        | `integer`                               | `integer`                                     |
 * | `bigint(name)`         | `integer`                               | `bigint` (read as a JavaScript number)        |
 * | `boolean(name)`        | `integer` (0 / 1)                       | `boolean`                                     |
 * | `timestamp(name)`      | `integer` (milliseconds since 1970)     | `timestamp with time zone`                    |
 * | `json<T>(name)`        | `text` (JSON)                           | `jsonb`                                       |
 * | `serial(name)`         | `integer primary key autoincrement`     | `serial primary key`                          |
 * | `bigserial(name)`      | `integer primary key autoincrement`     | `bigserial primary key` (a JavaScript number) |
 *
 * Every kind reads and writes the same JavaScript type on both (string, number, boolean, `Date`, the JSON
 * value), so a store is written once.
 */
export interface ColumnKinds {
  /** A UUID: `text` on SQLite, `uuid` on PostgreSQL. */
  uuid<N extends string>(name: N): ReturnType<typeof sqliteUuid<N>>;
  /**
   * Text: `text` on both without `length`; with it `text(length)` on SQLite and `varchar(length)` on
   * PostgreSQL. `sqliteLength: false` keeps SQLite's column a plain `text` (SQLite enforces no length either
   * way): for columns that were created so before `defineTable`, whose migrations must not change.
   */
  text<N extends string>(
    name: N,
    options?: { length?: number; sqliteLength?: boolean },
  ): sq.SQLiteTextBuilderInitial<N, [string, ...string[]], number>;
  /** A 32-bit integer. */
  integer<N extends string>(name: N): ReturnType<typeof sqliteInteger<N>>;
  /** A 64-bit integer read as a JavaScript number (exact up to 2^53): `integer` on SQLite, `bigint` on PostgreSQL. */
  bigint<N extends string>(name: N): ReturnType<typeof sqliteInteger<N>>;
  /** A boolean: `integer` 0 / 1 on SQLite, `boolean` on PostgreSQL. */
  boolean<N extends string>(name: N): ReturnType<typeof sqliteBoolean<N>>;
  /** A point in time read as a `Date`: milliseconds in an `integer` on SQLite, `timestamptz` on PostgreSQL. */
  timestamp<N extends string>(name: N): ReturnType<typeof sqliteTimestamp<N>>;
  /** A JSON value of type `T`: `text` on SQLite, `jsonb` on PostgreSQL. */
  json<T, N extends string = string>(name: N): ReturnType<typeof sqliteJson<T, N>>;
  /** An auto-numbered 32-bit primary key. */
  serial<N extends string>(name: N): ReturnType<typeof sqliteSerial<N>>;
  /** An auto-numbered 64-bit primary key, read as a JavaScript number. */
  bigserial<N extends string>(name: N): ReturnType<typeof sqliteSerial<N>>;
}

/** The table-level parts (indexes, composite primary keys) that `defineTable`'s third argument builds. */
export interface TableParts {
  readonly dialect: Dialect;
  index(name: string): sq.IndexBuilderOn;
  uniqueIndex(name: string): sq.IndexBuilderOn;
  /** A primary key over several columns. */
  primaryKey(...columns: [sq.SQLiteColumn, ...sq.SQLiteColumn[]]): sq.PrimaryKeyBuilder;
  /**
   * `column` as an index key in descending order (PostgreSQL: `column DESC NULLS FIRST`, its default; with
   * `nullsLast`, `column DESC NULLS LAST`), so that a query ordered that way reads the index forward. SQLite:
   * the column as it is (its indexes are read in either direction, and its `DESC` puts NULLs last already).
   */
  descending(column: sq.SQLiteColumn, options?: { nullsLast?: boolean }): sq.SQLiteColumn;
}

/**
 * The type of a table made by {@link defineTable}: drizzle's SQLite table type, on both dialects (see
 * {@link defineTable} for why one type serves both).
 */
export type DefinedTable<
  TName extends string,
  TColumns extends Record<string, sq.SQLiteColumnBuilderBase>,
> = sq.SQLiteTableWithColumns<{
  name: TName;
  schema: undefined;
  columns: BuildColumns<TName, TColumns, 'sqlite'>;
  dialect: 'sqlite';
}>;

const sqliteUuid = <N extends string>(name: N) => sq.text(name);
const sqliteInteger = <N extends string>(name: N) => sq.integer(name);
const sqliteBoolean = <N extends string>(name: N) => sq.integer(name, { mode: 'boolean' });
const sqliteTimestamp = <N extends string>(name: N) => sq.integer(name, { mode: 'timestamp_ms' });
const sqliteJson = <T, N extends string>(name: N) => sq.text(name, { mode: 'json' }).$type<T>();
const sqliteSerial = <N extends string>(name: N) => sq.integer(name).primaryKey({ autoIncrement: true });

/**
 * THE one cast of the table layer (and of `Database.orm`, database.ts). A PostgreSQL builder, column, table or
 * query builder stands where the SQLite type is declared: drizzle types its two dialects apart (each class carries its dialect as a type brand), so no type
 * can be both, though at run time the PostgreSQL objects have the same properties and query builders that
 * take them (`eq(t.id, …)`, `.references(() => t.id)`, `index(…).on(t.id)`) do the same with either.
 */
export function sameShape<T>(value: unknown): T {
  return value as T;
}

function kindsFor(dialect: Dialect): ColumnKinds {
  if (dialect === 'sqlite') {
    return {
      uuid: sqliteUuid,
      text: (name, options) =>
        sq.text(name, { length: options?.sqliteLength === false ? undefined : options?.length }),
      integer: sqliteInteger,
      bigint: sqliteInteger,
      boolean: sqliteBoolean,
      timestamp: sqliteTimestamp,
      json: sqliteJson,
      serial: sqliteSerial,
      bigserial: sqliteSerial,
    };
  }
  return sameShape<ColumnKinds>({
    uuid: (name: string) => pg.uuid(name),
    text: (name: string, options?: { length?: number }) =>
      options?.length === undefined ? pg.text(name) : pg.varchar(name, { length: options.length }),
    integer: (name: string) => pg.integer(name),
    bigint: (name: string) => pg.bigint(name, { mode: 'number' }),
    boolean: (name: string) => pg.boolean(name),
    timestamp: (name: string) => pg.timestamp(name, { withTimezone: true, mode: 'date' }),
    json: (name: string) => pg.jsonb(name),
    serial: (name: string) => pg.serial(name).primaryKey(),
    bigserial: (name: string) => pg.bigserial(name, { mode: 'number' }).primaryKey(),
  } satisfies Record<keyof ColumnKinds, unknown>);
}

function partsFor(dialect: Dialect): TableParts {
  if (dialect === 'sqlite') {
    return {
      dialect,
      index: sq.index,
      uniqueIndex: sq.uniqueIndex,
      primaryKey: (...columns) => sq.primaryKey({ columns }),
      descending: (column) => column,
    };
  }
  return sameShape<TableParts>({
    dialect,
    index: pg.index,
    uniqueIndex: pg.uniqueIndex,
    primaryKey: (...columns: [pg.PgColumn, ...pg.PgColumn[]]) => pg.primaryKey({ columns }),
    // In a table's extra config, PostgreSQL's columns are drizzle's ExtraConfigColumn (asc, desc, nulls order).
    descending: (column: pg.ExtraConfigColumn, options?: { nullsLast?: boolean }) =>
      options?.nullsLast ? column.desc().nullsLast() : column.desc().nullsFirst(),
  });
}

const KINDS: Record<Dialect, ColumnKinds> = { sqlite: kindsFor('sqlite'), pg: kindsFor('pg') };
const PARTS: Record<Dialect, TableParts> = { sqlite: partsFor('sqlite'), pg: partsFor('pg') };

/**
 * One table, declared once for both databases: its columns from the dialect-neutral kinds of `c` (see
 * {@link ColumnKinds} for what each becomes on SQLite and on PostgreSQL), its indexes and composite keys from
 * `parts`. Returns the drizzle table of `dialect`.
 *
 * Its TypeScript type is drizzle's SQLite table type on both databases, so that a store is written and typed
 * once; on PostgreSQL the object is drizzle's PostgreSQL table, which has the same properties and which every
 * query builder of `Database.orm` takes alike. Call it where the dialect is known: in a module's or migration
 * target's `tables(settings, dialect)`, with the table's name from the settings (`tableName(settings, base)`
 * follows `table_prefix` and the `<base>_table` settings).
 *
 * @example
 * import { defineTable, type Dialect } from '@svc/core';
 *
 * export const noteTable = (dialect: Dialect) =>
 *   defineTable(
 *     dialect,
 *     'demo_note',
 *     (c) => ({
 *       id: c.serial('id'),
 *       text: c.text('text', { length: 2000 }).notNull(),
 *       authorId: c.uuid('author_id').notNull(),
 *       archived: c.boolean('archived').notNull().default(false),
 *       createdAt: c.timestamp('created_at').notNull().$defaultFn(() => new Date()),
 *     }),
 *     (t, parts) => [parts.index('demo_note_author_idx').on(t.authorId)],
 *   );
 */
export function defineTable<
  TName extends string,
  TColumns extends Record<string, sq.SQLiteColumnBuilderBase>,
>(
  dialect: Dialect,
  name: TName,
  columns: (c: ColumnKinds) => TColumns,
  parts?: (
    table: BuildColumns<TName, TColumns, 'sqlite'>,
    parts: TableParts,
  ) => sq.SQLiteTableExtraConfigValue[],
): DefinedTable<TName, TColumns> {
  const built = columns(KINDS[dialect]);
  const extra = parts && ((table: BuildColumns<TName, TColumns, 'sqlite'>) => parts(table, PARTS[dialect]));
  if (dialect === 'sqlite') return sq.sqliteTable(name, built, extra);
  return sameShape<DefinedTable<TName, TColumns>>(
    pg.pgTable(name, sameShape<Record<string, pg.PgColumnBuilderBase>>(built), sameShape<undefined>(extra)),
  );
}
