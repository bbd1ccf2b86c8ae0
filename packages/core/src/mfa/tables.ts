import * as pg from 'drizzle-orm/pg-core';
import * as sq from 'drizzle-orm/sqlite-core';
import { tableName, type Settings } from '../kernel/config/schema.js';
import { pgCoreTables, sqliteCoreTables, type Dialect } from '../kernel/db/tables.js';
import { TOTP_SECRET_COLUMN_LENGTH } from './constants.js';

/** The methods of SPEC "MFA configuration". */
export type MfaMethod = 'totp' | 'email' | 'sms';

/**
 * The MFA tables (SPEC "MFA configuration", "MFA pending challenge"), SQLite variant; the PostgreSQL
 * variant below has the same property names and value types.
 *
 * `backup_codes` is a JSON array of code hashes kept as text, so that consuming one code is a
 * compare-and-swap on the whole text (`UPDATE … WHERE backup_codes = <old>`), identical on both dialects.
 */
export function sqliteMfaTables(settings: Settings) {
  const { user } = sqliteCoreTables(settings);
  const mfaConfig = sq.sqliteTable(tableName(settings, 'mfa_config'), {
    userId: sq
      .text('user_id')
      .primaryKey()
      .references(() => user.id, { onDelete: 'cascade' }),
    method: sq.text('method', { length: 16 }).$type<MfaMethod>().notNull(),
    isActive: sq.integer('is_active', { mode: 'boolean' }).notNull().default(false),
    /** `enc:v1:<base64>` (AES-256-GCM) or, for rows written before 0.10, the plain base32 secret. */
    totpSecret: sq.text('totp_secret', { length: TOTP_SECRET_COLUMN_LENGTH }),
    lastTotpStep: sq.integer('last_totp_step'),
    backupCodes: sq.text('backup_codes').notNull().default('[]'),
    phoneNumber: sq.text('phone_number', { length: 32 }),
    pendingCodeHash: sq.text('pending_code_hash', { length: 128 }),
    pendingCodeExpiresAt: sq.integer('pending_code_expires_at', { mode: 'timestamp_ms' }),
    pendingAttempts: sq.integer('pending_attempts').notNull().default(0),
    lastSentAt: sq.integer('last_sent_at', { mode: 'timestamp_ms' }),
    createdAt: sq
      .integer('created_at', { mode: 'timestamp_ms' })
      .notNull()
      .$defaultFn(() => new Date()),
  });
  const mfaPending = sq.sqliteTable(
    tableName(settings, 'mfa_pending'),
    {
      id: sq.text('id').primaryKey(),
      userId: sq
        .text('user_id')
        .notNull()
        .references(() => user.id, { onDelete: 'cascade' }),
      attempts: sq.integer('attempts').notNull().default(0),
      codeHash: sq.text('code_hash', { length: 128 }),
      expiresAt: sq.integer('expires_at', { mode: 'timestamp_ms' }).notNull(),
      createdAt: sq
        .integer('created_at', { mode: 'timestamp_ms' })
        .notNull()
        .$defaultFn(() => new Date()),
    },
    (t) => [sq.index(`${tableName(settings, 'mfa_pending')}_user_idx`).on(t.userId)],
  );
  return { mfaConfig, mfaPending };
}

export type MfaTables = ReturnType<typeof sqliteMfaTables>;

const ts = (col: string) => pg.timestamp(col, { withTimezone: true, mode: 'date' });

export function pgMfaTables(settings: Settings): MfaTables {
  // pgCoreTables is typed as the SQLite variant (see kernel/db/tables.ts); its columns are PostgreSQL ones.
  const { user } = pgCoreTables(settings) as unknown as { user: { id: pg.PgColumn } };
  const mfaConfig = pg.pgTable(tableName(settings, 'mfa_config'), {
    userId: pg
      .uuid('user_id')
      .primaryKey()
      .references(() => user.id, { onDelete: 'cascade' }),
    method: pg.varchar('method', { length: 16 }).$type<MfaMethod>().notNull(),
    isActive: pg.boolean('is_active').notNull().default(false),
    totpSecret: pg.varchar('totp_secret', { length: TOTP_SECRET_COLUMN_LENGTH }),
    lastTotpStep: pg.bigint('last_totp_step', { mode: 'number' }),
    backupCodes: pg.text('backup_codes').notNull().default('[]'),
    phoneNumber: pg.varchar('phone_number', { length: 32 }),
    pendingCodeHash: pg.varchar('pending_code_hash', { length: 128 }),
    pendingCodeExpiresAt: ts('pending_code_expires_at'),
    pendingAttempts: pg.integer('pending_attempts').notNull().default(0),
    lastSentAt: ts('last_sent_at'),
    createdAt: ts('created_at')
      .notNull()
      .$defaultFn(() => new Date()),
  });
  const mfaPending = pg.pgTable(
    tableName(settings, 'mfa_pending'),
    {
      id: pg.varchar('id', { length: 64 }).primaryKey(),
      userId: pg
        .uuid('user_id')
        .notNull()
        .references(() => user.id, { onDelete: 'cascade' }),
      attempts: pg.integer('attempts').notNull().default(0),
      codeHash: pg.varchar('code_hash', { length: 128 }),
      expiresAt: ts('expires_at').notNull(),
      createdAt: ts('created_at')
        .notNull()
        .$defaultFn(() => new Date()),
    },
    (t) => [pg.index(`${tableName(settings, 'mfa_pending')}_user_idx`).on(t.userId)],
  );
  return { mfaConfig, mfaPending } as unknown as MfaTables;
}

/** The MFA module's tables for one dialect (the auth schema and its migrations read them). */
export function mfaTables(settings: Settings, dialect: Dialect): MfaTables {
  return dialect === 'pg' ? pgMfaTables(settings) : sqliteMfaTables(settings);
}
