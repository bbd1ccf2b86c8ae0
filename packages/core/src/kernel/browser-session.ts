import { randomBytes } from 'node:crypto';
import { isIP } from 'node:net';
import type { Settings } from './config/schema.js';
import type { BrowserSessions, IssuedLogin, TokenRouteContext } from './ports.js';
import { apiBase } from './routes.js';

// SPEC-3 §5 "Browser sessions (cookies)": the cookies' names and attributes, and the CSRF rules, in one place
// without Express. kernel/http reads the session cookie for the guard; the auth module's cookie routes and
// every token-issuing route (through the `browserSessions` port) set and clear them. docs/browser-sessions.md.

/** The request header that asks a token-issuing route to answer with cookies (SPEC-3 §5). */
export const SESSION_MODE_HEADER = 'x-svc-session';
/** The double-submit header: equal to the `svc_csrf` cookie on every unsafe cookie request. */
export const CSRF_HEADER = 'x-csrf-token';
/** The account pages' hidden field that carries the CSRF token (they run no script to set a header). */
export const CSRF_FORM_FIELD = 'csrfToken';

/** SPEC-3 §5: the methods a cookie request must prove to be same-site for. */
const UNSAFE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

export function isUnsafeMethod(method: string): boolean {
  return UNSAFE_METHODS.has(method.toUpperCase());
}

/** SPEC-3 §5 `cookie_secure`: `auto` is Secure unless public_url is http on a loopback host. */
export function cookiesSecure(settings: Settings): boolean {
  if (settings.cookie_secure !== 'auto') return settings.cookie_secure === 'true';
  let url: URL;
  try {
    url = new URL(settings.public_url);
  } catch {
    return true; // no public_url: nothing says the service is plain http on this machine
  }
  if (url.protocol !== 'http:') return true;
  const host = url.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (host === 'localhost' || host === '::1') return false;
  return !(isIP(host) === 4 && host.startsWith('127.'));
}

export interface CookieNames {
  session: string;
  refresh: string;
  csrf: string;
}

/**
 * The three cookies' names (SPEC-3 §5): when Secure, `svc_session` and `svc_csrf` take `__Host-` (host-only,
 * Path=/) or, with `cookie_domain`, `__Secure-`; `svc_refresh` always `__Secure-` (its Path is not `/`).
 */
export function cookieNames(settings: Settings): CookieNames {
  if (!cookiesSecure(settings)) return { session: 'svc_session', refresh: 'svc_refresh', csrf: 'svc_csrf' };
  const rooted = settings.cookie_domain === '' ? '__Host-' : '__Secure-';
  return { session: `${rooted}svc_session`, refresh: '__Secure-svc_refresh', csrf: `${rooted}svc_csrf` };
}

/** The refresh cookie's Path: the API prefix + `/auth/session`, e.g. `/api/auth/session`. */
export function refreshCookiePath(settings: Settings): string {
  return `${apiBase(settings)}/auth/session`;
}

/**
 * The value of cookie `name` in a `Cookie` header, or undefined; one pass without building a map (the guard
 * reads one cookie per request: docs/performance.md).
 */
export function readCookie(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  let from = 0;
  while (from < header.length) {
    const end = header.indexOf(';', from);
    const part = header.slice(from, end === -1 ? header.length : end);
    const eq = part.indexOf('=');
    if (eq !== -1 && part.slice(0, eq).trim() === name) {
      const value = part.slice(eq + 1).trim();
      return value === '' ? undefined : value;
    }
    if (end === -1) break;
    from = end + 1;
  }
  return undefined;
}

/** A fresh CSRF token: 32 random bytes, base64url (SPEC-3 §5: renewed at each login and refresh). */
export function newCsrfToken(): string {
  return randomBytes(32).toString('base64url');
}

interface CookieAttributes {
  path: string;
  httpOnly: boolean;
  sameSite: 'Lax' | 'Strict';
  /** Seconds from now; undefined: a browser-session cookie; 0: cleared. */
  maxAge?: number;
}

function serialize(settings: Settings, name: string, value: string, attrs: CookieAttributes): string {
  const parts = [`${name}=${value}`, `Path=${attrs.path}`];
  // `__Host-` cookies must not name a domain; the others carry `cookie_domain` when it is set.
  if (settings.cookie_domain !== '' && !name.startsWith('__Host-'))
    parts.push(`Domain=${settings.cookie_domain}`);
  if (attrs.maxAge !== undefined) {
    parts.push(`Max-Age=${attrs.maxAge}`);
    // Cleared: the epoch, as every browser reads it; else the token's end (Max-Age wins where both are known).
    const at = attrs.maxAge === 0 ? 0 : Date.now() + attrs.maxAge * 1000;
    parts.push(`Expires=${new Date(at).toUTCString()}`);
  }
  if (attrs.httpOnly) parts.push('HttpOnly');
  if (cookiesSecure(settings)) parts.push('Secure');
  parts.push(`SameSite=${attrs.sameSite}`);
  return parts.join('; ');
}

/** What a login or a refresh sets (SPEC-3 §5 "Cookies"). */
export interface IssuedCookies {
  accessToken: string;
  /** Seconds the access token lives. */
  accessMaxAge: number;
  /** Absent when the refresh kept its token (`refresh_token_rotation` false): the cookie stays as it is. */
  refreshToken?: string;
  refreshMaxAge?: number;
  csrfToken: string;
}

