import { isIP } from 'node:net';
import { Pool } from 'undici';
import type { ReceiverConnections } from './connections.js';
import { LAST_ERROR_MAX_LENGTH, RESPONSE_BODY_LIMIT } from './constants.js';
import { ForbiddenTargetError, hostOf, isPrivateAddress, parseWebhookUrl, pinnedLookup } from './target.js';

/** What one attempt to deliver came to: the receiver's status, or an error (timeout, refused, forbidden). */
export interface AttemptOutcome {
  statusCode: number | null;
  error: string | null;
}

export interface AttemptInput {
  url: string;
  headers: Record<string, string>;
  body: string;
  timeoutMs: number;
  allowPrivate: boolean;
  /** Extra TLS options of the request (a test's own certificate authority). */
  tls?: { ca?: string | Buffer };
  /**
   * The kept-alive connections of `url`'s origin (connections.ts), whose new connections resolve through
   * {@link pinnedLookup}; without them, a connection of its own, closed after the attempt. Connections opened
   * while private targets were allowed are not used by an attempt that may not reach them.
   */
  agent?: ReceiverConnections;
}

const short = (text: string) => text.slice(0, LAST_ERROR_MAX_LENGTH);

/** undici's codes for a connection that closed under a request before its answer came. */
const CLOSED_UNDER_REQUEST = new Set(['UND_ERR_SOCKET', 'ECONNRESET', 'EPIPE']);

/**
 * POSTs one signed event (SPEC-3 §3 "Delivery"). Never throws: everything that is not a 2xx answer is an
 * outcome the caller retries on. No redirect is followed (undici follows none: a 3xx is its status), the
 * answer's body is read to at most {@link RESPONSE_BODY_LIMIT} bytes and then dropped with its connection, and
 * the whole attempt (connect, TLS, answer) ends at `timeoutMs`, its connection destroyed. A connection answered
 * in full stays in the pool for the next attempt to the same origin.
 */
export async function attemptDelivery(input: AttemptInput): Promise<AttemptOutcome> {
  let url: URL;
  try {
    url = parseWebhookUrl(input.url, input.allowPrivate);
  } catch {
    return { statusCode: null, error: 'webhook.url_invalid' };
  }
  const host = hostOf(url);
  // An IP literal is not resolved (the socket connects to it directly): checked here instead.
  if (isIP(host) && !input.allowPrivate && isPrivateAddress(host)) {
    return { statusCode: null, error: short(new ForbiddenTargetError(host).message) };
  }
  const shared =
    input.agent && (input.allowPrivate || !input.agent.allowPrivate) ? input.agent.pool : undefined;
  const pool =
    shared ??
    new Pool(url.origin, {
      connections: 1,
      connect: { lookup: pinnedLookup(input.allowPrivate) as never, ...(input.tls ?? {}) },
    });
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(), input.timeoutMs);
  const send = () =>
    pool.request({
      path: `${url.pathname}${url.search}`,
      method: 'POST',
      headers: input.headers,
      body: input.body,
      signal: deadline.signal,
      headersTimeout: input.timeoutMs,
      bodyTimeout: input.timeoutMs,
    });
  try {
    let answer;
    try {
      answer = await send();
    } catch (error) {
      // A kept-alive connection the receiver closed just as it was reused: once, on a new connection (the
      // receiver may have seen the request; it deduplicates by `webhook-id`, SPEC-3 §3 at least once).
      const code = (error as NodeJS.ErrnoException).code;
      if (!shared || deadline.signal.aborted || !code || !CLOSED_UNDER_REQUEST.has(code)) throw error;
      answer = await send();
    }
    // Over the limit the body is destroyed with its connection, which never goes back to the pool half read.
    await answer.body.dump({ limit: RESPONSE_BODY_LIMIT });
    // undici frees the connection in the pool a turn of the event loop after the answer ends: the attempt
    // ends after that, so the next attempt to this receiver reuses it instead of opening another.
    await new Promise((resolve) => setImmediate(resolve));
    if (deadline.signal.aborted) return { statusCode: null, error: `timeout after ${input.timeoutMs} ms` };
    return { statusCode: answer.statusCode, error: null };
  } catch (error) {
    // Aborted at the deadline: the request and its connection are destroyed, never returned to the pool.
    if (deadline.signal.aborted) return { statusCode: null, error: `timeout after ${input.timeoutMs} ms` };
    const { code, message } = error as NodeJS.ErrnoException;
    return { statusCode: null, error: short(`${code ? `${code}: ` : ''}${message}`) };
  } finally {
    clearTimeout(timer);
    if (!shared) void pool.destroy();
  }
}
