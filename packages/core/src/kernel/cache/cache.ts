/**
 * The key-value cache every feature shares: in-process ({@link MemoryCache}) or Redis ({@link RedisCache}).
 * Keys are given without `cache_prefix`; implementations add it. Values are JSON-serialisable.
 */
export interface Cache {
  readonly kind: 'memory' | 'redis';
  get<T = unknown>(key: string): Promise<T | undefined>;
  /**
   * Stores a value; `ttlSeconds` omitted or 0 keeps it until evicted. `options.keep` marks security state that
   * is never evicted to make room (see {@link CacheWriteOptions}).
   */
  set(key: string, value: unknown, ttlSeconds?: number, options?: CacheWriteOptions): Promise<void>;
  /** Stores only when the key is absent; true when it was stored (atomic). */
  setIfAbsent(key: string, value: unknown, ttlSeconds: number, options?: CacheWriteOptions): Promise<boolean>;
  delete(key: string): Promise<void>;
  /** Reads and deletes in one atomic step (single-use credentials). */
  take<T = unknown>(key: string): Promise<T | undefined>;
  /**
   * Atomic counter: returns the new value; the first increment sets the expiry to `ttlSeconds`
   * (SPEC "Versioning" 0.10 to 0.11: a custom backend must implement this).
   */
  incr(key: string, ttlSeconds: number): Promise<number>;
  /** Seconds until the key expires; undefined when absent or without expiry. */
  ttl(key: string): Promise<number | undefined>;
  close(): Promise<void>;
}

/**
 * How a written entry may leave the cache before its time (SPEC-3 §7 rule 6: anonymous traffic cannot evict
 * security state).
 *
 * @example
 * await cache.setIfAbsent(`account-mail:${purpose}:${userId}`, 1, seconds, { keep: 'security' });
 */
export interface CacheWriteOptions {
  /**
   * Security state is never evicted to make room for other entries: it leaves by its TTL (required, > 0),
   * `delete` or `take`.
   * - `'security'`: state tied to a user or to a caller who proved something (mail cooldowns, used TOTP steps,
   *   used backup codes, registration and MFA challenges, event tickets); its number is bounded by the users.
   * - `'anonymous'`: state an anonymous request creates (a passkey login's pending challenge): once the cache
   *   holds `cache_max_entries` of these, a new one is refused with `cache.unavailable` (503) instead of
   *   dropping one still pending.
   *
   * Omitted: an ordinary entry (a cached read, a rate-limit counter), evicted least recently used first when
   * the in-process cache holds `cache_max_entries` of them. Redis evicts nothing when run with
   * `maxmemory-policy noeviction` (docs/deployment.md): a full Redis refuses writes, `cache.unavailable`.
   * @default undefined
   */
  keep?: 'security' | 'anonymous';
}

/** JSON text of a cache value; refuses what JSON cannot carry instead of storing a silent `undefined`. */
export function encode(value: unknown): string {
  const text = JSON.stringify(value);
  if (text === undefined) throw new TypeError('cache values must be JSON-serialisable');
  return text;
}

/** `Cache` TTLs are seconds (0 or omitted: no expiry); milliseconds here so fractional TTLs keep their length. */
export function ttlMilliseconds(ttlSeconds: number | undefined): number {
  return ttlSeconds && ttlSeconds > 0 ? Math.max(1, Math.round(ttlSeconds * 1000)) : 0;
}
