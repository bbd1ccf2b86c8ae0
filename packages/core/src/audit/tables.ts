import * as pg from 'drizzle-orm/pg-core';
import * as sq from 'drizzle-orm/sqlite-core';
import { tableName, type Settings } from '../kernel/config/schema.js';
import type { Dialect } from '../kernel/db/tables.js';
import { USERNAME_MAX_LENGTH } from '../kernel/identity.js';
import { DESCRIPTION_MAX_LENGTH, PATH_MAX_LENGTH } from './constants.js';

/**
 * The activity log table (SPEC "Activity log entry"): `activity_log_table`, else table_prefix + `activity_log`.
 * `user_id` has no foreign key (entries outlive their users); indexes on (user_id, timestamp) (SPEC
 * "Versioning" 0.14 to 0.15) and on timestamp (newest-first lists, snapshot, purge; on PostgreSQL (timestamp,
 * id, path), see `pgActivityLogTable`), and one on (column, timestamp) for every other column the audit routes
 * filter on or sort by (docs/activity-log.md "Large logs"): the routes sort by the column, then timestamp, then
 * id, so the same index serves "filter on the column, newest first" and "sort by the column" without sorting a
 * million rows. The text index of `search` is not
 * here (store.ts `ensureTextIndex`).
 */
export function sqliteActivityLogTable(settings: Settings) {
  const name = tableName(settings, 'activity_log');
  return sq.sqliteTable(
    name,
    {
      id: sq.integer('id').primaryKey({ autoIncrement: true }),
      timestamp: sq.integer('timestamp', { mode: 'timestamp_ms' }).notNull(),
      userId: sq.text('user_id'),
      username: sq.text('username', { length: USERNAME_MAX_LENGTH }),
      method: sq.text('method', { length: 10 }).notNull(),
      path: sq.text('path', { length: PATH_MAX_LENGTH }).notNull(),
      statusCode: sq.integer('status_code').notNull(),
      durationMs: sq.integer('duration_ms').notNull(),
      description: sq.text('description', { length: DESCRIPTION_MAX_LENGTH }),
    },
    (t) => [
      sq.index(`${name}_user_timestamp_idx`).on(t.userId, t.timestamp),
      sq.index(`${name}_timestamp_idx`).on(t.timestamp),
      sq.index(`${name}_username_timestamp_idx`).on(t.username, t.timestamp),
      sq.index(`${name}_method_timestamp_idx`).on(t.method, t.timestamp),
      sq.index(`${name}_path_timestamp_idx`).on(t.path, t.timestamp),
      sq.index(`${name}_status_code_timestamp_idx`).on(t.statusCode, t.timestamp),
      sq.index(`${name}_duration_ms_timestamp_idx`).on(t.durationMs, t.timestamp),
    ],
  );
}

export type ActivityLogTable = ReturnType<typeof sqliteActivityLogTable>;
export type StoredActivity = ActivityLogTable['$inferSelect'];
export type NewActivity = ActivityLogTable['$inferInsert'];

/** The PostgreSQL variant, shaped like the SQLite one (same property names and value types). */
export function pgActivityLogTable(settings: Settings): ActivityLogTable {
  const name = tableName(settings, 'activity_log');
  const table = pg.pgTable(
    name,
    {
      id: pg.bigserial('id', { mode: 'number' }).primaryKey(),
      timestamp: pg.timestamp('timestamp', { withTimezone: true, mode: 'date' }).notNull(),
      userId: pg.uuid('user_id'),
      username: pg.varchar('username', { length: USERNAME_MAX_LENGTH }),
      method: pg.varchar('method', { length: 10 }).notNull(),
      path: pg.varchar('path', { length: PATH_MAX_LENGTH }).notNull(),
      statusCode: pg.integer('status_code').notNull(),
      durationMs: pg.integer('duration_ms').notNull(),
      description: pg.varchar('description', { length: DESCRIPTION_MAX_LENGTH }),
    },
    (t) => [
      pg.index(`${name}_user_timestamp_idx`).on(t.userId, t.timestamp),
      // (timestamp, id, path), not (timestamp) as on SQLite, where every index ends with the rowid: the
      // default list's order and its `excludePaths` filter read from the index alone, so a deep `page` walks
      // index entries, not a million rows of the table (store.ts `list`).
      pg.index(`${name}_timestamp_id_path_idx`).on(t.timestamp, t.id, t.path),
      pg.index(`${name}_username_timestamp_idx`).on(t.username, t.timestamp),
      pg.index(`${name}_method_timestamp_idx`).on(t.method, t.timestamp),
      pg.index(`${name}_path_timestamp_idx`).on(t.path, t.timestamp),
      pg.index(`${name}_status_code_timestamp_idx`).on(t.statusCode, t.timestamp),
      pg.index(`${name}_duration_ms_timestamp_idx`).on(t.durationMs, t.timestamp),
    ],
  );
  return table as unknown as ActivityLogTable;
}

/** The audit module's tables for the auth schema and its migrations. */
export function auditTables(settings: Settings, dialect: Dialect): { activityLog: ActivityLogTable } {
  return { activityLog: dialect === 'pg' ? pgActivityLogTable(settings) : sqliteActivityLogTable(settings) };
}
