import { request as httpRequest, type Agent, type ClientRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
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
   * {@link pinnedLookup}; without it, a new connection of its own.
   */
  agent?: Agent;
}

const short = (text: string) => text.slice(0, LAST_ERROR_MAX_LENGTH);

/**
 * POSTs one signed event (SPEC-3 §3 "Delivery"). Never throws: everything that is not a 2xx answer is an
 * outcome the caller retries on. No redirect is followed (Node's client follows none: a 3xx is its status), the
 * answer's body is read to at most {@link RESPONSE_BODY_LIMIT} bytes and then dropped with the socket, and the
 * whole attempt (connect, TLS, answer) ends at `timeoutMs`. With `agent`, a connection answered in full is kept
 * for the next attempt to the same origin.
 */
export function attemptDelivery(input: AttemptInput): Promise<AttemptOutcome> {
  return new Promise((resolve) => {
    let settled = false;
    // The time limit starts after the checks below; an early refusal finishes before it exists.
    const deadline: { timer?: NodeJS.Timeout } = {};
    const finish = (outcome: AttemptOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline.timer);
      resolve(outcome);
    };
    let url: URL;
    try {
      url = parseWebhookUrl(input.url, input.allowPrivate);
    } catch {
      finish({ statusCode: null, error: 'webhook.url_invalid' });
      return;
    }
    const host = hostOf(url);
    // An IP literal is not resolved (Node connects to it directly): checked here instead.
    if (isIP(host) && !input.allowPrivate && isPrivateAddress(host)) {
      finish({ statusCode: null, error: short(new ForbiddenTargetError(host).message) });
      return;
    }
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    let req: ClientRequest | undefined;
    const start = (retry: boolean) => {
      let answered = false;
      const request = send(url, {
        method: 'POST',
        headers: { ...input.headers, 'content-length': String(Buffer.byteLength(input.body)) },
        lookup: pinnedLookup(input.allowPrivate) as never,
        // A pooled connection was opened through the same pinned resolver (connections.ts says why reusing it
        // keeps the SSRF rule); without a pool, one connection per attempt.
        agent: input.agent ?? false,
        ...(input.tls ?? {}),
      });
      req = request;
      request.on('socket', (socket) => {
        // A reused connection: the address it is connected to is checked again for this attempt.
        const address = socket.remoteAddress;
        if (request.reusedSocket && !input.allowPrivate && (!address || isPrivateAddress(address))) {
          request.destroy(new ForbiddenTargetError(address ?? host));
        }
      });
      request.on('response', (res: IncomingMessage) => {
        answered = true;
        let read = 0;
        res.on('data', (chunk: Buffer) => {
          read += chunk.length;
          // Over the limit: the socket is destroyed with the answer, never returned to the pool half read.
          if (read >= RESPONSE_BODY_LIMIT) res.destroy();
        });
        const done = () => finish({ statusCode: res.statusCode ?? null, error: null });
        res.on('end', done);
        res.on('close', done);
        res.on('error', done);
      });
      request.on('error', (error: NodeJS.ErrnoException) => {
        // A kept-alive connection the receiver closed just as it was reused: once, on a new connection (the
        // receiver may have seen the request; it deduplicates by `webhook-id`, SPEC-3 §3 at least once).
        if (
          !retry &&
          !answered &&
          !settled &&
          request.reusedSocket &&
          !(error instanceof ForbiddenTargetError)
        ) {
          start(true);
          return;
        }
        const code = error.code ? `${error.code}: ` : '';
        finish({ statusCode: null, error: short(`${code}${error.message}`) });
      });
      request.end(input.body);
    };
    deadline.timer = setTimeout(() => {
      // Destroyed, not released: a connection that timed out never goes back to the pool.
      req?.destroy(new Error('timeout'));
      finish({ statusCode: null, error: `timeout after ${input.timeoutMs} ms` });
    }, input.timeoutMs);
    start(false);
  });
}
