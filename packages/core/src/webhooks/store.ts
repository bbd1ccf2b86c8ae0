import { randomUUID } from 'node:crypto';
import { and, count, desc, eq, inArray, lt, lte, ne, or, sql, type SQL } from 'drizzle-orm';
import type { Database, Orm } from '../kernel/db/database.js';
import { allIn, columnName as column } from '../kernel/db/sql.js';
import { ALL_EVENTS, DELIVERY_TOTAL_COUNT_BOUND, INSERT_CHUNK } from './constants.js';
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

/** One finished attempt to settle: the delivery, the claim that made the attempt, and its outcome. */
export interface SettleItem {
  id: number;
  claim: string;
  settlement: Settlement;
}

/** A row of PostgreSQL's claim statement, as postgres-js returns it (bigint and timestamps as text). */
interface ClaimRow {
  id: number | string;
  attempts: number;
  eventId: string;
  type: string;
  data: string;
  eventCreatedAt: string | Date;
  endpointId: string;
  url: string;
  enabled: boolean;
  secret: string;
  previousSecret: string | null;
  previousSecretExpiresAt: string | Date | null;
}

/** PostgreSQL's `timestamptz` text (`2026-11-27 14:00:00.123+00`) as a `Date`, as drizzle reads it. */
const dateOf = (value: string | Date): Date => (value instanceof Date ? value : new Date(value));

