import { AsyncLocalStorage } from 'node:async_hooks';

export interface RequestContext {
  requestId: string;
  /**
   * The client of the request: its address after the proxy rules and its `User-Agent` (read when asked, so
   * a request that never asks pays nothing). A login records them on its session (SPEC-2 "Sessions"),
   * whichever route completes it (password, MFA step, invitation).
   */
  client?: () => RequestClient;
  /**
   * The method and path (no query string) of the request, as its activity entry names them: for an entry a
   * request writes about something else than its own action (SPEC-3 §4: an impersonation its revocation of
   * every session ended).
   */
  route?: () => RequestRoute;
}

/** The method and path of a request (the activity log's `method` and `path`). */
export interface RequestRoute {
  method: string;
  path: string;
}

/** Who sent the request (SPEC-2 "Sessions": `ip` and `userAgent`). */
export interface RequestClient {
  ip: string;
  userAgent: string;
}

/** Carries the current request id into every log line of the request (SPEC "Startup rules" 5). */
export const requestContext = new AsyncLocalStorage<RequestContext>();

export function currentRequestId(): string {
  return requestContext.getStore()?.requestId ?? '-';
}

/** The client of the current request; empty fields outside a request (the CLI, a timer). */
export function currentClient(): RequestClient {
  return requestContext.getStore()?.client?.() ?? { ip: '', userAgent: '' };
}

/** The method and path of the current request; undefined outside a request (the CLI, a timer). */
export function currentRoute(): RequestRoute | undefined {
  return requestContext.getStore()?.route?.();
}

const REQUEST_ID = /^[A-Za-z0-9._-]{1,64}$/;

/** SPEC "Startup rules" 6: keep a client id of letters, digits, `-_.` up to 64 characters. */
export function isValidRequestId(value: unknown): value is string {
  return typeof value === 'string' && REQUEST_ID.test(value);
}
