import { randomUUID } from 'node:crypto';
import * as pg from 'drizzle-orm/pg-core';
import * as sq from 'drizzle-orm/sqlite-core';
import { tableName, type Settings } from '../kernel/config/schema.js';
import { pgCoreTables, sqliteCoreTables, type Dialect } from '../kernel/db/tables.js';
import { TOKEN_NAME_MAX_LENGTH, TOKEN_PREFIX_LENGTH } from './constants.js';

/**
 * The personal access token table (SPEC-2 "Personal access tokens"), SQLite variant; the PostgreSQL variant
 * below has the same property names and value types. Only the SHA-256 digest of a token is stored (hex, unique
 * index: the guard's one lookup); `permissions` is a JSON array of codenames kept as text. A deleted owner
 * takes their tokens along (cascade).
 */
export function sqlitePersonalTokenTables(settings: Settings) {
  const { user } = sqliteCoreTables(settings);
  const name = tableName(settings, 'personal_token');
  const personalToken = sq.sqliteTable(
    name,
    {
      id: sq.text('id').primaryKey().$defaultFn(randomUUID),
      userId: sq
        .text('user_id')
        .notNull()
        .references(() => user.id, { onDelete: 'cascade' }),
      digest: sq.text('digest', { length: 64 }).notNull().unique(),
      name: sq.text('name', { length: TOKEN_NAME_MAX_LENGTH }).notNull(),
      prefix: sq.text('prefix', { length: TOKEN_PREFIX_LENGTH }).notNull(),
      permissions: sq.text('permissions').notNull().default('[]'),
      staff: sq.integer('staff', { mode: 'boolean' }).notNull().default(false),
      superuser: sq.integer('superuser', { mode: 'boolean' }).notNull().default(false),
      expiresAt: sq.integer('expires_at', { mode: 'timestamp_ms' }),
      createdAt: sq.integer('created_at', { mode: 'timestamp_ms' }).notNull(),
      lastUsedAt: sq.integer('last_used_at', { mode: 'timestamp_ms' }),
    },
    (t) => [sq.index(`${name}_user_idx`).on(t.userId)],
  );
  return { personalToken };
}

export type PersonalTokenTables = ReturnType<typeof sqlitePersonalTokenTables>;

const ts = (col: string) => pg.timestamp(col, { withTimezone: true, mode: 'date' });

export function pgPersonalTokenTables(settings: Settings): PersonalTokenTables {
  // pgCoreTables is typed as the SQLite variant (see kernel/db/tables.ts); its columns are PostgreSQL ones.
  const { user } = pgCoreTables(settings) as unknown as { user: { id: pg.PgColumn } };
  const name = tableName(settings, 'personal_token');
  const personalToken = pg.pgTable(
    name,
    {
      id: pg.uuid('id').primaryKey().$defaultFn(randomUUID),
      userId: pg
        .uuid('user_id')
        .notNull()
        .references(() => user.id, { onDelete: 'cascade' }),
      digest: pg.varchar('digest', { length: 64 }).notNull().unique(),
      name: pg.varchar('name', { length: TOKEN_NAME_MAX_LENGTH }).notNull(),
      prefix: pg.varchar('prefix', { length: TOKEN_PREFIX_LENGTH }).notNull(),
      permissions: pg.text('permissions').notNull().default('[]'),
      staff: pg.boolean('staff').notNull().default(false),
      superuser: pg.boolean('superuser').notNull().default(false),
      expiresAt: ts('expires_at'),
      createdAt: ts('created_at').notNull(),
      lastUsedAt: ts('last_used_at'),
    },
    (t) => [pg.index(`${name}_user_idx`).on(t.userId)],
  );
  return { personalToken } as unknown as PersonalTokenTables;
}

/** The module's tables for one dialect (the auth schema and its migrations read them). */
export function personalTokenTables(settings: Settings, dialect: Dialect): PersonalTokenTables {
  return dialect === 'pg' ? pgPersonalTokenTables(settings) : sqlitePersonalTokenTables(settings);
}
