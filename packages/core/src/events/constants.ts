/** SPEC "Limits": WebSocket ticket validity (seconds), single use. */
export const TICKET_TTL_SECONDS = 30;
/** Random bytes of a ticket before encoding (256 bits; only the SHA-256 digest is stored). */
export const TICKET_BYTES = 32;
/** SPEC "Limits": WebSocket ping and user re-check interval. */
export const PING_INTERVAL_MS = 30_000;
/** SPEC "Limits": snapshot size (activity entries). */
export const SNAPSHOT_SIZE = 20;
/**
 * Bytes a client may leave unread before it is dropped (back-pressure): a stalled reader must not make the
 * server buffer every later event in memory.
 */
export const MAX_BUFFERED_BYTES = 1024 * 1024;
/** After a back-pressure close, the close frame waits behind the unread data; the socket is cut after this. */
export const BACKPRESSURE_TERMINATE_MS = 5_000;
/** Clients only listen; a larger frame from them is a protocol abuse (ws closes with 1009). */
export const MAX_CLIENT_FRAME_BYTES = 4 * 1024;
/** The route prefix of SPEC "Event routes" (under `/api` + `api_v1_prefix`). */
export const EVENTS_PREFIX = '/core/events';

/** Close codes of SPEC "Connection rules" (4401, 4403, 1011) and RFC 6455 (1001, 1013). */
export const CLOSE_CODES = {
  /** Server going away (graceful shutdown). */
  goingAway: 1001,
  /** Unexpected server error: retry later with back-off. */
  serverError: 1011,
  /** Try again later: the client did not read fast enough (back-pressure). */
  tryAgainLater: 1013,
  /** Missing, invalid, expired or used credential; user gone, deactivated or password changed. */
  unauthorized: 4401,
  /** Superuser status changed: reconnect with a new ticket. */
  forbidden: 4403,
} as const;
