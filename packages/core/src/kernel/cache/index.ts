import type { Settings } from '../config/schema.js';
import type { Logger } from '../log/logger.js';
import type { Cache } from './cache.js';
import { MemoryCache } from './memory-cache.js';
import { RedisCache } from './redis-cache.js';

export type { Cache } from './cache.js';
export { MemoryCache } from './memory-cache.js';
export { RedisCache } from './redis-cache.js';

/** What {@link createCache} needs. */
export interface CreateCacheOptions {
  settings: Pick<Settings, 'cache_url' | 'cache_prefix' | 'cache_max_entries'>;
  /** Receives Redis connection errors and recoveries. */
  log?: Logger;
}

/**
 * The cache the settings ask for: in-process when `cache_url` is empty, Redis otherwise
 * (SPEC "Configuration": cache_url, cache_prefix, cache_max_entries).
 *
 * @example
 * const cache = await createCache({ settings, log: log.child('cache') });
 */
export async function createCache({ settings, log }: CreateCacheOptions): Promise<Cache> {
  if (!settings.cache_url) return new MemoryCache(settings.cache_max_entries, settings.cache_prefix);
  return RedisCache.connect(settings.cache_url, settings.cache_prefix, log);
}
