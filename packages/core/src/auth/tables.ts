import * as pg from 'drizzle-orm/pg-core';
import * as sq from 'drizzle-orm/sqlite-core';
import { tableName, type Settings } from '../kernel/config/schema.js';
import { pgCoreTables, sqliteCoreTables, type Dialect } from '../kernel/db/tables.js';
import { SESSION_IP_MAX_LENGTH, SESSION_USER_AGENT_MAX_LENGTH } from './constants.js';

/**
 * The session table (SPEC-2 "Sessions"), table_prefix + `session`: one row per login. Its `id` is the
 * login's refresh family (the `fam` claim of its refresh tokens and the `sid` claim of its access tokens).
 * A revoked session keeps its row, with `revoked_at`, until its last refresh token has expired, so a refresh
 * in flight can never bring it back; rows of a deleted user go with it (cascade).
 */
export function sqliteAuthTables(settings: Settings) {
  const { user } = sqliteCoreTables(settings);
  const name = tableName(settings, 'session');
  const session = sq.sqliteTable(
    name,
    {
      id: sq.text('id').primaryKey(),
      userId: sq
        .text('user_id')
        .notNull()
        .references(() => user.id, { onDelete: 'cascade' }),
      createdAt: sq.integer('created_at', { mode: 'timestamp_ms' }).notNull(),
      lastUsedAt: sq.integer('last_used_at', { mode: 'timestamp_ms' }).notNull(),
      userAgent: sq.text('user_agent', { length: SESSION_USER_AGENT_MAX_LENGTH }).notNull().default(''),
      ip: sq.text('ip', { length: SESSION_IP_MAX_LENGTH }).notNull().default(''),
      revokedAt: sq.integer('revoked_at', { mode: 'timestamp_ms' }),
    },
    (t) => [
      // (user_id, last_used_at): a login purges the user's stale sessions as a range of it (auth/store.ts);
      // the user's list and lookups by user_id alone use its prefix.
      sq.index(`${name}_user_last_used_idx`).on(t.userId, t.lastUsedAt),
      sq.index(`${name}_last_used_idx`).on(t.lastUsedAt),
    ],
  );
  return { session };
}

export type AuthTables = ReturnType<typeof sqliteAuthTables>;
export type SessionTable = AuthTables['session'];

const ts = (col: string) => pg.timestamp(col, { withTimezone: true, mode: 'date' });

/** The PostgreSQL variant, shaped like the SQLite one (same property names and value types). */
export function pgAuthTables(settings: Settings): AuthTables {
  // pgCoreTables is typed as the SQLite variant (see kernel/db/tables.ts); its columns are PostgreSQL ones.
  const { user } = pgCoreTables(settings) as unknown as { user: { id: pg.PgColumn } };
  const name = tableName(settings, 'session');
  const session = pg.pgTable(
    name,
    {
      id: pg.uuid('id').primaryKey(),
      userId: pg
        .uuid('user_id')
        .notNull()
        .references(() => user.id, { onDelete: 'cascade' }),
      createdAt: ts('created_at').notNull(),
      lastUsedAt: ts('last_used_at').notNull(),
      userAgent: pg.varchar('user_agent', { length: SESSION_USER_AGENT_MAX_LENGTH }).notNull().default(''),
      ip: pg.varchar('ip', { length: SESSION_IP_MAX_LENGTH }).notNull().default(''),
      revokedAt: ts('revoked_at'),
    },
    (t) => [
      // (user_id, last_used_at): a login purges the user's stale sessions as a range of it (auth/store.ts);
      // the user's list and lookups by user_id alone use its prefix.
      pg.index(`${name}_user_last_used_idx`).on(t.userId, t.lastUsedAt),
      pg.index(`${name}_last_used_idx`).on(t.lastUsedAt),
    ],
  );
  return { session } as unknown as AuthTables;
}

/** The auth module's tables for one dialect (the auth schema and its migrations read them). */
export function authTables(settings: Settings, dialect: Dialect): AuthTables {
  return dialect === 'pg' ? pgAuthTables(settings) : sqliteAuthTables(settings);
}
