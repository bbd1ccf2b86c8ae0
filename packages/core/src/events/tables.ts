import * as pg from 'drizzle-orm/pg-core';
import * as sq from 'drizzle-orm/sqlite-core';
import { tableName, type Settings } from '../kernel/config/schema.js';
import { pgCoreTables, sqliteCoreTables, type Dialect } from '../kernel/db/tables.js';

/**
 * The WebSocket ticket table (SPEC "WebSocket ticket"), table_prefix + `ws_ticket`: only the SHA-256 digest
 * of a ticket is stored (hex, the primary key). `created_at` lets a redeem refuse a ticket issued before the
 * user's last password change, `session_id` ties the socket to the session of the token that asked for the
 * ticket (SPEC-2 "Sessions"). Rows of a deleted user go with it (cascade).
 */
export function sqliteEventsTables(settings: Settings) {
  const { user } = sqliteCoreTables(settings);
  const name = tableName(settings, 'ws_ticket');
  const wsTicket = sq.sqliteTable(
    name,
    {
      digest: sq.text('digest', { length: 64 }).primaryKey(),
      userId: sq
        .text('user_id')
        .notNull()
        .references(() => user.id, { onDelete: 'cascade' }),
      expiresAt: sq.integer('expires_at', { mode: 'timestamp_ms' }).notNull(),
      createdAt: sq.integer('created_at', { mode: 'timestamp_ms' }).notNull(),
      /** The session of the access token that asked for it (SPEC-2 "Sessions": its sockets close with it). */
      sessionId: sq.text('session_id'),
    },
    (t) => [sq.index(`${name}_expires_idx`).on(t.expiresAt), sq.index(`${name}_user_idx`).on(t.userId)],
  );
  return { wsTicket };
}

export type EventsTables = ReturnType<typeof sqliteEventsTables>;
export type WsTicketTable = EventsTables['wsTicket'];

const ts = (col: string) => pg.timestamp(col, { withTimezone: true, mode: 'date' });

/** The PostgreSQL variant, shaped like the SQLite one (same property names and value types). */
export function pgEventsTables(settings: Settings): EventsTables {
  // pgCoreTables is typed as the SQLite variant (see kernel/db/tables.ts); its columns are PostgreSQL ones.
  const { user } = pgCoreTables(settings) as unknown as { user: { id: pg.PgColumn } };
  const name = tableName(settings, 'ws_ticket');
  const wsTicket = pg.pgTable(
    name,
    {
      digest: pg.varchar('digest', { length: 64 }).primaryKey(),
      userId: pg
        .uuid('user_id')
        .notNull()
        .references(() => user.id, { onDelete: 'cascade' }),
      expiresAt: ts('expires_at').notNull(),
      createdAt: ts('created_at').notNull(),
      sessionId: pg.uuid('session_id'),
    },
    (t) => [pg.index(`${name}_expires_idx`).on(t.expiresAt), pg.index(`${name}_user_idx`).on(t.userId)],
  );
  return { wsTicket } as unknown as EventsTables;
}

/** The events module's tables for one dialect (the auth schema and its migrations read them). */
export function eventsTables(settings: Settings, dialect: Dialect): EventsTables {
  return dialect === 'pg' ? pgEventsTables(settings) : sqliteEventsTables(settings);
}
