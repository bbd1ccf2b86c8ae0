import { randomUUID } from 'node:crypto';
import { and, count, desc, eq, inArray, lt, lte, ne, or, sql } from 'drizzle-orm';
import type { Database, Orm } from '../kernel/db/database.js';
import { ALL_EVENTS, INSERT_CHUNK } from './constants.js';
import type { WebhookTables } from './tables.js';

export type EndpointRow = WebhookTables['webhookEndpoint']['$inferSelect'];
export type DeliveryRow = WebhookTables['webhookDelivery']['$inferSelect'];
export type DeliveryStatus = 'pending' | 'succeeded' | 'failed';

/** A delivery with its event, as the list route shows it. */
export type DeliveryWithType = DeliveryRow & { type: string };

/** A claimed delivery with what its attempt needs: the event and the endpoint's URL and secrets. */
export interface ClaimedDelivery {
  id: number;
  attempts: number;
  eventId: string;
  type: string;
  data: string;
  eventCreatedAt: Date;
  endpointId: string;
  url: string;
  enabled: boolean;
  secret: string;
  previousSecret: string | null;
  previousSecretExpiresAt: Date | null;
}

/** How an attempt settles its delivery (only while the claim that made it still holds it). */
export interface Settlement {
  status: DeliveryStatus;
  attempts: number;
  lastStatusCode: number | null;
  lastError: string | null;
  nextAttemptAt: Date | null;
  deliveredAt: Date | null;
}

