import { sql, type SQL, type SQLWrapper } from 'drizzle-orm';

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
