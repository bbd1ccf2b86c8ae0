import { tableName, type Settings } from '../kernel/config/schema.js';
import { defineTable, type Dialect } from '../kernel/db/define-table.js';
import { coreTables } from '../kernel/db/tables.js';
import { SESSION_IP_MAX_LENGTH, SESSION_USER_AGENT_MAX_LENGTH } from './constants.js';

/**
 * The session table (SPEC-2 "Sessions"), table_prefix + `session`: one row per login. Its `id` is the
 * login's refresh family (the `fam` claim of its refresh tokens and the `sid` claim of its access tokens).
 * A revoked session keeps its row, with `revoked_at`, until its last refresh token has expired, so a refresh
 * in flight can never bring it back; rows of a deleted user go with it (cascade).
 */
export function authTables(settings: Settings, dialect: Dialect) {
  const { user } = coreTables(settings, dialect);
  const name = tableName(settings, 'session');
  const session = defineTable(
    dialect,
    name,
    (c) => ({
      id: c.uuid('id').primaryKey(),
      userId: c
        .uuid('user_id')
        .notNull()
        .references(() => user.id, { onDelete: 'cascade' }),
      createdAt: c.timestamp('created_at').notNull(),
      lastUsedAt: c.timestamp('last_used_at').notNull(),
      userAgent: c.text('user_agent', { length: SESSION_USER_AGENT_MAX_LENGTH }).notNull().default(''),
      ip: c.text('ip', { length: SESSION_IP_MAX_LENGTH }).notNull().default(''),
      revokedAt: c.timestamp('revoked_at'),
      // SPEC-3 §4: an impersonation session names its superuser (the `act` claim's `sub`) and ends with its
      // only token (no refresh token); both null on a login's session. No foreign key: a deleted superuser
      // leaves an id no user has, which the guard's state check reads as ended (session-store.ts).
      impersonatorId: c.uuid('impersonator_id'),
      expiresAt: c.timestamp('expires_at'),
    }),
    (t, x) => [
      // (user_id, last_used_at): a login purges the user's stale sessions as a range of it (auth/store.ts);
      // the user's list and lookups by user_id alone use its prefix.
      x.index(`${name}_user_last_used_idx`).on(t.userId, t.lastUsedAt),
      x.index(`${name}_last_used_idx`).on(t.lastUsedAt),
    ],
  );
  return { session };
}

export type AuthTables = ReturnType<typeof authTables>;
export type SessionTable = AuthTables['session'];