/** `"type"` as a LIKE pattern over an endpoint's JSON array of event types (`%`, `_`, `\` escaped). */
function memberPattern(type: string): string {
  return `%${JSON.stringify(type).replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/** Every query of the webhooks feature (SPEC-3 §3). */
export function createWebhookStore(db: Database, tables: WebhookTables) {
  const { webhookEndpoint: ep, webhookEvent: ev, webhookDelivery: d } = tables;
  const orm = db.orm;
  const escapeLike = (pattern: string) => sql`${pattern} escape '\\'`;

  /** Stores the event and one pending delivery per endpoint in `endpointIds`, in `tx`. */
  async function insertEvent(tx: Orm, type: string, data: unknown, endpointIds: string[], now: Date) {
    const id = randomUUID();
    await tx.insert(ev).values({ id, type, data: JSON.stringify(data), createdAt: now });
    await tx.insert(d).values(
      endpointIds.map((endpointId) => ({
        eventId: id,
        endpointId,
        status: 'pending',
        attempts: 0,
        nextAttemptAt: now,
        createdAt: now,
      })),
    );
    return id;
  }

  /** Ends the endpoint's pending deliveries as failed (SPEC-3 §3: at a disabling or a 410). */
  async function failPending(tx: Orm, endpointId: string, reason: string): Promise<void> {
    await tx
      .update(d)
      .set({ status: 'failed', nextAttemptAt: null, leasedBy: null, lastError: reason })
      .where(and(eq(d.endpointId, endpointId), eq(d.status, 'pending')));
  }

  /** The enabled endpoints subscribed to `type` (one read of a small table). */
  async function subscribers(tx: Orm, type: string): Promise<string[]> {
    const rows = await tx
      .select({ id: ep.id })
      .from(ep)
      .where(
        and(
          eq(ep.enabled, true),
          or(
            sql`${ep.events} like ${escapeLike(memberPattern(type))}`,
            sql`${ep.events} like ${escapeLike(memberPattern(ALL_EVENTS))}`,
          ),
        ),
      );
    return rows.map((row) => row.id);
  }

  return {
    /**
     * The outbox (SPEC-3 §3): in the caller's transaction, the event for every enabled endpoint subscribed to
     * `type` (one indexed read of a small table; nothing is written when none is).
     */
    async record(tx: Orm, type: string, data: unknown, now: Date): Promise<string | null> {
      const subscribed = await subscribers(tx, type);
      if (subscribed.length === 0) return null;
      return insertEvent(tx, type, data, subscribed, now);
    },

    /**
     * Many events of one type in the caller's transaction: one read of the endpoints, then multi-row inserts
     * of {@link INSERT_CHUNK} rows (a change reaching 10,000 users costs a few dozen statements, not 30,000).
     */
    async recordEach(tx: Orm, type: string, data: readonly unknown[], now: Date): Promise<void> {
      if (data.length === 0) return;
      const subscribed = await subscribers(tx, type);
      if (subscribed.length === 0) return;
      const events = data.map((item) => ({
        id: randomUUID(),
        type,
        data: JSON.stringify(item),
        createdAt: now,
      }));
      for (let i = 0; i < events.length; i += INSERT_CHUNK)
        await tx.insert(ev).values(events.slice(i, i + INSERT_CHUNK));
      const deliveries = events.flatMap((event) =>
        subscribed.map((endpointId) => ({
          eventId: event.id,
          endpointId,
          status: 'pending',
          attempts: 0,
          nextAttemptAt: now,
          createdAt: now,
        })),
      );
      for (let i = 0; i < deliveries.length; i += INSERT_CHUNK)
        await tx.insert(d).values(deliveries.slice(i, i + INSERT_CHUNK));
    },

    /** An event for one endpoint, whatever it subscribes to (`webhook.test`). */
    async recordFor(endpointId: string, type: string, data: unknown, now: Date): Promise<string> {
      return db.transaction((tx) => insertEvent(tx, type, data, [endpointId], now));
    },

    async createEndpoint(
      row: Omit<EndpointRow, 'previousSecret' | 'previousSecretExpiresAt'>,
    ): Promise<EndpointRow> {
      const [created] = await orm.insert(ep).values(row).returning();
      return created!;
    },

    async listEndpoints(): Promise<EndpointRow[]> {
      return orm.select().from(ep).orderBy(ep.createdAt, ep.id);
    },

    async findEndpoint(id: string): Promise<EndpointRow | undefined> {
      const [row] = await orm.select().from(ep).where(eq(ep.id, id)).limit(1);
      return row;
    },

    /** Applies `changes`; a disabling ends the pending deliveries in the same transaction. */
    async updateEndpoint(
      id: string,
      changes: Partial<Pick<EndpointRow, 'url' | 'events' | 'description' | 'enabled'>>,
    ): Promise<EndpointRow | undefined> {
      return db.transaction(async (tx) => {
        const [row] = await tx.update(ep).set(changes).where(eq(ep.id, id)).returning();
        if (row && changes.enabled === false) await failPending(tx, id, 'endpoint disabled');
        return row;
      });
    },

    /** Deletes the endpoint; its deliveries go with it (cascade), so none is attempted again. */
    async deleteEndpoint(id: string): Promise<boolean> {
      const rows = await orm.delete(ep).where(eq(ep.id, id)).returning({ id: ep.id });
      return rows.length > 0;
    },

    async rotateSecret(id: string, secret: string, previousExpiresAt: Date): Promise<boolean> {
      const rows = await orm
        .update(ep)
        .set({ secret, previousSecret: ep.secret, previousSecretExpiresAt: previousExpiresAt })
        .where(eq(ep.id, id))
        .returning({ id: ep.id });
      return rows.length > 0;
    },

    /** One page of the endpoint's deliveries, newest first, and how many there are. */
    async listDeliveries(
      endpointId: string,
      status: DeliveryStatus | undefined,
      limit: number,
      offset: number,
    ): Promise<{ rows: DeliveryWithType[]; total: number }> {
      const where = and(eq(d.endpointId, endpointId), status ? eq(d.status, status) : undefined);
      const [rows, [total]] = await Promise.all([
        orm
          .select({ delivery: d, type: ev.type })
          .from(d)
          .innerJoin(ev, eq(ev.id, d.eventId))
          .where(where)
          .orderBy(desc(d.id))
          .limit(limit)
          .offset(offset),
        orm.select({ n: count() }).from(d).where(where),
      ]);
      return { rows: rows.map((r) => ({ ...r.delivery, type: r.type })), total: total?.n ?? 0 };
    },

    async findDelivery(endpointId: string, id: number): Promise<DeliveryRow | undefined> {
      const [row] = await orm
        .select()
        .from(d)
        .where(and(eq(d.id, id), eq(d.endpointId, endpointId)))
        .limit(1);
      return row;
    },

    /** SPEC-3 §3 "redeliver": a new delivery of the same event (the same `webhook-id`), due now. */
    async redeliver(delivery: DeliveryRow, now: Date): Promise<void> {
      await orm.insert(d).values({
        eventId: delivery.eventId,
        endpointId: delivery.endpointId,
        status: 'pending',
        attempts: 0,
        nextAttemptAt: now,
        createdAt: now,
      });
    },

    /**
     * Claims up to `limit` due deliveries for `claim` until `leaseEnd` (SPEC-3 §3: each attempt is made by one
     * host). PostgreSQL: `FOR UPDATE SKIP LOCKED`, so hosts polling together take different rows without
     * waiting on each other; SQLite has one writer, the statement is atomic. A lease that ends without a
     * settlement (the host died) leaves the delivery due again.
     */
    async claim(now: Date, leaseEnd: Date, claim: string, limit: number): Promise<ClaimedDelivery[]> {
      const skipLocked = db.dialect === 'pg' ? sql` for update skip locked` : sql``;
      const due = and(eq(d.status, 'pending'), lte(d.nextAttemptAt, now));
      const claimed = await orm
        .update(d)
        .set({ nextAttemptAt: leaseEnd, leasedBy: claim })
        .where(
          sql`${d.id} in (select ${d.id} from ${d} where ${due} order by ${d.nextAttemptAt} limit ${limit}${skipLocked})`,
        )
        .returning({ id: d.id });
      if (claimed.length === 0) return [];
      return orm
        .select({
          id: d.id,
          attempts: d.attempts,
          eventId: ev.id,
          type: ev.type,
          data: ev.data,
          eventCreatedAt: ev.createdAt,
          endpointId: ep.id,
          url: ep.url,
          enabled: ep.enabled,
          secret: ep.secret,
          previousSecret: ep.previousSecret,
          previousSecretExpiresAt: ep.previousSecretExpiresAt,
        })
        .from(d)
        .innerJoin(ev, eq(ev.id, d.eventId))
        .innerJoin(ep, eq(ep.id, d.endpointId))
        .where(
          and(
            inArray(
              d.id,
              claimed.map((row) => row.id),
            ),
            eq(d.leasedBy, claim),
          ),
        );
    },

    /** Settles an attempt, unless its claim was lost meanwhile (ended by a disabling, or taken after the lease). */
    async settle(id: number, claim: string, settlement: Settlement): Promise<void> {
      await orm
        .update(d)
        .set({ ...settlement, leasedBy: null })
        .where(and(eq(d.id, id), eq(d.leasedBy, claim), eq(d.status, 'pending')));
    },

    /** SPEC-3 §3: a 410 fails the delivery and disables the endpoint, ending its pending deliveries. */
    async gone(id: number, claim: string, endpointId: string, settlement: Settlement): Promise<void> {
      await db.transaction(async (tx) => {
        await tx
          .update(d)
          .set({ ...settlement, leasedBy: null })
          .where(and(eq(d.id, id), eq(d.leasedBy, claim)));
        await tx.update(ep).set({ enabled: false }).where(eq(ep.id, endpointId));
        await failPending(tx, endpointId, 'endpoint disabled after 410 Gone');
      });
    },

    /** SPEC-3 §3: delivered and failed records older than `cutoff`, then events no delivery refers to. */
    async purge(cutoff: Date): Promise<void> {
      await orm.delete(d).where(and(ne(d.status, 'pending'), lt(d.createdAt, cutoff)));
      await orm
        .delete(ev)
        .where(
          and(lt(ev.createdAt, cutoff), sql`not exists (select 1 from ${d} where ${d.eventId} = ${ev.id})`),
        );
    },
  };
}

export type WebhookStore = ReturnType<typeof createWebhookStore>;
