import { LRUCache } from 'lru-cache';
import { encode, ttlMilliseconds, type Cache } from './cache.js';

/**
 * The in-process cache (`cache_url` empty): an LRU of at most `cache_max_entries` entries, per worker.
 *
 * Values are kept as JSON text, so every read returns a fresh copy (a caller mutating what it got, or what
 * it stored, cannot change the cached value) and a value round-trips exactly as it does through
 * {@link RedisCache} (a `Date` comes back as a string on both).
 *
 * @example
 * const cache = new MemoryCache(settings.cache_max_entries, settings.cache_prefix);
 * await cache.set('totp:42:1234', true, 90);
 */
export class MemoryCache implements Cache {
  readonly kind = 'memory';
  readonly #entries: LRUCache<string, string>;
  readonly #prefix: string;

  /**
   * @param maxEntries entries kept before the least recently used is evicted (`cache_max_entries`)
   * @param prefix put before every key (`cache_prefix`) @default 'svc:'
   */
  constructor(maxEntries: number, prefix = 'svc:') {
    // No ttlAutopurge: it keeps a timer per entry; expired entries are dropped when read or evicted by `max`.
    // ttlResolution 0: the default 1 ms clock cache can read a time older than an entry's start, so a fresh
    // 60 s entry would report 61 s from ttl().
    this.#entries = new LRUCache<string, string>({ max: maxEntries, ttlResolution: 0 });
    this.#prefix = prefix;
  }

  async get<T = unknown>(key: string): Promise<T | undefined> {
    const text = this.#entries.get(this.#key(key));
    return text === undefined ? undefined : (JSON.parse(text) as T);
  }

  async set(key: string, value: unknown, ttlSeconds?: number): Promise<void> {
    this.#entries.set(this.#key(key), encode(value), { ttl: ttlMilliseconds(ttlSeconds) });
  }

  async setIfAbsent(key: string, value: unknown, ttlSeconds: number): Promise<boolean> {
    const k = this.#key(key);
    // get, not has: has() leaves an expired entry in place, get() drops it, so the key counts as absent.
    if (this.#entries.get(k) !== undefined) return false;
    this.#entries.set(k, encode(value), { ttl: ttlMilliseconds(ttlSeconds) });
    return true;
  }

  async delete(key: string): Promise<void> {
    this.#entries.delete(this.#key(key));
  }

  async take<T = unknown>(key: string): Promise<T | undefined> {
    const k = this.#key(key);
    const text = this.#entries.get(k);
    if (text === undefined) return undefined;
    this.#entries.delete(k);
    return JSON.parse(text) as T;
  }

  async incr(key: string, ttlSeconds: number): Promise<number> {
    const k = this.#key(key);
    const text = this.#entries.get(k);
    const current = text === undefined ? 0 : JSON.parse(text);
    if (!Number.isSafeInteger(current)) throw new TypeError(`cache key ${key} does not hold an integer`);
    const next = (current as number) + 1;
    // SPEC "Versioning" 0.10 to 0.11: expiry is set by the first increment only; later ones keep it
    // (the same rule as INCR + EXPIRE-when-1 in RedisCache).
    if (next === 1) this.#entries.set(k, String(next), { ttl: ttlMilliseconds(ttlSeconds) });
    else this.#entries.set(k, String(next), { noUpdateTTL: true });
    return next;
  }

  async ttl(key: string): Promise<number | undefined> {
    const k = this.#key(key);
    if (this.#entries.get(k) === undefined) return undefined;
    const remaining = this.#entries.getRemainingTTL(k);
    return Number.isFinite(remaining) && remaining > 0 ? Math.ceil(remaining / 1000) : undefined;
  }

  async close(): Promise<void> {
    this.#entries.clear();
  }

  #key(key: string): string {
    return this.#prefix + key;
  }
}
