import { ConfigError } from '../kernel/config/load.js';
import { SvcError } from '../kernel/errors/svc-error.js';

// Unicode's control characters (general category Cc): C0, DEL and C1.
// eslint-disable-next-line no-control-regex -- the control characters are what it finds
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/**
 * Checks a `redirect_to` (SPEC-3 section 1): a relative path (starting with `/`, not followed by `/` or `\`, with
 * no `\` and no control character anywhere) or an absolute http(s) URL on an allowed origin; else 400
 * `auth.oauth_redirect_invalid`, before any redirect. `//host` and `/\host` are other hosts to a browser, and
 * `javascript:` has no origin: all refused.
 */
export function checkRedirectTo(value: string, allowedOrigins: ReadonlySet<string>): string {
  const refuse = () => new SvcError('auth.oauth_redirect_invalid');
  if (value === '' || CONTROL.test(value) || value.includes('\\')) throw refuse();
  if (value.startsWith('/')) {
    if (value.startsWith('//')) throw refuse();
    return value;
  }
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw refuse();
  }
  if ((url.protocol !== 'https:' && url.protocol !== 'http:') || !allowedOrigins.has(url.origin))
    throw refuse();
  return value;
}

/** The origins `redirect_to` may name: that of `public_url`, always, and `oauth_allowed_redirect_origins`. */
export function allowedRedirectOrigins(publicUrl: string, extra: readonly string[]): Set<string> {
  const origins = new Set<string>([new URL(publicUrl).origin]);
  for (const origin of extra) {
    let url: URL | undefined;
    try {
      url = new URL(origin);
    } catch {
      url = undefined;
    }
    if (
      !url ||
      (url.protocol !== 'https:' && url.protocol !== 'http:') ||
      url.origin !== origin.replace(/\/$/, '')
    )
      throw new ConfigError(
        `oauth_allowed_redirect_origins: '${origin}' is not an origin (https://host[:port])`,
      );
    origins.add(url.origin);
  }
  return origins;
}
