import type { Cache } from '../kernel/cache/cache.js';
import type { Settings } from '../kernel/config/schema.js';
import { SvcError } from '../kernel/errors/svc-error.js';
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
