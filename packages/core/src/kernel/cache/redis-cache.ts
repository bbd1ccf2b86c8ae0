import type { createClient, RedisClientOptions } from 'redis';
import { SvcError } from '../errors/svc-error.js';
import type { Logger } from '../log/logger.js';
import { encode, ttlMilliseconds, type Cache, type CacheWriteOptions } from './cache.js';

/** A command that gets no answer within this time fails (a hung server must not hang requests). */
const COMMAND_TIMEOUT_MS = 2_000;
/** A connection attempt that is not established within this time fails and is retried. */
const CONNECT_TIMEOUT_MS = 2_000;
/** Ceiling of the reconnect back-off while the server is down. */
const MAX_RECONNECT_DELAY_MS = 2_000;

// INCR then EXPIRE only when the counter was just created, in one server-side step, so concurrent workers
// cannot extend the window (SPEC "Versioning" 0.10 to 0.11: expiry set on the first increment).
const INCR_SCRIPT = `
local value = redis.call('INCR', KEYS[1])
if value == 1 and tonumber(ARGV[1]) > 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return value`;

type RedisClient = ReturnType<typeof createClient>;

/**
 * The shared cache (`cache_url` set): Redis through the `redis` client, values JSON-encoded, keys under
 * `cache_prefix`.
 *
 * While the server is unreachable every call rejects at once with `SvcError('cache.unavailable')` (503)
 * instead of queueing; the client reconnects in the background and errors are logged, never thrown.
 *
 * @example
 * const cache = await RedisCache.connect('redis://127.0.0.1:6379', 'svc:', log);
 * const attempts = await cache.incr('login:alice', 60);
 */
export class RedisCache implements Cache {
  readonly kind = 'redis';
  readonly #client: RedisClient;
  readonly #prefix: string;

  private constructor(client: RedisClient, prefix: string) {
    this.#client = client;
    this.#prefix = prefix;
  }

  /**
   * Opens a client and waits for its first connection attempt. When that attempt fails the cache is still
   * returned: calls reject with `cache.unavailable` until the background reconnect succeeds, so a Redis that
   * starts after the app (or restarts) does not take the process down.
   *
   * @param url `redis://`, `rediss://` or `unix://` (`cache_url`)
   * @param prefix put before every key (`cache_prefix`)
   * @param log receives connection errors and recoveries
   */
  static async connect(url: string, prefix: string, log?: Logger): Promise<RedisCache> {
    // docs/performance.md: loaded on first use; the redis client is ~570 of the ~910 CommonJS modules a start-up loads,
    // which a server on the memory cache never needs (cold start).
    const { createClient } = await import('redis');
    const client = createClient({
      ...redisConnectionOptions(url),
      // Without this, commands issued while disconnected wait in a queue until the server is back.
      disableOfflineQueue: true,
      commandOptions: { timeout: COMMAND_TIMEOUT_MS },
    });
    let connected = true; // report the first failure, then stay quiet until the connection is back
    // An 'error' event without a listener would crash the process; failures surface as rejected calls.
    client.on('error', (error: unknown) => {
      if (connected) log?.error('cache connection failed', { exc: error, server: serverName(url) });
      else log?.debug('cache reconnection failed', { error: String(error) });
      connected = false;
    });
    client.on('ready', () => {
      if (!connected) log?.info('cache connection restored', { server: serverName(url) });
      connected = true;
    });
    const firstAttempt = new Promise<void>((resolve) => {
      client.once('ready', resolve);
      client.once('error', () => resolve());
    });
    // With an unbounded reconnect strategy this settles only once connected or closed; errors were logged.
    client.connect().catch(() => undefined);
    await firstAttempt;
    if (client.isReady) await warnIfEvicting(client, url, log);
    return new RedisCache(client, prefix);
  }

  async get<T = unknown>(key: string): Promise<T | undefined> {
    const text = await this.#run(() => this.#client.get(this.#key(key)));
    return text === null ? undefined : (JSON.parse(text) as T);
  }