/** The `Set-Cookie` values of a login or refresh. */
export function sessionCookieHeaders(settings: Settings, issued: IssuedCookies): string[] {
  const names = cookieNames(settings);
  const headers = [
    serialize(settings, names.session, issued.accessToken, {
      path: '/',
      httpOnly: true,
      sameSite: 'Lax',
      maxAge: issued.accessMaxAge,
    }),
  ];
  if (issued.refreshToken !== undefined) {
    headers.push(
      serialize(settings, names.refresh, issued.refreshToken, {
        path: refreshCookiePath(settings),
        httpOnly: true,
        sameSite: 'Strict',
        maxAge: issued.refreshMaxAge,
      }),
    );
  }
  // Readable by scripts (the client copies it into X-CSRF-Token), no expiry.
  headers.push(
    serialize(settings, names.csrf, issued.csrfToken, { path: '/', httpOnly: false, sameSite: 'Strict' }),
  );
  return headers;
}

/** The `Set-Cookie` value of the CSRF cookie alone (an account page's form when the browser has none yet). */
export function csrfCookieHeader(settings: Settings, csrfToken: string): string {
  return serialize(settings, cookieNames(settings).csrf, csrfToken, {
    path: '/',
    httpOnly: false,
    sameSite: 'Strict',
  });
}

/** The `Set-Cookie` values that clear the three cookies (same names, paths and attributes, `Max-Age=0`). */
export function clearedCookieHeaders(settings: Settings): string[] {
  const names = cookieNames(settings);
  return [
    serialize(settings, names.session, '', { path: '/', httpOnly: true, sameSite: 'Lax', maxAge: 0 }),
    serialize(settings, names.refresh, '', {
      path: refreshCookiePath(settings),
      httpOnly: true,
      sameSite: 'Strict',
      maxAge: 0,
    }),
    serialize(settings, names.csrf, '', { path: '/', httpOnly: false, sameSite: 'Strict', maxAge: 0 }),
  ];
}

/** The origin (`scheme://host[:port]`, lower case) of a URL, or null. */
function originOf(url: string): string | null {
  try {
    const parsed = new URL(url);
    return parsed.origin === 'null' ? null : parsed.origin.toLowerCase();
  } catch {
    return null;
  }
}

/** The request headers the same-site rules read (lower-case names). */
export interface SiteHeaders {
  origin?: string;
  referer?: string;
  host?: string;
  cookie?: string;
  [name: string]: string | string[] | undefined;
}

/**
 * The trusted origins (SPEC-3 §5): the origin of `public_url` and `csrf_trusted_origins`. Without a
 * `public_url`, the request's own origin (an `Origin` naming the `Host` the request was sent to) is trusted:
 * a service that does not know its public address still accepts its own pages.
 */
export function isTrustedOrigin(origin: string, settings: Settings, host: string | undefined): boolean {
  const given = originOf(origin);
  if (!given) return false;
  if (settings.public_url !== '' && originOf(settings.public_url) === given) return true;
  if (settings.csrf_trusted_origins.some((trusted) => originOf(trusted) === given)) return true;
  return settings.public_url === '' && host !== undefined && new URL(given).host === host.toLowerCase();
}

/**
 * Whether a request is cross-site (SPEC-3 §5): unless its `Origin`, or without an `Origin` its `Referer`, is
 * on a trusted origin. A request with neither is cross-site.
 */
export function isCrossSite(headers: SiteHeaders, settings: Settings): boolean {
  const source = headers.origin ?? headers.referer;
  if (typeof source !== 'string' || source === '') return true;
  return !isTrustedOrigin(source, settings, headers.host);
}

/**
 * The CSRF check of an unsafe cookie request (SPEC-3 §5): same-site, and `X-CSRF-Token` (or the account
 * pages' `csrfToken` field, `formToken`) equal to the `svc_csrf` cookie.
 */
export function passesCsrf(headers: SiteHeaders, settings: Settings, formToken?: string): boolean {
  if (isCrossSite(headers, settings)) return false;
  const expected = readCookie(headers.cookie, cookieNames(settings).csrf);
  const sent = headers[CSRF_HEADER] ?? formToken;
  return expected !== undefined && typeof sent === 'string' && timingSafeEqualStrings(sent, expected);
}

/** The double-submit half alone: `sent` equals the CSRF cookie's value `held`. */
export function passesDoubleSubmit(held: string, sent: string | undefined): boolean {
  return typeof sent === 'string' && timingSafeEqualStrings(sent, held);
}

function timingSafeEqualStrings(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

/** Whether a token-issuing request asks for the cookie answer (`X-Svc-Session: cookie`, SPEC-3 §5). */
export function wantsCookieSession(headers: SiteHeaders, settings: Settings): boolean {
  const mode = headers[SESSION_MODE_HEADER];
  return (
    settings.cookie_sessions_enabled && typeof mode === 'string' && mode.trim().toLowerCase() === 'cookie'
  );
}

/** A token-issuing route's answer (SPEC-3 §5), bound to the app's `browserSessions` port. */
export type IssueTokens = (ctx: TokenRouteContext, login: () => Promise<IssuedLogin>) => Promise<unknown>;

/**
 * {@link BrowserSessions.issue} of the app, looked up at request time (the auth module provides it; without
 * it, the route answers its token pair as before).
 * @example const issue = issueTokensWith(ports); router.post('/token', {}, (ctx) => issue(ctx, () => login()));
 */
export function issueTokensWith(ports: {
  find(name: 'browserSessions'): BrowserSessions | undefined;
}): IssueTokens {
  return (ctx, login) => {
    const port = ports.find('browserSessions');
    return port ? port.issue(ctx, login) : login();
  };
}
