import { createHash } from 'node:crypto';
import type { AuthUser } from './identity.js';

/**
 * Server-rendered pages outside `/api` (SPEC-2 "Built-in account pages"): a module returns them from `setup`
 * as `pages`; kernel/http mounts them with the headers such pages need (no caching, no referrer, a strict
 * Content-Security-Policy) and logs their path without the query, which may carry a token.
 */
export interface PageRequest {
  /** Query parameters (first value of each). */
  query: Record<string, string>;
  /** Fields of a submitted `application/x-www-form-urlencoded` form (POST), else empty. */
  form: Record<string, string>;
  /** The request's language (`Accept-Language` among the shipped catalogs, else `default_locale`). */
  locale: string;
  clientIp: string;
  /**
   * SPEC-3 §5, while `cookie_sessions_enabled`: the CSRF token the page's form carries in the hidden field
   * `csrfToken` (the browser's `svc_csrf` cookie, set by the page when it had none).
   */
  csrfToken?: string;
  /**
   * SPEC-3 §5, while `cookie_sessions_enabled`: the user of the browser's cookie session (`svc_session`, under
   * the guard's rules: signature, session, revocation, an active user), or null when it is missing or no longer
   * valid. Present only where a page may act for that session: on a submit, only when the form proved the
   * CSRF token (double submit), so a form posted from elsewhere never acts as the signed-in user.
   */
  sessionUser?: () => Promise<AuthUser | null>;
}

/** What a page answers: a status and a whole HTML document. */
export interface PageResponse {
  status: number;
  html: string;
}

export interface PageRoute {
  /** Path outside `/api`, e.g. `/account/reset-password`. */
  path: string;
  get(request: PageRequest): PageResponse | Promise<PageResponse>;
  /** Form submit; absent: the page only shows. */
  post?(request: PageRequest): PageResponse | Promise<PageResponse>;
}

/**
 * The one script a built-in page may run, inline: an input with `data-match="<id>"` must repeat the input with
 * that id, or the browser refuses to submit the form, showing `data-mismatch` (the password confirmation of
 * the account pages). The pages still work without it: the server checks the same (SPEC-2 "Built-in account
 * pages": they work without JavaScript).
 */
export const PAGE_SCRIPT =
  "document.querySelectorAll('input[data-match]').forEach(function(c){" +
  'var o=document.getElementById(c.dataset.match);' +
  "function check(){c.setCustomValidity(c.value===o.value?'':c.dataset.mismatch);}" +
  "c.addEventListener('input',check);o.addEventListener('input',check);check();});";

/** `<script>` with {@link PAGE_SCRIPT}, the only script {@link PAGE_CSP} lets run (by its hash). */
export const PAGE_SCRIPT_TAG = `<script>${PAGE_SCRIPT}</script>`;

/**
 * The Content-Security-Policy of built-in pages: no script but {@link PAGE_SCRIPT} (allowed by its hash),
 * styles inline, forms post to themselves.
 */
export const PAGE_CSP =
  `default-src 'none'; script-src 'sha256-${createHash('sha256').update(PAGE_SCRIPT).digest('base64')}'; ` +
  "style-src 'unsafe-inline'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";
