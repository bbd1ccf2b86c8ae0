import type { Cache } from '../kernel/cache/cache.js';
import { MemoryCache } from '../kernel/cache/memory-cache.js';
import type { Settings } from '../kernel/config/schema.js';
import { SvcError } from '../kernel/errors/svc-error.js';
import type { Logger } from '../kernel/log/logger.js';
import { RATE_LIMIT_KEY_PREFIX } from './constants.js';

/**
 * Counts one request of `ip` on `scope` and throws 429 `auth.rate_limited` with `Retry-After` once more than
 * `auth_rate_limit` requests arrived in the window (SPEC "Limits": per-address rate limit; 0 disables).
 * The counter is the cache's atomic `incr`, so a shared cache limits across workers.
 * @example await checkRateLimit(cache, settings, ctx.clientIp, 'login');
 */
export async function checkRateLimit(
  cache: Cache,
  settings: Settings,
  ip: string,
  scope: string,
): Promise<void> {
  const limit = settings.auth_rate_limit;
  if (limit <= 0) return;
  const window = settings.auth_rate_window_seconds;
  const key = `${RATE_LIMIT_KEY_PREFIX}:${scope}:${ip}`;
  const count = await cache.incr(key, window);
  if (count <= limit) return;
  const ttl = await cache.ttl(key);
  const retryAfter = Math.max(1, Math.min(window, Math.ceil(ttl ?? window)));
  throw new SvcError('auth.rate_limited', { headers: { 'Retry-After': String(retryAfter) } });
}

/** Size of the in-process fallback counter (addresses × scopes counted while the shared cache is down). */
const FALLBACK_MAX_ENTRIES = 10_000;

/**
 * The per-address rate limit on the configured cache, falling back to an in-process counter while that
 * cache is unreachable (`cache.unavailable`). Decided for outages (docs/deployment.md "Redis"): an outage
 * of Redis must not refuse every login with a 503, and failing open would drop the limit; counted per
 * process, the limit holds as it does with the in-process cache (SPEC "Limits": with several workers a
 * shared cache is needed). One warning per outage; counting returns to the shared cache once it answers.
 * @example const hit = createRateLimiter({ cache, settings, log }); await hit(ctx.clientIp, 'login');
 */
export function createRateLimiter(deps: {
  cache: Cache;
  settings: Settings;
  log: Logger;
}): (ip: string, scope: string) => Promise<void> {
  const { cache, settings, log } = deps;
  let fallback: MemoryCache | undefined;
  let degraded = false;
  return async (ip, scope) => {
    if (settings.auth_rate_limit <= 0) return;
    try {
      await checkRateLimit(cache, settings, ip, scope);
      if (degraded) log.info('cache available again: rate limit counted in the shared cache');
      degraded = false;
    } catch (error) {
      if (!(error instanceof SvcError) || error.code !== 'cache.unavailable') throw error;
      if (!degraded) log.warn('cache unavailable: rate limit counted in this process', { scope });
      degraded = true;
      fallback ??= new MemoryCache(FALLBACK_MAX_ENTRIES);
      await checkRateLimit(fallback, settings, ip, scope);
    }
  };
}
