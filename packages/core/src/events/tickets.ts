import { createHash, randomBytes } from 'node:crypto';
import { and, eq, gt, lte } from 'drizzle-orm';
import type { Cache } from '../kernel/cache/cache.js';
import type { Database } from '../kernel/db/database.js';
import { TICKET_BYTES, TICKET_TTL_SECONDS } from './constants.js';
import type { WsTicketTable } from './tables.js';

/** What a redeemed ticket proves. */
export interface RedeemedTicket {
  userId: string;
  /** When it was issued: a password change after this refuses it (SPEC "Authentication" 8). */
  issuedAt: Date;
  /** The session of the access token that asked for it (SPEC-2 "Sessions"), when it had one. */
  sessionId: string | null;
}

/** Where tickets live (SPEC "Authentication" 12: `events_ticket_store`). */
export interface TicketStore {
  /** Issues a new ticket for the user (and session); returns the ticket (only its digest is stored). */
  issue(userId: string, sessionId?: string): Promise<string>;
  /** Consumes a ticket atomically; null when unknown, used or expired (SPEC "WebSocket ticket"). */
  redeem(ticket: string): Promise<RedeemedTicket | null>;
}

/** SHA-256 hex of a ticket: what is stored and looked up (SPEC "WebSocket ticket"). */
export function ticketDigest(ticket: string): string {
  return createHash('sha256').update(ticket).digest('hex');
}

function newTicket(): string {
  return randomBytes(TICKET_BYTES).toString('base64url');
}

/**
 * Tickets in the auth database (`events_ticket_store=database`, shared by workers). Issuing purges expired
 * rows; redeeming is one `DELETE … WHERE digest = ? AND expires_at > now RETURNING`, so two concurrent
 * redeems of one ticket cannot both win.
 */
export function createDatabaseTicketStore(deps: {
  db: Database;
  table: WsTicketTable;
  now: () => Date;
}): TicketStore {
  const { db, table, now } = deps;
  return {
    async issue(userId, sessionId) {
      const at = now();
      // SPEC "Authentication" 12: expired rows are purged when a new ticket is issued.
      await db.orm.delete(table).where(lte(table.expiresAt, at)).returning({ digest: table.digest });
      const ticket = newTicket();
      await db.orm
        .insert(table)
        .values({
          digest: ticketDigest(ticket),
          userId,
          sessionId: sessionId ?? null,
          createdAt: at,
          expiresAt: new Date(at.getTime() + TICKET_TTL_SECONDS * 1000),
        })
        .returning({ digest: table.digest });
      return ticket;
    },
    async redeem(ticket) {
      const [row] = await db.orm
        .delete(table)
        .where(and(eq(table.digest, ticketDigest(ticket)), gt(table.expiresAt, now())))
        .returning({ userId: table.userId, createdAt: table.createdAt, sessionId: table.sessionId });
      return row ? { userId: row.userId, issuedAt: row.createdAt, sessionId: row.sessionId } : null;
    },
  };
}

interface CachedTicket {
  userId: string;
  sessionId?: string | null;
  issuedAt: number;
  expiresAt: number;
}

/**
 * Tickets in the configured cache (`events_ticket_store=cache`): `take` reads and deletes in one step (single
 * use). The expiry is also kept in the value so the service clock decides, not only the cache TTL. A cache
 * that is down rejects with `cache.unavailable` (SPEC "Errors": a server error).
 */
export function createCacheTicketStore(deps: { cache: Cache; now: () => Date }): TicketStore {
  const { cache, now } = deps;
  const key = (ticket: string) => `events:ticket:${ticketDigest(ticket)}`;
  return {
    async issue(userId, sessionId) {
      const at = now().getTime();
      const ticket = newTicket();
      const value: CachedTicket = {
        userId,
        sessionId: sessionId ?? null,
        issuedAt: at,
        expiresAt: at + TICKET_TTL_SECONDS * 1000,
      };
      // SPEC-3 §7 rule 6: a pending ticket is security state, never evicted by other entries.
      await cache.set(key(ticket), value, TICKET_TTL_SECONDS, { keep: 'security' });
      return ticket;
    },
    async redeem(ticket) {
      const value = await cache.take<CachedTicket>(key(ticket));
      if (!value || value.expiresAt <= now().getTime()) return null;
      return {
        userId: value.userId,
        issuedAt: new Date(value.issuedAt),
        sessionId: value.sessionId ?? null,
      };
    },
  };
}
