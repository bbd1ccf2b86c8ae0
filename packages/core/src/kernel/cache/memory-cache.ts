import { LRUCache } from 'lru-cache';
import { SvcError } from '../errors/svc-error.js';
import { encode, ttlMilliseconds, type Cache, type CacheWriteOptions } from './cache.js';

/**
 * The in-process cache (`cache_url` empty): an LRU of at most `cache_max_entries` ordinary entries, per worker,
 * and beside it the security state written with `keep`, which no other write evicts (SPEC-3 §7 rule 6).
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
  /** SPEC-3 §7 rule 6: security state lives apart from the LRU, so no other write can evict it. */
  readonly #security = new KeptEntries(Infinity);
  readonly #anonymous: KeptEntries;
  readonly #prefix: string;

  /**
   * @param maxEntries ordinary entries kept before the least recently used is evicted, and the most pending
   *   anonymous security entries (`cache_max_entries`)
   * @param prefix put before every key (`cache_prefix`) @default 'svc:'
   */
  constructor(maxEntries: number, prefix = 'svc:') {
    // No ttlAutopurge: it keeps a timer per entry; expired entries are dropped when read or evicted by `max`.
    // ttlResolution 0: the default 1 ms clock cache can read a time older than an entry's start, so a fresh
    // 60 s entry would report 61 s from ttl().
    this.#entries = new LRUCache<string, string>({ max: maxEntries, ttlResolution: 0 });
    this.#anonymous = new KeptEntries(maxEntries);
    this.#prefix = prefix;
  }

  async get<T = unknown>(key: string): Promise<T | undefined> {
    const text = this.#read(this.#key(key));
    return text === undefined ? undefined : (JSON.parse(text) as T);
  }

  async set(key: string, value: unknown, ttlSeconds?: number, options?: CacheWriteOptions): Promise<void> {
    this.#write(this.#key(key), encode(value), ttlSeconds, options);
  }

  async setIfAbsent(
    key: string,
    value: unknown,
    ttlSeconds: number,
    options?: CacheWriteOptions,
  ): Promise<boolean> {
    const k = this.#key(key);
    // #read, not has: has() leaves an expired entry in place, get() drops it, so the key counts as absent.
    if (this.#read(k) !== undefined) return false;
    this.#write(k, encode(value), ttlSeconds, options);
    return true;
  }

  async delete(key: string): Promise<void> {
    this.#drop(this.#key(key));
  }

  async take<T = unknown>(key: string): Promise<T | undefined> {
    const k = this.#key(key);
    const text = this.#read(k);
    if (text === undefined) return undefined;
    this.#drop(k);
    return JSON.parse(text) as T;
  }

  async incr(key: string, ttlSeconds: number): Promise<number> {
    const k = this.#key(key);
    const text = this.#read(k);
    const current = text === undefined ? 0 : JSON.parse(text);
    if (!Number.isSafeInteger(current)) throw new TypeError(`cache key ${key} does not hold an integer`);
    const next = (current as number) + 1;
    const kept = this.#keptHolding(k);
    // SPEC "Versioning" 0.10 to 0.11: expiry is set by the first increment only; later ones keep it
    // (the same rule as INCR + EXPIRE-when-1 in RedisCache).
    if (kept) kept.replace(k, String(next));
    else if (next === 1) this.#entries.set(k, String(next), { ttl: ttlMilliseconds(ttlSeconds) });
    else this.#entries.set(k, String(next), { noUpdateTTL: true });
    return next;
  }

  async ttl(key: string): Promise<number | undefined> {
    const k = this.#key(key);
    if (this.#read(k) === undefined) return undefined;
    const remaining = this.#keptHolding(k)?.remainingMs(k) ?? this.#entries.getRemainingTTL(k);
    return Number.isFinite(remaining) && remaining > 0 ? Math.ceil(remaining / 1000) : undefined;
  }

  async close(): Promise<void> {
    this.#entries.clear();
    this.#security.clear();
    this.#anonymous.clear();
  }

  #key(key: string): string {
    return this.#prefix + key;
  }

  #read(k: string): string | undefined {
    return this.#security.get(k) ?? this.#anonymous.get(k) ?? this.#entries.get(k);
  }

  #keptHolding(k: string): KeptEntries | undefined {
    if (this.#security.get(k) !== undefined) return this.#security;
    if (this.#anonymous.get(k) !== undefined) return this.#anonymous;
    return undefined;
  }

  #drop(k: string): void {
    this.#security.delete(k);
    this.#anonymous.delete(k);
    this.#entries.delete(k);
  }

  #write(
    k: string,
    text: string,
    ttlSeconds: number | undefined,
    options: CacheWriteOptions | undefined,
  ): void {
    const ms = ttlMilliseconds(ttlSeconds);
    if (!options?.keep) {
      this.#security.delete(k);
      this.#anonymous.delete(k);
      this.#entries.set(k, text, { ttl: ms });
      return;
    }
    // Kept entries leave only by expiry, delete or take: without a TTL they would stay for the process's life.
    if (ms === 0) throw new TypeError('a kept cache entry needs a TTL');
    const pool = options.keep === 'security' ? this.#security : this.#anonymous;
    // SPEC-3 §7 rule 6: a full anonymous pool refuses the newcomer rather than dropping a pending entry.
    if (!pool.set(k, text, ms)) throw new SvcError('cache.unavailable');
    this.#entries.delete(k);
    (pool === this.#security ? this.#anonymous : this.#security).delete(k);
  }
}

/**
 * Entries that are never evicted to make room (SPEC-3 §7 rule 6): each has a TTL and leaves when it expires
 * (dropped when read, or swept when the pool grows), is deleted or taken. With a `limit`, a new key beyond it is
 * refused.
 */
class KeptEntries {
  readonly #entries = new Map<string, { text: string; expiresAt: number }>();
  readonly #limit: number;
  /** Size at which the next write sweeps expired entries (doubling, so sweeping stays amortised O(1)). */
  #sweepAt = 1024;

  constructor(limit: number) {
    this.#limit = limit;
  }

  get(k: string): string | undefined {
    const entry = this.#entries.get(k);
    if (!entry) return undefined;
    if (entry.expiresAt > performance.now()) return entry.text;
    this.#entries.delete(k);
    return undefined;
  }

  remainingMs(k: string): number {
    const entry = this.#entries.get(k);
    return entry ? entry.expiresAt - performance.now() : 0;
  }

  /** Stores `text` for `ms`; false when the key is new and the pool holds its limit of live entries. */
  set(k: string, text: string, ms: number): boolean {
    if (!this.#entries.has(k)) {
      if (this.#entries.size >= Math.min(this.#limit, this.#sweepAt)) this.#sweep();
      if (this.#entries.size >= this.#limit) return false;
    }
    this.#entries.set(k, { text, expiresAt: performance.now() + ms });
    return true;
  }

  /** A new value under the same expiry (a counter's increment). */
  replace(k: string, text: string): void {
    const entry = this.#entries.get(k);
    if (entry) entry.text = text;
  }

  delete(k: string): void {
    this.#entries.delete(k);
  }

  clear(): void {
    this.#entries.clear();
  }

  #sweep(): void {
    const now = performance.now();
    for (const [k, entry] of this.#entries) if (entry.expiresAt <= now) this.#entries.delete(k);
    this.#sweepAt = Math.max(1024, 2 * this.#entries.size);
  }
}
