import { is, Param, Placeholder, sql, type Column, type SQL, type SQLWrapper } from 'drizzle-orm';
import { PgDialect } from 'drizzle-orm/pg-core';
import { SQLiteSyncDialect } from 'drizzle-orm/sqlite-core';
import { likePattern } from '../pagination.js';
import type { Database } from './database.js';
import { sameShape, type Dialect } from './define-table.js';

/** A column name alone, for `SET` lists and `INSERT` column lists of hand-written statements. */
export const columnName = (column: { name: string }) => sql.identifier(column.name);

/**
 * `column = value` that no index serves (`(…) IS TRUE`), for a row already found by its primary key: with the
 * comparison in the WHERE clause PostgreSQL may look the row up by that column's index instead and filter every
 * row of it (it did on tables without statistics: a user's sessions, a family's refresh records), a cost that
 * grows with each login or rotation (auth/session-lookups.test.ts). Works on both dialects.
 */
export const equalsWithoutIndex = (column: SQLWrapper, value: unknown): SQL =>
  sql`(${column} = ${value}) IS TRUE`;

/**
 * A value given when a prepared statement runs (`sql.placeholder(name)`), encoded through `column` as drizzle
 * encodes a value written to it (a `Date` into SQLite's milliseconds or PostgreSQL's timestamp text). As an `SQL`
 * fragment it stands wherever `set()` or `values()` take the column's value, typed, on both dialects.
 */
export const placeholderFor = (column: Column, name: string): SQL =>
  sql`${sql.param<unknown, unknown>(sql.placeholder(name), column)}`;

/**
 * `query.prepare(name)`: a named prepared statement on PostgreSQL, parsed and planned once per connection
 * (docs/performance.md "PostgreSQL round trips"); SQLite's builder, whose type the stores use, takes no name and
 * ignores one.
 */
export function prepareNamed<P>(query: { prepare(): P }, name: string): P {
  const prepare: (this: unknown, name: string) => P = query.prepare;
  return prepare.call(query, name);
}

const SQLITE_DIALECT = new SQLiteSyncDialect();
const PG_DIALECT = new PgDialect();

/** `{sql, params}` of an `sql` template as the dialect's drizzle instance compiles it. */
export function compileSql(dialect: Dialect, query: SQL): { sql: string; params: unknown[] } {
  return (dialect === 'pg' ? PG_DIALECT : SQLITE_DIALECT).sqlToQuery(query);
}

/** Compiled statements of {@link compiledWith}, by the statement object and its dialect. */
const compiled = { pg: new WeakMap<SQL, CompiledSql>(), sqlite: new WeakMap<SQL, CompiledSql>() };

interface CompiledSql {
  sql: string;
  params: unknown[];
}

/**
 * `query` compiled once for as long as the object lives, with its placeholders (`sql.placeholder`,
 * {@link placeholderFor}) filled from `values` on each call: for a hot statement built once per shape and kept.
 * drizzle builds and compiles a query by walking every column and fragment of it (docs/performance.md
 * "Webhooks": 0.2 to 0.7 ms for a user's update with its event), which a kept statement does once.
 */
export function compiledWith(
  dialect: Dialect,
  query: SQL,
  values: Record<string, unknown>,
): { sql: string; params: unknown[] } {
  let entry = compiled[dialect].get(query);
  if (!entry) {
    entry = compileSql(dialect, query);
    compiled[dialect].set(query, entry);
  }
  return { sql: entry.sql, params: filled(entry.params, values) };
}

/**
 * drizzle's `fillPlaceholders`, except that a null value stays null instead of going through its column's
 * encoder (which would read a null date's time), as drizzle does for a value written directly.
 */
function filled(params: unknown[], values: Record<string, unknown>): unknown[] {
  return params.map((param) => {
    const placeholder = is(param, Placeholder)
      ? param
      : is(param, Param) && is(param.value, Placeholder)
        ? param.value
        : undefined;
    if (!placeholder) return param;
    if (!(placeholder.name in values)) throw new Error(`No value for placeholder "${placeholder.name}"`);
    const value = values[placeholder.name];
    return placeholder === param || value === null ? value : (param as Param).encoder.mapToDriverValue(value);
  });
}

/**
 * `SELECT … FOR UPDATE` on PostgreSQL; on SQLite, where a write transaction already holds the whole database,
 * the select as it is.
 */
export function forUpdate<T>(dialect: Dialect, query: PromiseLike<T>): PromiseLike<T> {
  if (dialect !== 'pg') return query;
  // The stores' builders are typed as SQLite's, which has no `for()`; on PostgreSQL the object is drizzle's
  // PostgreSQL select, which has it (define-table.ts `sameShape` says why no type can be both).
  return sameShape<{ for(strength: 'update'): PromiseLike<T> }>(query).for('update');
}

/**
 * Rows of a hand-written statement run inside a transaction `tx` (SPEC-3 §3: a change and its webhook event in
 * one transaction): SQLite's builder runs it with `all`, PostgreSQL's transaction with `execute` (the builders'
 * one type is SQLite's, define-table.ts `sameShape` says why).
 */
export async function allIn<T>(tx: unknown, dialect: Dialect, query: SQL): Promise<T[]> {
  if (dialect === 'pg') return [...(await sameShape<{ execute(q: SQL): Promise<T[]> }>(tx).execute(query))];
  return sameShape<{ all(q: SQL): T[] }>(tx).all(query);
}

/**
 * The number a read answers (a bounded count), planned for its values on every run (`Database.allPlanned`: a
 * count kept prepared may switch to a generic plan on PostgreSQL).
 */
export async function numberPlanned(db: Database, query: SQL): Promise<number> {
  const [row] = await db.allPlanned(query);
  return Number(Object.values(row ?? {})[0] ?? 0);
}

/**
 * The SQLite function every connection of a file database registers (database.ts, sqlite-reader.ts): its text
 * in JavaScript's `toLowerCase()`, which folds every letter, as PostgreSQL's `lower()` does.
 */
export const SQLITE_LOWER = 'svc_lower';

/** {@link SQLITE_LOWER}'s body: text lower-cased, anything else as it is. */
export const sqliteLower = (value: unknown): unknown =>
  typeof value === 'string' ? value.toLowerCase() : value;

/**
 * A list's `search` (`column` contains `text` in any letter case), for each column it is asked of:
 * `lower(column) LIKE '%text%'` with the pattern of kernel/pagination.ts `likePattern` (lower-cased, `%`, `_`
 * and `\` escaped). SQLite's `lower()` and `LIKE` fold ASCII letters only, so a search with other letters ("Öz"
 * of "Öztürk") compares through {@link SQLITE_LOWER} there. An ASCII search keeps `lower()`, which no letter
 * outside ASCII could change the outcome of, and PostgreSQL always does (its pg_trgm indexes are on
 * `lower(column)`).
 */
export function textContains(dialect: Dialect, text: string): (column: SQLWrapper) => SQL {
  const pattern = likePattern(text);
  const fold = sql.raw(dialect === 'sqlite' && /[\u0080-\u{10ffff}]/u.test(text) ? SQLITE_LOWER : 'lower');
  return (column) => sql`${fold}(${column}) like ${pattern} escape '\\'`;
}
