import { tableName, type Settings } from '../kernel/config/schema.js';
import { defineTable, type Dialect } from '../kernel/db/define-table.js';
import { coreTables } from '../kernel/db/tables.js';

/**
 * The WebSocket ticket table (SPEC "WebSocket ticket"), table_prefix + `ws_ticket`: only the SHA-256 digest
 * of a ticket is stored (hex, the primary key). `created_at` lets a redeem refuse a ticket issued before the
 * user's last password change, `session_id` ties the socket to the session of the token that asked for the
 * ticket (SPEC-2 "Sessions"). Rows of a deleted user go with it (cascade).
 */
export function eventsTables(settings: Settings, dialect: Dialect) {
  const { user } = coreTables(settings, dialect);
  const name = tableName(settings, 'ws_ticket');
  const wsTicket = defineTable(
    dialect,
    name,
    (c) => ({
      digest: c.text('digest', { length: 64 }).primaryKey(),
      userId: c
        .uuid('user_id')
        .notNull()
        .references(() => user.id, { onDelete: 'cascade' }),
      expiresAt: c.timestamp('expires_at').notNull(),
      createdAt: c.timestamp('created_at').notNull(),
      /** The session of the access token that asked for it (SPEC-2 "Sessions": its sockets close with it). */
      sessionId: c.uuid('session_id'),
    }),
    (t, x) => [x.index(`${name}_expires_idx`).on(t.expiresAt), x.index(`${name}_user_idx`).on(t.userId)],
  );
  return { wsTicket };
}

export type EventsTables = ReturnType<typeof eventsTables>;
export type WsTicketTable = EventsTables['wsTicket'];
