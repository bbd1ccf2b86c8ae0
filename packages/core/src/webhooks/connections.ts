import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import { IDLE_CONNECTION_MS, MAX_IN_FLIGHT } from './constants.js';
import { pinnedLookup } from './target.js';

/**
 * The kept-alive connections of one delivery worker (docs/webhooks.md "Delivery"; docs/performance.md
 * "Webhooks"): one agent per endpoint origin, so consecutive attempts to a receiver reuse a connection instead
 * of paying a new TCP (and TLS) handshake and a resolution each.
 *
 * Why a reused connection keeps SPEC-3 §3's SSRF rule: every connection an agent opens resolves its host through
 * {@link pinnedLookup}, which checks every address the name resolves to and hands the socket only those, so a
 * connection exists only to an address that passed the check; reusing it sends the next attempt to that same
 * checked address, never to a new answer of the resolver. Each attempt on a reused connection also checks the
 * address the socket is connected to again (attempt.ts), so no attempt reaches a private address while they are
 * refused. A connection lives at most {@link IDLE_CONNECTION_MS} idle, so a change of the name's addresses is
 * seen within seconds, and an agent is dropped once its origin is no longer used (an endpoint's URL changed)
 * and when the worker stops.
 */
export function createConnectionPool(options: { allowPrivate: boolean; tls?: { ca?: string | Buffer } }) {
  const agents = new Map<string, { agent: HttpAgent; lastUsed: number }>();
  const lookup = pinnedLookup(options.allowPrivate);
  return {
    /** The agent of `url`'s origin (a new one on first use). */
    agentFor(url: URL): HttpAgent {
      const key = url.origin;
      let entry = agents.get(key);
      if (!entry) {
        const agentOptions = {
          keepAlive: true,
          // An idle socket is closed after this long (Node also closes it a second before the receiver's own
          // `Keep-Alive: timeout` hint, so the receiver rarely closes a socket about to be reused).
          timeout: IDLE_CONNECTION_MS,
          maxSockets: MAX_IN_FLIGHT,
          maxFreeSockets: MAX_IN_FLIGHT,
          scheduling: 'lifo' as const,
          lookup: lookup as never,
        };
        const agent =
          url.protocol === 'https:'
            ? new HttpsAgent({ ...agentOptions, ...(options.tls ?? {}) })
            : new HttpAgent(agentOptions);
        entry = { agent, lastUsed: 0 };
        agents.set(key, entry);
      }
      entry.lastUsed = Date.now();
      return entry.agent;
    },
    /**
     * Drops the agents no attempt used for longer than a connection may idle (their origin is gone: an
     * endpoint's URL changed, or it was deleted), never one with an attempt still running.
     */
    sweep(): void {
      const before = Date.now() - 2 * IDLE_CONNECTION_MS;
      for (const [key, entry] of agents) {
        const busy =
          Object.keys(entry.agent.sockets).length > 0 || Object.keys(entry.agent.requests).length > 0;
        if (entry.lastUsed < before && !busy) {
          entry.agent.destroy();
          agents.delete(key);
        }
      }
    },
    /** Closes every connection (the worker stops). */
    close(): void {
      for (const entry of agents.values()) entry.agent.destroy();
      agents.clear();
    },
  };
}

export type ConnectionPool = ReturnType<typeof createConnectionPool>;
