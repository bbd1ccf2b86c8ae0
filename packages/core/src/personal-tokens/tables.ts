import { randomUUID } from 'node:crypto';
import { tableName, type Settings } from '../kernel/config/schema.js';
import { defineTable, type Dialect } from '../kernel/db/define-table.js';
import { coreTables } from '../kernel/db/tables.js';
import { TOKEN_NAME_MAX_LENGTH, TOKEN_PREFIX_LENGTH } from './constants.js';

/**
 * The personal access token table (SPEC-2 "Personal access tokens"). Only the SHA-256 digest of a token is
 * stored (hex, unique index: the guard's one lookup); `permissions` is a JSON array of codenames kept as text.
 * A deleted owner takes their tokens along (cascade).
 */
export function personalTokenTables(settings: Settings, dialect: Dialect) {
  const { user } = coreTables(settings, dialect);
  const name = tableName(settings, 'personal_token');
  const personalToken = defineTable(
    dialect,
    name,
    (c) => ({
      id: c.uuid('id').primaryKey().$defaultFn(randomUUID),
      userId: c
        .uuid('user_id')
        .notNull()
        .references(() => user.id, { onDelete: 'cascade' }),
      digest: c.text('digest', { length: 64 }).notNull().unique(),
      name: c.text('name', { length: TOKEN_NAME_MAX_LENGTH }).notNull(),
      prefix: c.text('prefix', { length: TOKEN_PREFIX_LENGTH }).notNull(),
      permissions: c.text('permissions').notNull().default('[]'),
      staff: c.boolean('staff').notNull().default(false),
      superuser: c.boolean('superuser').notNull().default(false),
      expiresAt: c.timestamp('expires_at'),
      createdAt: c.timestamp('created_at').notNull(),
      lastUsedAt: c.timestamp('last_used_at'),
    }),
    (t, x) => [x.index(`${name}_user_idx`).on(t.userId)],
  );
  return { personalToken };
}

export type PersonalTokenTables = ReturnType<typeof personalTokenTables>;
