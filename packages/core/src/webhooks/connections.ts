import { Pool } from 'undici';
import { IDLE_CONNECTION_MS, MAX_IN_FLIGHT } from './constants.js';
import { pinnedLookup } from './target.js';

/**
 * The kept-alive connections to one receiver's origin, and whether they were opened while private targets were
 * allowed (an attempt that may not reach them never uses such a connection, attempt.ts).
 */
export interface ReceiverConnections {
  pool: Pool;
  allowPrivate: boolean;
}

/**
 * The kept-alive connections of one delivery worker (docs/webhooks.md "Delivery"; docs/performance.md
 * "Webhooks"): one undici pool per endpoint origin, so consecutive attempts to a receiver reuse a connection
 * instead of paying a new TCP (and TLS) handshake and a resolution each. undici rather than Node's `http`
 * client: an attempt costs the worker about half the CPU (docs/performance.md "Webhooks").
 *
 * Why a reused connection keeps SPEC-3 §3's SSRF rule: every connection a pool opens resolves its host through
 * {@link pinnedLookup}, which checks every address the name resolves to and hands the socket only those, so a
 * connection exists only to an address that passed the check; reusing it sends the next attempt to that same
 * checked address, never to a new answer of the resolver. A connection lives at most {@link IDLE_CONNECTION_MS}
 * idle, so a change of the name's addresses is seen within seconds, and a pool is dropped once its origin is no
 * longer used (an endpoint's URL changed) and when the worker stops.
 */
export function createConnectionPool(options: { allowPrivate: boolean; tls?: { ca?: string | Buffer } }) {
  const pools = new Map<string, { connections: ReceiverConnections; lastUsed: number }>();
  const lookup = pinnedLookup(options.allowPrivate);
  return {
    /** The connections of `url`'s origin (a new pool on first use). */
    agentFor(url: URL): ReceiverConnections {
      const key = url.origin;
      let entry = pools.get(key);
      if (!entry) {
        const pool = new Pool(url.origin, {
          connections: MAX_IN_FLIGHT,
          // An idle connection is closed after this long, or sooner when the receiver's `Keep-Alive: timeout`
          // says so (undici closes it a second before the receiver would).
          keepAliveTimeout: IDLE_CONNECTION_MS,
          keepAliveMaxTimeout: IDLE_CONNECTION_MS,
          connect: { lookup: lookup as never, ...(options.tls ?? {}) },
        });
        entry = { connections: { pool, allowPrivate: options.allowPrivate }, lastUsed: 0 };
        pools.set(key, entry);
      }
      entry.lastUsed = Date.now();
      return entry.connections;
    },
    /**
     * Drops the pools no attempt used for longer than a connection may idle (their origin is gone: an endpoint's
     * URL changed, or it was deleted), never one with an attempt still running.
     */
    sweep(): void {
      const before = Date.now() - 2 * IDLE_CONNECTION_MS;
      for (const [key, entry] of pools) {
        const { running, pending } = entry.connections.pool.stats;
        if (entry.lastUsed < before && running === 0 && pending === 0) {
          void entry.connections.pool.destroy();
          pools.delete(key);
        }
      }
    },
    /** Closes every connection (the worker stops). */
    close(): void {
      for (const entry of pools.values()) void entry.connections.pool.destroy();
      pools.clear();
    },
  };
}

export type ConnectionPool = ReturnType<typeof createConnectionPool>;
