// The cookie mode's view of a browser session (SPEC-3 section 5): the tokens live in HttpOnly cookies the page
// cannot read, so what the client keeps and compares is the script-readable CSRF cookie, which the server
// renews at each login and refresh. Its presence says a session exists; its value changes with every rotation.
import type { TokenPair, TokenStorage } from './storage.js';

/** The CSRF cookie's names: `__Host-` when Secure and host-only, `__Secure-` when Secure with a Domain, else bare. */
const CSRF_COOKIES = ['__Host-svc_csrf', '__Secure-svc_csrf', 'svc_csrf'];

interface CookieDocument {
  cookie: string;
}
interface LocationLike {
  hostname: string;
  protocol: string;
}
const global = globalThis as unknown as { document?: CookieDocument; location?: LocationLike };

/** The value of the session's CSRF cookie, or null without one (signed out, or not in a page). */
export function readCsrf(): string | null {
  const text = global.document?.cookie;
  if (!text) return null;
  const cookies = new Map<string, string>();
  for (const part of text.split(';')) {
    const at = part.indexOf('=');
    if (at > 0) cookies.set(part.slice(0, at).trim(), part.slice(at + 1).trim());
  }
  for (const name of CSRF_COOKIES) {
    const value = cookies.get(name);
    if (value) return decodeURIComponent(value);
  }
  return null;
}

/**
 * Forgets the CSRF cookie in this browser after the server refused the session (a refused refresh): the
 * HttpOnly cookies are the server's to clear, but without the CSRF cookie every tab reads "signed out". The
 * Domain it was set with is unknown here, so each parent domain of the page's host is tried.
 */
function dropCsrf(): void {
  const doc = global.document;
  if (!doc) return;
  const secure = global.location?.protocol === 'https:' ? '; Secure' : '';
  const labels = (global.location?.hostname ?? '').split('.');
  for (const name of CSRF_COOKIES) {
    const expire = `${name}=; Max-Age=0; Path=/${secure}`;
    doc.cookie = expire;
    for (let i = 0; i < labels.length - 1; i++) doc.cookie = `${expire}; Domain=${labels.slice(i).join('.')}`;
  }
}

/** A short fingerprint (FNV-1a) of the CSRF value: tabs compare and broadcast this, never the value itself. */
export function csrfVersion(csrf: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < csrf.length; i++) hash = Math.imul(hash ^ csrf.charCodeAt(i), 0x01000193);
  return `csrf:${(hash >>> 0).toString(36)}:${csrf.length}`;
}

/**
 * The "storage" of the cookie mode: the pair it hands the refresh logic holds no token, only the version of the
 * session (the CSRF cookie's fingerprint). The browser's cookie jar is what the origin's tabs share, so a login
 * or refresh in one tab is every tab's at once; nothing is written to `localStorage` or `sessionStorage`.
 */
export function cookieSessionStorage(): TokenStorage {
  return {
    shared: true,
    get(): TokenPair | null {
      const csrf = readCsrf();
      if (!csrf) return null;
      const version = csrfVersion(csrf);
      return { accessToken: version, refreshToken: version };
    },
    set(pair) {
      // A login or refresh: the server has set the cookies. Signed out: drop what the page can.
      if (!pair) dropCsrf();
    },
  };
}
