import type { createClient } from 'redis';
import { redisConnectionOptions } from '../kernel/cache/redis-cache.js';
import type { Logger } from '../kernel/log/logger.js';
import type { UserChange } from '../kernel/ports.js';

/** Who receives an event, resolved from the SPEC audience table or a project audience. */
export interface Target {
  /** Every connected client (`events_public_types`, project audience `all`). */
  all?: boolean;
  /** Sockets whose user was a superuser when the connection opened. */
  superusers?: boolean;
  /** Sockets of these users. */
  userIds?: string[];
  /** Holders of this permission codename (read when the socket opened). */
  codename?: string;
}

/**
 * What travels between processes: an event (frame serialised once by the emitter), a user change, or ended
 * sessions (SPEC-2 "Sessions": their sockets close on every process).
 */
export type BusMessage =
  | { kind: 'event'; target: Target; frame: string }
  | { kind: 'user'; userId: string; change: UserChange }
  | { kind: 'sessions'; userId: string; sessionIds: string[] };

/** Carries messages to every process's sockets (this one included). */
export interface EventBus {
  /** True when other processes receive what is published (Redis). */
  readonly shared: boolean;
  publish(message: BusMessage): void;
  close(): Promise<void>;
}

/** With the in-process cache there is no other process to reach: deliver here at once. */
export function createLocalBus(deliver: (message: BusMessage) => void): EventBus {
  return {
    shared: false,
    publish: deliver,
    async close() {},
  };
}

/** A command that gets no answer within this time fails (a hung Redis must not hang emitters). */
const COMMAND_TIMEOUT_MS = 2_000;

export interface RedisBusOptions {
  /** `cache_url` (redis://, rediss:// or unix://). */
  url: string;
  /** `<cache_prefix>events`. */
  channel: string;
  log: Logger;
  /** Called for every message that arrives on the channel, including this process's own. */
  deliver(message: BusMessage): void;
}

/**
 * Fan-out across workers and hosts: every message is published on one Redis channel through a dedicated
 * publisher connection and delivered only from a dedicated subscriber connection, so each process (the
 * emitter included) delivers each event exactly once. The subscriber re-subscribes on reconnect; while Redis
 * is down, published events are lost and counted (sockets stay open).
 */
export async function createRedisBus(options: RedisBusOptions): Promise<EventBus> {
  const { channel, log } = options;
  // Loaded here, not at import (docs/performance.md, cold start): the client is ~580 CommonJS modules that a process on
  // the in-process cache never uses (the same as kernel/cache/redis-cache.ts).
  const { createClient } = await import('redis');
  const publisher = createClient({
    ...redisConnectionOptions(options.url),
    disableOfflineQueue: true,
    commandOptions: { timeout: COMMAND_TIMEOUT_MS },
  });
  const subscriber = publisher.duplicate({ disableOfflineQueue: false });
  for (const [role, client] of [
    ['publisher', publisher],
    ['subscriber', subscriber],
  ] as const) {
    let healthy = true; // log the first failure, then stay quiet until the connection is back
    client.on('error', (error: unknown) => {
      if (healthy) log.error(`event bus ${role} connection failed`, { exc: error });
      healthy = false;
    });
    client.on('ready', () => {
      if (!healthy) log.info(`event bus ${role} connection restored`);
      healthy = true;
    });
  }
  const onMessage = (text: string) => {
    let message: BusMessage;
    try {
      message = JSON.parse(text) as BusMessage;
    } catch (error) {
      log.warn('event bus: unreadable message ignored', { error: String(error) });
      return;
    }
    try {
      options.deliver(message);
    } catch (error) {
      log.error('event delivery failed', { exc: error });
    }
  };
  // Wait for the first connection attempt only: a Redis that starts later is picked up by the reconnect.
  await Promise.all([firstAttempt(publisher), firstAttempt(subscriber)]);
  // The client re-subscribes by itself after a reconnect; a subscribe that failed while Redis was down at
  // startup is retried on the next 'ready' (same listener, so the channel never gets it twice).
  let subscribed = false;
  const subscribe = () =>
    subscriber.subscribe(channel, onMessage).then(
      () => void (subscribed = true),
      (error: unknown) => log.error('event bus subscription failed', { exc: error }),
    );
  subscriber.on('ready', () => {
    if (!subscribed) void subscribe();
  });
  if (subscriber.isReady) await subscribe();

  // While Redis is down every publish fails: the first failure is logged with its error, the others are only
  // counted and reported in one line once a publish succeeds again, so that an outage under load does not log
  // a stack trace per event (docs/deployment.md "Redis").
  let lostEvents = 0;
  const lost = (error: unknown, kind: BusMessage['kind']) => {
    if (lostEvents++ === 0) {
      log.error('event publish failed: events are lost until Redis answers', { exc: error, kind });
    }
  };
  const published = () => {
    if (lostEvents === 0) return;
    log.warn(`event bus: ${lostEvents} events were lost while Redis did not answer`, { lost: lostEvents });
    lostEvents = 0;
  };

  return {
    shared: true,
    publish(message) {
      // Emitters (login, admin routes) must never fail because Redis is down: the event is lost and counted.
      try {
        publisher.publish(channel, JSON.stringify(message)).then(published, (error: unknown) => {
          lost(error, message.kind);
        });
      } catch (error) {
        lost(error, message.kind);
      }
    },
    async close() {
      for (const client of [subscriber, publisher]) {
        try {
          if (client.isReady) await client.close();
          else if (client.isOpen) client.destroy();
        } catch {
          client.destroy();
        }
      }
    },
  };
}

function firstAttempt(client: ReturnType<typeof createClient>): Promise<void> {
  const settled = new Promise<void>((resolve) => {
    client.once('ready', resolve);
    client.once('error', () => resolve());
  });
  client.connect().catch(() => undefined);
  return settled;
}
