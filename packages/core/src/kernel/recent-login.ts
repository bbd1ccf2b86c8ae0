import type { Settings } from './config/schema.js';
import { SvcError } from './errors/svc-error.js';
import type { AuthUser } from './identity.js';

/**
 * Whether the session of `user` began with a login (password, passkey, identity or invitation acceptance; a
 * refresh is not one) at most `reauthentication_max_age_minutes` ago (SPEC-3 §7 rule 1). The login's time comes
 * from the access token's `auth_time` claim, which a refresh copies from the refresh token it spends, so the
 * check reads nothing: a session row would cost the guard a column of every request's user query and could
 * not tell a login from the first refresh of a session adopted from before sessions existed. A personal token
 * and an access token without the claim (issued before it existed) never count as recent.
 * @example if (!hasRecentLogin(ctx.user, ctx.settings)) ...
 */
export function hasRecentLogin(
  user: Pick<AuthUser, 'authTime'>,
  settings: Pick<Settings, 'reauthentication_max_age_minutes'>,
  now: Date = new Date(),
): boolean {
  if (user.authTime === undefined) return false;
  const ageSeconds = Math.floor(now.getTime() / 1000) - user.authTime;
  return ageSeconds <= settings.reauthentication_max_age_minutes * 60;
}

/**
 * Refuses with 403 `auth.reauthentication_required` unless {@link hasRecentLogin}: for a handler whose need of a
 * recent login depends on the request (a route that always needs it says `requireRecentLogin: true`).
 * @example assertRecentLogin(ctx.user, ctx.settings);
 */
export function assertRecentLogin(
  user: Pick<AuthUser, 'authTime'>,
  settings: Pick<Settings, 'reauthentication_max_age_minutes'>,
  now: Date = new Date(),
): void {
  if (!hasRecentLogin(user, settings, now)) throw new SvcError('auth.reauthentication_required');
}
