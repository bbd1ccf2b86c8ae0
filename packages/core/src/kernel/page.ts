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

/** The Content-Security-Policy of built-in pages: no script, styles inline, forms post to themselves. */
export const PAGE_CSP =
  "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";
