import { tableName, type Settings } from '../kernel/config/schema.js';
import { defineTable, type Dialect } from '../kernel/db/define-table.js';
import { USERNAME_MAX_LENGTH } from '../kernel/identity.js';
import { DESCRIPTION_MAX_LENGTH, PATH_MAX_LENGTH } from './constants.js';

/**
 * The activity log table (SPEC "Activity log entry"): `activity_log_table`, else table_prefix + `activity_log`.
 * `user_id` has no foreign key (entries outlive their users); indexes on (user_id, timestamp) (SPEC
 * "Versioning" 0.14 to 0.15) and on timestamp (newest-first lists, snapshot, purge; on PostgreSQL (timestamp,
 * id, path), see below), and one on (column, timestamp) for every other column the audit routes filter on or
 * sort by (docs/activity-log.md "Large logs"): the routes sort by the column, then timestamp, then id, so the
 * same index serves "filter on the column, newest first" and "sort by the column" without sorting a million
 * rows. The text index of `search` is not here (store.ts `ensureTextIndex`).
 */
export function activityLogTable(settings: Settings, dialect: Dialect) {
  const name = tableName(settings, 'activity_log');
  return defineTable(
    dialect,
    name,
    (c) => ({
      id: c.bigserial('id'),
      timestamp: c.timestamp('timestamp').notNull(),
      userId: c.uuid('user_id'),
      username: c.text('username', { length: USERNAME_MAX_LENGTH }),
      method: c.text('method', { length: 10 }).notNull(),
      path: c.text('path', { length: PATH_MAX_LENGTH }).notNull(),
      statusCode: c.integer('status_code').notNull(),
      durationMs: c.integer('duration_ms').notNull(),
      description: c.text('description', { length: DESCRIPTION_MAX_LENGTH }),
      // SPEC-3 §4: the superuser who acted as `user_id` (impersonation); null otherwise.
      impersonatorId: c.uuid('impersonator_id'),
    }),
    (t, x) => [
      x.index(`${name}_user_timestamp_idx`).on(t.userId, t.timestamp),
      // On PostgreSQL (timestamp, id, path), not (timestamp) as on SQLite, where every index ends with the
      // rowid: the default list's order and its `excludePaths` filter read from the index alone, so a deep
      // `page` walks index entries, not a million rows of the table (store.ts `list`).
      x.dialect === 'pg'
        ? x.index(`${name}_timestamp_id_path_idx`).on(t.timestamp, t.id, t.path)
        : x.index(`${name}_timestamp_idx`).on(t.timestamp),
      x.index(`${name}_username_timestamp_idx`).on(t.username, t.timestamp),
      x.index(`${name}_method_timestamp_idx`).on(t.method, t.timestamp),
      x.index(`${name}_path_timestamp_idx`).on(t.path, t.timestamp),
      x.index(`${name}_status_code_timestamp_idx`).on(t.statusCode, t.timestamp),
      x.index(`${name}_duration_ms_timestamp_idx`).on(t.durationMs, t.timestamp),
    ],
  );
}

export type ActivityLogTable = ReturnType<typeof activityLogTable>;
export type StoredActivity = ActivityLogTable['$inferSelect'];
export type NewActivity = ActivityLogTable['$inferInsert'];

/** The audit module's tables for the auth schema and its migrations. */
export function auditTables(settings: Settings, dialect: Dialect): { activityLog: ActivityLogTable } {
  return { activityLog: activityLogTable(settings, dialect) };
}
