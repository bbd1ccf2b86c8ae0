import { tableName, type Settings } from '../kernel/config/schema.js';
import { defineTable, type Dialect } from '../kernel/db/define-table.js';
import { coreTables } from '../kernel/db/tables.js';
import { EMAIL_MAX_LENGTH, PROVIDER_NAME_MAX_LENGTH } from './constants.js';

/**
 * The identity table (SPEC-3 section 1): an identity is `(issuer, subject)` at a provider, linked to one user.
 * The unique index on the pair is what makes "an identity belongs to at most one user" hold under concurrent
 * callbacks. States and exchange codes are not stored here: they live minutes in the shared cache (flow-store.ts).
 */
export function socialLoginTables(settings: Settings, dialect: Dialect) {
  const { user } = coreTables(settings, dialect);
  const name = tableName(settings, 'user_identity');
  const userIdentity = defineTable(
    dialect,
    name,
    (c) => ({
      id: c.uuid('id').primaryKey(),
      userId: c
        .uuid('user_id')
        .notNull()
        .references(() => user.id, { onDelete: 'cascade' }),
      provider: c.text('provider', { length: PROVIDER_NAME_MAX_LENGTH }).notNull(),
      issuer: c.text('issuer', { length: 512 }).notNull(),
      subject: c.text('subject', { length: 255 }).notNull(),
      /** The email the provider gave at the last login through the identity (null: none). */
      email: c.text('email', { length: EMAIL_MAX_LENGTH }),
      createdAt: c
        .timestamp('created_at')
        .notNull()
        .$defaultFn(() => new Date()),
      lastUsedAt: c.timestamp('last_used_at'),
    }),
    (t, x) => [
      x.uniqueIndex(`${name}_issuer_subject_idx`).on(t.issuer, t.subject),
      x.index(`${name}_user_idx`).on(t.userId),
    ],
  );
  return { userIdentity };
}

export type SocialLoginTables = ReturnType<typeof socialLoginTables>;