  async set(key: string, value: unknown, ttlSeconds?: number, options?: CacheWriteOptions): Promise<void> {
    const ms = keptTtl(ttlSeconds, options);
    const text = encode(value);
    await this.#run(() =>
      this.#client.set(this.#key(key), text, ms > 0 ? { expiration: { type: 'PX', value: ms } } : undefined),
    );
  }

  async setIfAbsent(
    key: string,
    value: unknown,
    ttlSeconds: number,
    options?: CacheWriteOptions,
  ): Promise<boolean> {
    const ms = keptTtl(ttlSeconds, options);
    const text = encode(value);
    const reply = await this.#run(() =>
      this.#client.set(this.#key(key), text, {
        condition: 'NX',
        ...(ms > 0 ? { expiration: { type: 'PX', value: ms } as const } : {}),
      }),
    );
    return reply !== null;
  }

  async delete(key: string): Promise<void> {
    await this.#run(() => this.#client.del(this.#key(key)));
  }

  async take<T = unknown>(key: string): Promise<T | undefined> {
    const text = await this.#run(() => this.#client.getDel(this.#key(key)));
    return text === null ? undefined : (JSON.parse(text) as T);
  }

  async incr(key: string, ttlSeconds: number): Promise<number> {
    const ms = ttlMilliseconds(ttlSeconds);
    const reply = await this.#run(() =>
      this.#client.eval(INCR_SCRIPT, { keys: [this.#key(key)], arguments: [String(ms)] }),
    );
    return Number(reply);
  }

  async ttl(key: string): Promise<number | undefined> {
    const ms = await this.#run(() => this.#client.pTTL(this.#key(key)));
    // PTTL: -2 absent, -1 no expiry. Rounded up like MemoryCache, so a fresh 2 s entry reports 2.
    return ms > 0 ? Math.ceil(ms / 1000) : undefined;
  }

  async close(): Promise<void> {
    // close() waits for pending replies, which never come while disconnected; destroy() rejects them.
    if (this.#client.isReady) await this.#client.close();
    else if (this.#client.isOpen) this.#client.destroy();
  }

  #key(key: string): string {
    return this.#prefix + key;
  }

  /** Runs one command; a client or server failure becomes `cache.unavailable` (SPEC "Errors": 503). */
  async #run<T>(command: () => Promise<T>): Promise<T> {
    try {
      return await command();
    } catch (error) {
      throw new SvcError('cache.unavailable', { cause: error });
    }
  }
}

/**
 * The TTL in milliseconds, refusing a kept entry without one as MemoryCache does. Redis itself evicts nothing
 * under `maxmemory-policy noeviction` (docs/deployment.md "Redis"): every entry is kept, and a full server
 * refuses the write (`cache.unavailable`) instead of dropping security state (SPEC-3 §7 rule 6).
 */
function keptTtl(ttlSeconds: number | undefined, options: CacheWriteOptions | undefined): number {
  const ms = ttlMilliseconds(ttlSeconds);
  if (options?.keep && ms === 0) throw new TypeError('a kept cache entry needs a TTL');
  return ms;
}

/**
 * Client options for a `cache_url` (also used by the events bus); the `redis` client parses redis:// and
 * rediss:// but not unix://.
 */
export function redisConnectionOptions(url: string): RedisClientOptions {
  const socket = {
    connectTimeout: CONNECT_TIMEOUT_MS,
    // Keep retrying (a cache outage is temporary), at most every MAX_RECONNECT_DELAY_MS.
    reconnectStrategy: (retries: number) => Math.min(100 * 2 ** retries, MAX_RECONNECT_DELAY_MS),
  };
  if (!url.startsWith('unix:')) return { url, socket };
  const parsed = new URL(url);
  const database = parsed.searchParams.get('db');
  return {
    socket: { ...socket, path: decodeURIComponent(parsed.pathname) },
    ...(parsed.username ? { username: decodeURIComponent(parsed.username) } : {}),
    ...(parsed.password ? { password: decodeURIComponent(parsed.password) } : {}),
    ...(database ? { database: Number(database) } : {}),
  };
}

/**
 * SPEC-3 §7 rule 6 holds on Redis only under `maxmemory-policy noeviction` (docs/deployment.md "Redis"): any
 * other policy may drop a cooldown or a pending challenge to make room. Said once at connect; a server that
 * refuses CONFIG (managed services often do) is left unchecked.
 */
async function warnIfEvicting(client: RedisClient, url: string, log: Logger | undefined): Promise<void> {
  try {
    const policy = (await client.configGet('maxmemory-policy'))['maxmemory-policy'];
    if (policy && policy !== 'noeviction') {
      log?.warn(
        `cache ${serverName(url)} evicts keys when full (maxmemory-policy ${policy}): set noeviction, or it may drop mail cooldowns and pending challenges (docs/deployment.md "Redis")`,
      );
    }
  } catch {
    // CONFIG disabled or renamed: nothing to say
  }
}

/** Where the cache is, for logs: never the credentials in the URL. */
function serverName(url: string): string {
  try {
    const parsed = new URL(url);
    return parsed.protocol === 'unix:' ? parsed.pathname : `${parsed.hostname}:${parsed.port || 6379}`;
  } catch {
    return '(invalid cache_url)';
  }
}
