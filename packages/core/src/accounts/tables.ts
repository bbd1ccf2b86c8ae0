import { tableName, type Settings } from '../kernel/config/schema.js';
import { defineTable, type Dialect } from '../kernel/db/define-table.js';
import { coreTables } from '../kernel/db/tables.js';

/** What a one-time account token is for (SPEC-2 "One-time account tokens"). */
export type AccountTokenPurpose = 'password_reset' | 'email_verify' | 'invitation';

/**
 * `table_prefix + account_token` (SPEC-2 "One-time account tokens"): the SHA-256 digest of the token (never
 * the token), its purpose, user, the address it was sent to, expiry and use time.
 */
export function accountTables(settings: Settings, dialect: Dialect) {
  const { user } = coreTables(settings, dialect);
  const name = tableName(settings, 'account_token');
  const accountToken = defineTable(
    dialect,
    name,
    (c) => ({
      digest: c.text('digest', { length: 64 }).primaryKey(),
      purpose: c.text('purpose', { length: 16 }).$type<AccountTokenPurpose>().notNull(),
      userId: c
        .uuid('user_id')
        .notNull()
        .references(() => user.id, { onDelete: 'cascade' }),
      email: c.text('email', { length: 320 }).notNull(),
      expiresAt: c.timestamp('expires_at').notNull(),
      usedAt: c.timestamp('used_at'),
      createdAt: c.timestamp('created_at').notNull(),
    }),
    (t, x) => [x.index(`${name}_user_purpose_idx`).on(t.userId, t.purpose)],
  );
  return { accountToken };
}

export type AccountTables = ReturnType<typeof accountTables>;
