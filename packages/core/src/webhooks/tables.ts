import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { tableName, type Settings } from '../kernel/config/schema.js';
import { defineTable, type Dialect } from '../kernel/db/define-table.js';
import { DESCRIPTION_MAX_LENGTH, URL_MAX_LENGTH } from './constants.js';

/**
 * The webhook tables (SPEC-3 §3; docs/webhooks.md): endpoints with their secrets, the outbox of events (written
 * in the transaction of the change each reports) and one delivery per event and endpoint. `events` of an
 * endpoint and `data` of an event are JSON kept as text: the body a receiver gets is the same on every attempt.
 */
export function webhookTables(settings: Settings, dialect: Dialect) {
  const endpointName = tableName(settings, 'webhook_endpoint');
  const eventName = tableName(settings, 'webhook_event');
  const deliveryName = tableName(settings, 'webhook_delivery');
  const webhookEndpoint = defineTable(dialect, endpointName, (c) => ({
    id: c.uuid('id').primaryKey().$defaultFn(randomUUID),
    url: c.text('url', { length: URL_MAX_LENGTH }).notNull(),
    /** JSON array of event types, or `["*"]`. */
    events: c.text('events').notNull(),
    description: c.text('description', { length: DESCRIPTION_MAX_LENGTH }).notNull().default(''),
    enabled: c.boolean('enabled').notNull().default(true),
    secret: c.text('secret').notNull(),
    /** The secret before the last rotation: it also signs until `previous_secret_expires_at`. */
    previousSecret: c.text('previous_secret'),
    previousSecretExpiresAt: c.timestamp('previous_secret_expires_at'),
    createdAt: c.timestamp('created_at').notNull(),
  }));
  const webhookEvent = defineTable(
    dialect,
    eventName,
    (c) => ({
      id: c.uuid('id').primaryKey(),
      type: c.text('type', { length: 64 }).notNull(),
      /** The event's `data`, JSON. */
      data: c.text('data').notNull(),
      createdAt: c.timestamp('created_at').notNull(),
    }),
    (t, x) => [x.index(`${eventName}_created_idx`).on(t.createdAt)],
  );
  const webhookDelivery = defineTable(
    dialect,
    deliveryName,
    (c) => ({
      id: c.bigserial('id'),
      eventId: c
        .uuid('event_id')
        .notNull()
        .references(() => webhookEvent.id, { onDelete: 'cascade' }),
      endpointId: c
        .uuid('endpoint_id')
        .notNull()
        .references(() => webhookEndpoint.id, { onDelete: 'cascade' }),
      /** `pending`, `succeeded` or `failed`. */
      status: c.text('status', { length: 16 }).notNull(),
      attempts: c.integer('attempts').notNull().default(0),
      lastStatusCode: c.integer('last_status_code'),
      lastError: c.text('last_error'),
      /**
       * When the next attempt is due; while a worker holds the delivery, the end of its lease (a host that
       * dies holding it leaves it due again then). Null once finished.
       */
      nextAttemptAt: c.timestamp('next_attempt_at'),
      /** The claim of the worker holding the delivery: only that claim may settle the attempt. */
      leasedBy: c.text('leased_by', { length: 64 }),
      createdAt: c.timestamp('created_at').notNull(),
      deliveredAt: c.timestamp('delivered_at'),
    }),
    (t, x) => [
      // The due index holds the pending deliveries only (the claim's `status = 'pending'`): a settlement's new
      // row version leaves it instead of adding an entry to it, and it stays the size of the backlog, not of 30
      // days of deliveries (docs/performance.md "The outbox's PostgreSQL cost, taken apart").
      x
        .index(`${deliveryName}_due_idx`)
        .on(t.nextAttemptAt)
        .where(sql`${sql.identifier('status')} = 'pending'`),
      x.index(`${deliveryName}_endpoint_idx`).on(t.endpointId, t.id),
      // An endpoint's failed deliveries, newest first: the deliveries list's `status=failed` page and its count
      // (SPEC-3 §3), which the endpoint index answers only by reading every delivery of the endpoint (150 ms at
      // a million; docs/performance.md "An endpoint's failed deliveries"). Failures are a small share, and a
      // delivery enters the index once, when it fails: neither the insert nor a successful settlement writes it.
      x
        .index(`${deliveryName}_failed_idx`)
        .on(t.endpointId, t.id)
        .where(sql`${sql.identifier('status')} = 'failed'`),
      x.index(`${deliveryName}_event_idx`).on(t.eventId),
    ],
  );
  return { webhookEndpoint, webhookEvent, webhookDelivery };
}

export type WebhookTables = ReturnType<typeof webhookTables>;