function claimedOf(row: ClaimRow): ClaimedDelivery {
  return {
    id: Number(row.id),
    attempts: row.attempts,
    eventId: row.eventId,
    type: row.type,
    data: row.data,
    eventCreatedAt: dateOf(row.eventCreatedAt),
    endpointId: row.endpointId,
    url: row.url,
    enabled: row.enabled,
    secret: row.secret,
    previousSecret: row.previousSecret,
    previousSecretExpiresAt:
      row.previousSecretExpiresAt === null ? null : dateOf(row.previousSecretExpiresAt),
  };
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

  /** An endpoint is enabled and subscribed to `type`. */
  const subscribedTo = (type: string) =>
    and(
      eq(ep.enabled, true),
      or(
        sql`${ep.events} like ${escapeLike(memberPattern(type))}`,
        sql`${ep.events} like ${escapeLike(memberPattern(ALL_EVENTS))}`,
      ),
    )!;

  /** The enabled endpoints subscribed to `type` (one read of a small table). */
  async function subscribers(tx: Orm, type: string): Promise<string[]> {
    const rows = await tx.select({ id: ep.id }).from(ep).where(subscribedTo(type));
    return rows.map((row) => row.id);
  }

  /**
   * PostgreSQL's claim (SPEC-3 §3: each attempt is made by one host): the due rows locked `FOR UPDATE SKIP
   * LOCKED` (hosts polling together take different rows without waiting on each other), leased to `claim`, and
   * returned with their event and endpoint. Timestamps go as ISO text and come back as PostgreSQL's text
   * (drizzle's client leaves them unparsed), read by {@link claimedOf}.
   */
  const claimStatement = (now: Date, leaseEnd: Date, claim: string, limit: number) => sql`
    with claimed as (
      update ${d} set ${column(d.nextAttemptAt)} = ${leaseEnd.toISOString()}::timestamptz,
        ${column(d.leasedBy)} = ${claim}
      where ${d.id} in (
        select ${d.id} from ${d}
        where ${d.status} = 'pending' and ${d.nextAttemptAt} <= ${now.toISOString()}::timestamptz
        order by ${d.nextAttemptAt} limit ${limit}::int for update skip locked)
      returning ${d.id} as id, ${d.attempts} as attempts, ${d.eventId} as event_id, ${d.endpointId} as endpoint_id
    )
    select claimed.id, claimed.attempts, ${ev.id} as "eventId", ${ev.type} as type, ${ev.data} as data,
      ${ev.createdAt} as "eventCreatedAt", ${ep.id} as "endpointId", ${ep.url} as url, ${ep.enabled} as enabled,
      ${ep.secret} as secret, ${ep.previousSecret} as "previousSecret",
      ${ep.previousSecretExpiresAt} as "previousSecretExpiresAt"
    from claimed
    join ${ev} on ${ev.id} = claimed.event_id
    join ${ep} on ${ep.id} = claimed.endpoint_id`;

  /**
   * PostgreSQL's settlement of a batch: the settlements as one JSON parameter (the text never changes with the
   * batch's size, so it stays prepared), each row guarded by its own claim.
   */
  const settleStatement = (items: readonly SettleItem[]) => {
    const rows = items.map(({ id, claim, settlement: s }) => ({
      id,
      claim,
      status: s.status,
      attempts: s.attempts,
      last_status_code: s.lastStatusCode,
      last_error: s.lastError,
      next_attempt_at: s.nextAttemptAt?.toISOString() ?? null,
      delivered_at: s.deliveredAt?.toISOString() ?? null,
    }));
    return sql`update ${d} set ${column(d.status)} = s.status, ${column(d.attempts)} = s.attempts,
      ${column(d.lastStatusCode)} = s.last_status_code, ${column(d.lastError)} = s.last_error,
      ${column(d.nextAttemptAt)} = s.next_attempt_at, ${column(d.deliveredAt)} = s.delivered_at,
      ${column(d.leasedBy)} = null
    from json_to_recordset(${JSON.stringify(rows)}::text::json) as s(id bigint, claim text, status text,
      attempts int, last_status_code int, last_error text, next_attempt_at timestamptz, delivered_at timestamptz)
    where ${d.id} = s.id and ${d.leasedBy} = s.claim and ${d.status} = 'pending'`;
  };

  /**
   * PostgreSQL's outbox rows of one event as common table expressions (`subscribed`, `event`, `outbox`): the
   * enabled endpoints subscribed to `type`, the event `id` with its `data` (JSON text) at `at` (ISO text) when
   * there is one (and, with `gate`, only when that CTE has a row), a pending delivery per endpoint. The three
   * values are parameters, or placeholders of a kept statement. Data-modifying CTEs must be at a statement's top
   * level, so the caller writes the `with`.
   */
  const outboxCtes = (type: string, event: { id: unknown; data: unknown; at: unknown }, gate?: SQL) =>
    sql`subscribed as (select ${ep.id} as id from ${ep} where ${subscribedTo(type)}),
      event as (
        insert into ${ev} (${column(ev.id)}, ${column(ev.type)}, ${column(ev.data)}, ${column(ev.createdAt)})
        select ${event.id}::uuid, ${type}, ${event.data}, ${event.at}::timestamptz
        where exists (select 1 from subscribed)${gate ? sql` and exists (select 1 from ${gate})` : sql``}
        returning ${ev.id} as id, ${ev.createdAt} as at),
      outbox as (
        insert into ${d} (${column(d.eventId)}, ${column(d.endpointId)}, ${column(d.status)},
          ${column(d.attempts)}, ${column(d.nextAttemptAt)}, ${column(d.createdAt)})
        select event.id, subscribed.id, 'pending', 0, event.at, event.at
        from event cross join subscribed
        returning ${column(d.eventId)} as id)`;

  /**
   * The statements of `recordWith`, kept per change statement and event type: a caller that keeps its change
   * (one per shape, with placeholders) has the whole statement compiled once (sql.ts `compiledWith`).
   */
  const withOutbox = new WeakMap<SQL, Map<string, SQL>>();
  const EVENT_PLACEHOLDERS = {
    id: sql.placeholder('webhookEventId'),
    data: sql.placeholder('webhookEventData'),
    at: sql.placeholder('webhookEventAt'),
  };

  return {
    /**
     * The outbox (SPEC-3 §3): in the caller's transaction, the event for every enabled endpoint subscribed to
     * `type` (one indexed read of a small table; nothing is written when none is).
     */
    async record(tx: Orm, type: string, data: unknown, now: Date): Promise<string | null> {
      if (db.dialect === 'pg') {
        // One statement, one round trip (docs/performance.md "Webhooks"): the change's transaction often holds
        // a row lock (a PATCH of a user holds the user's row) until it commits, so every round trip added
        // before the commit lengthens the time other writers of that row wait.
        const id = randomUUID();
        const ctes = outboxCtes(type, { id, data: JSON.stringify(data), at: now.toISOString() });
        const rows = await allIn<{ id: string }>(tx, 'pg', sql`with ${ctes} select id from outbox`);
        return rows.length > 0 ? id : null;
      }
      const subscribed = await subscribers(tx, type);
      if (subscribed.length === 0) return null;
      return insertEvent(tx, type, data, subscribed, now);
    },

    /**
     * PostgreSQL: `change` (an UPDATE, INSERT or DELETE with RETURNING, its placeholders filled from `values`)
     * and the event, in one statement outside any transaction: the event is stored only when `change` returns a
     * row, and commits with it (a statement is atomic). The rows `change` returned, as the driver gives them
     * (stored column names). What a transaction of the change and {@link record} would do, without its three
     * extra round trips (BEGIN, the outbox statement, COMMIT) while the change's row lock is held
     * (docs/performance.md "Webhooks"). A prepared statement: PostgreSQL parses and plans it once per connection.
     */
    async recordWith(
      change: SQL,
      values: Record<string, unknown>,
      type: string,
      data: unknown,
      now: Date,
    ): Promise<Record<string, unknown>[]> {
      if (db.dialect !== 'pg') throw new Error('recordWith is PostgreSQL only');
      let byType = withOutbox.get(change);
      if (!byType) withOutbox.set(change, (byType = new Map()));
      let statement = byType.get(type);
      if (!statement) {
        const ctes = outboxCtes(type, EVENT_PLACEHOLDERS, sql`changed`);
        statement = sql`with changed as (${change}), ${ctes} select * from changed`;
        byType.set(type, statement);
      }
      return db.allPrepared<Record<string, unknown>>(statement, {
        ...values,
        webhookEventId: randomUUID(),
        webhookEventData: JSON.stringify(data),
        webhookEventAt: now.toISOString(),
      });
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

    /**
     * One page of the endpoint's deliveries, newest first, and how many there are: exactly up to
     * {@link DELIVERY_TOTAL_COUNT_BOUND}, else one more than that (or than the page's end, further on), read as
     * "more than" (docs/webhooks.md): a busy endpoint has millions, and counting them all took longer than the
     * page.
     */
    async listDeliveries(
      endpointId: string,
      status: DeliveryStatus | undefined,
      limit: number,
      offset: number,
    ): Promise<{ rows: DeliveryWithType[]; total: number }> {
      const where = and(eq(d.endpointId, endpointId), status ? eq(d.status, status) : undefined);
      const upTo = Math.max(DELIVERY_TOTAL_COUNT_BOUND, offset + limit) + 1;
      const bounded = orm
        .select({ one: sql`1` })
        .from(d)
        .where(where)
        .limit(upTo)
        .as('bounded');
      const [rows, [total]] = await Promise.all([
        orm
          .select({ delivery: d, type: ev.type })
          .from(d)
          .innerJoin(ev, eq(ev.id, d.eventId))
          .where(where)
          .orderBy(desc(d.id))
          .limit(limit)
          .offset(offset),
        orm.select({ n: count() }).from(bounded),
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
      if (db.dialect === 'pg') {
        // One statement and one round trip (docs/performance.md "Webhooks"): the claiming UPDATE in a CTE,
        // joined to the event and the endpoint, its text constant so postgres-js keeps it prepared.
        const rows = await db.all<ClaimRow>(claimStatement(now, leaseEnd, claim, limit));
        return rows.map(claimedOf);
      }
      const due = and(eq(d.status, 'pending'), lte(d.nextAttemptAt, now));
      const claimed = await orm
        .update(d)
        .set({ nextAttemptAt: leaseEnd, leasedBy: claim })
        .where(
          sql`${d.id} in (select ${d.id} from ${d} where ${due} order by ${d.nextAttemptAt} limit ${limit})`,
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

    /**
     * Settles finished attempts, each unless its claim was lost meanwhile (ended by a disabling, or taken by
     * another host after the lease): a row is written only while `leased_by` is still the attempt's claim and
     * the delivery pending. PostgreSQL: one statement for the whole batch (one commit, one WAL flush, where one
     * update per attempt cost a flush each); SQLite: one transaction.
     */
    async settleMany(items: readonly SettleItem[]): Promise<void> {
      if (items.length === 0) return;
      if (db.dialect === 'pg') {
        await db.all(settleStatement(items));
        return;
      }
      await db.transaction(async (tx) => {
        for (const { id, claim, settlement } of items) {
          await tx
            .update(d)
            .set({ ...settlement, leasedBy: null })
            .where(and(eq(d.id, id), eq(d.leasedBy, claim), eq(d.status, 'pending')));
        }
      });
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
