import * as pg from 'drizzle-orm/pg-core';
import * as sq from 'drizzle-orm/sqlite-core';
import { tableName, type Settings } from '../kernel/config/schema.js';
import { pgCoreTables, sqliteCoreTables, type Dialect } from '../kernel/db/tables.js';

/** What a one-time account token is for (SPEC-2 "One-time account tokens"). */
export type AccountTokenPurpose = 'password_reset' | 'email_verify' | 'invitation';

/**
 * `table_prefix + account_token` (SPEC-2 "One-time account tokens"), SQLite variant: the SHA-256 digest of
 * the token (never the token), its purpose, user, the address it was sent to, expiry and use time.
 */
export function sqliteAccountTables(settings: Settings) {
  const { user } = sqliteCoreTables(settings);
  const name = tableName(settings, 'account_token');
  const accountToken = sq.sqliteTable(
    name,
    {
      digest: sq.text('digest', { length: 64 }).primaryKey(),
      purpose: sq.text('purpose', { length: 16 }).$type<AccountTokenPurpose>().notNull(),
      userId: sq
        .text('user_id')
        .notNull()
        .references(() => user.id, { onDelete: 'cascade' }),
      email: sq.text('email', { length: 320 }).notNull(),
      expiresAt: sq.integer('expires_at', { mode: 'timestamp_ms' }).notNull(),
      usedAt: sq.integer('used_at', { mode: 'timestamp_ms' }),
      createdAt: sq.integer('created_at', { mode: 'timestamp_ms' }).notNull(),
    },
    (t) => [sq.index(`${name}_user_purpose_idx`).on(t.userId, t.purpose)],
  );
  return { accountToken };
}

export type AccountTables = ReturnType<typeof sqliteAccountTables>;

const ts = (col: string) => pg.timestamp(col, { withTimezone: true, mode: 'date' });

export function pgAccountTables(settings: Settings): AccountTables {
  // pgCoreTables is typed as the SQLite variant (see kernel/db/tables.ts); its columns are PostgreSQL ones.
  const { user } = pgCoreTables(settings) as unknown as { user: { id: pg.PgColumn } };
  const name = tableName(settings, 'account_token');
  const accountToken = pg.pgTable(
    name,
    {
      digest: pg.varchar('digest', { length: 64 }).primaryKey(),
      purpose: pg.varchar('purpose', { length: 16 }).$type<AccountTokenPurpose>().notNull(),
      userId: pg
        .uuid('user_id')
        .notNull()
        .references(() => user.id, { onDelete: 'cascade' }),
      email: pg.varchar('email', { length: 320 }).notNull(),
      expiresAt: ts('expires_at').notNull(),
      usedAt: ts('used_at'),
      createdAt: ts('created_at').notNull(),
    },
    (t) => [pg.index(`${name}_user_purpose_idx`).on(t.userId, t.purpose)],
  );
  // Same property names and value types as the SQLite variant (SPEC "Database"): one store serves both.
  return { accountToken } as unknown as AccountTables;
}

export function accountTables(settings: Settings, dialect: Dialect): AccountTables {
  return dialect === 'pg' ? pgAccountTables(settings) : sqliteAccountTables(settings);
}
