import { AsyncLocalStorage } from 'node:async_hooks';

export interface RequestContext {
  requestId: string;
}

/** Carries the current request id into every log line of the request (SPEC "Startup rules" 5). */
export const requestContext = new AsyncLocalStorage<RequestContext>();

export function currentRequestId(): string {
  return requestContext.getStore()?.requestId ?? '-';
}

const REQUEST_ID = /^[A-Za-z0-9._-]{1,64}$/;

/** SPEC "Startup rules" 6: keep a client id of letters, digits, `-_.` up to 64 characters. */
export function isValidRequestId(value: unknown): value is string {
  return typeof value === 'string' && REQUEST_ID.test(value);
}
