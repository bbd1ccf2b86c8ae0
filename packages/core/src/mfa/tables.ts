import { tableName, type Settings } from '../kernel/config/schema.js';
import { defineTable, type Dialect } from '../kernel/db/define-table.js';
import { coreTables } from '../kernel/db/tables.js';
import { TOTP_SECRET_COLUMN_LENGTH } from './constants.js';

/** The methods of SPEC "MFA configuration". */
export type MfaMethod = 'totp' | 'email' | 'sms';

/**
 * The MFA tables (SPEC "MFA configuration", "MFA pending challenge").
 *
 * `backup_codes` is a JSON array of code hashes kept as text, so that consuming one code is a
 * compare-and-swap on the whole text (`UPDATE … WHERE backup_codes = <old>`), identical on both dialects.
 */
export function mfaTables(settings: Settings, dialect: Dialect) {
  const { user } = coreTables(settings, dialect);
  const mfaConfig = defineTable(dialect, tableName(settings, 'mfa_config'), (c) => ({
    userId: c
      .uuid('user_id')
      .primaryKey()
      .references(() => user.id, { onDelete: 'cascade' }),
    method: c.text('method', { length: 16 }).$type<MfaMethod>().notNull(),
    isActive: c.boolean('is_active').notNull().default(false),
    /** `enc:v1:<base64>` (AES-256-GCM) or, for rows written before 0.10, the plain base32 secret. */
    totpSecret: c.text('totp_secret', { length: TOTP_SECRET_COLUMN_LENGTH }),
    lastTotpStep: c.bigint('last_totp_step'),
    backupCodes: c.text('backup_codes').notNull().default('[]'),
    phoneNumber: c.text('phone_number', { length: 32 }),
    pendingCodeHash: c.text('pending_code_hash', { length: 128 }),
    pendingCodeExpiresAt: c.timestamp('pending_code_expires_at'),
    pendingAttempts: c.integer('pending_attempts').notNull().default(0),
    lastSentAt: c.timestamp('last_sent_at'),
    createdAt: c
      .timestamp('created_at')
      .notNull()
      .$defaultFn(() => new Date()),
  }));
  const mfaPending = defineTable(
    dialect,
    tableName(settings, 'mfa_pending'),
    (c) => ({
      // `text` on SQLite since the first schema, `varchar(64)` on PostgreSQL.
      id: c.text('id', { length: 64, sqliteLength: false }).primaryKey(),
      userId: c
        .uuid('user_id')
        .notNull()
        .references(() => user.id, { onDelete: 'cascade' }),
      attempts: c.integer('attempts').notNull().default(0),
      codeHash: c.text('code_hash', { length: 128 }),
      expiresAt: c.timestamp('expires_at').notNull(),
      createdAt: c
        .timestamp('created_at')
        .notNull()
        .$defaultFn(() => new Date()),
    }),
    (t, x) => [x.index(`${tableName(settings, 'mfa_pending')}_user_idx`).on(t.userId)],
  );
  return { mfaConfig, mfaPending };
}

export type MfaTables = ReturnType<typeof mfaTables>;
