import type { WebhookEventType } from '../kernel/ports.js';
import { WEBHOOK_EVENT_TYPES as EVENT_TYPES } from './event-types.js';

/** SPEC-3 §3 "Event types", in the SPEC's order (event-types.ts, shared with the admin console). */
export const WEBHOOK_EVENT_TYPES = EVENT_TYPES satisfies readonly WebhookEventType[];

/** Every endpoint subscribed to every event type (SPEC-3 §3: `events: ["*"]`). */
export const ALL_EVENTS = '*';

/** SPEC-3 §3: a secret is `whsec_` + base64 of 32 random bytes (Standard Webhooks' form). */
export const SECRET_PREFIX = 'whsec_';
export const SECRET_BYTES = 32;

/** SPEC-3 §3: after a rotation the previous secret also signs for 24 hours. */
export const ROTATION_OVERLAP_MS = 24 * 60 * 60 * 1000;

/** SPEC-3 §3: delivered and failed records older than 30 days are purged by the delivery worker. */
export const PURGE_AFTER_MS = 30 * 24 * 60 * 60 * 1000;
/** How often a worker purges (each host does; the deletes are idempotent). */
export const PURGE_EVERY_MS = 60 * 60 * 1000;

/**
 * How often a worker looks for due deliveries. SPEC-3 §3: a due attempt is made within 10 seconds while a host
 * runs; half a second keeps the lag of a fresh event under a second (docs/webhooks.md "Delivery").
 */
export const POLL_INTERVAL_MS = 500;
/** Deliveries one worker has in flight at most (a slow receiver never holds more sockets than this). */
export const MAX_IN_FLIGHT = 64;
/**
 * How long a kept-alive connection to a receiver may stay idle (connections.ts): long enough to serve the next
 * attempts of a busy endpoint, short enough that a change of its name's addresses is followed within seconds.
 */
export const IDLE_CONNECTION_MS = 4000;
/** Finished attempts settled by one statement at most (worker.ts). */
export const SETTLE_BATCH = 64;
/**
 * How long a finished attempt waits for others to be settled with it, ms. At a few hundred events a second a
 * 5 ms window settled one or two attempts a statement; 25 ms gathers about ten, and only delays when the
 * deliveries list shows the outcome (the attempt is made; a settlement lost with its process is an attempt made
 * again after the lease, at least once).
 */
export const SETTLE_DELAY_MS = 25;
/**
 * `total` of an endpoint's deliveries list is exact up to this many (or up to the requested page's end, further
 * on); beyond, it is one more than that, read as "more than", as the activity log's (docs/webhooks.md).
 */
export const DELIVERY_TOTAL_COUNT_BOUND = 10_000;
/** Deliveries claimed by one statement at most. */
export const CLAIM_BATCH = 64;
/**
 * Under a backlog, how long a freed slot waits for others to free before the worker claims for them, ms
 * (at once when half a batch is free): claiming for each slot as it freed made one claim statement per
 * delivery (docs/performance.md "Webhooks").
 */
export const CLAIM_GATHER_MS = 20;
/**
 * A claim holds a delivery for the attempt's time limit plus this margin; a host that dies holding it lets
 * another host take it once the lease ends (SPEC-3 §3: within 60 seconds of being due).
 */
export const LEASE_MARGIN_MS = 5000;

/** SPEC-3 §3 "a response body read at most to a small limit": bytes of a receiver's answer read. */
export const RESPONSE_BODY_LIMIT = 1024;
/** Characters of `lastError` kept. */
export const LAST_ERROR_MAX_LENGTH = 200;

export const URL_MAX_LENGTH = 2048;
export const DESCRIPTION_MAX_LENGTH = 500;

/**
 * Rows per multi-row insert of many events at once (`recordEach`): at most a few thousand bound parameters,
 * far below SQLite's 32,766 and PostgreSQL's 65,535.
 */
export const INSERT_CHUNK = 500;
