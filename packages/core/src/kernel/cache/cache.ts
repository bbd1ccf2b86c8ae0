/**
 * The key-value cache every feature shares: in-process ({@link MemoryCache}) or Redis ({@link RedisCache}).
 * Keys are given without `cache_prefix`; implementations add it. Values are JSON-serialisable.
 */
export interface Cache {
  readonly kind: 'memory' | 'redis';
  get<T = unknown>(key: string): Promise<T | undefined>;
  /** Stores a value; `ttlSeconds` omitted or 0 keeps it until evicted. */
  set(key: string, value: unknown, ttlSeconds?: number): Promise<void>;
  /** Stores only when the key is absent; true when it was stored (atomic). */
  setIfAbsent(key: string, value: unknown, ttlSeconds: number): Promise<boolean>;
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
