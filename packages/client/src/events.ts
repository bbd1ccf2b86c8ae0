import { SvcApiError } from './errors.js';
import type { WebSocketConstructor, WebSocketLike } from './platform.js';

/** A frame of the event stream (SPEC "Frame format"); `snapshot` comes first, then events. */
export interface SvcEvent<T = unknown> {
  type: string;
  timestamp?: string;
  data?: T;
}

/** Close codes of SPEC "Connection rules". */
export const CLOSE_UNAUTHORIZED = 4401;
export const CLOSE_FORBIDDEN_CHANGED = 4403;

export interface EventsOptions {
  /** Every frame but `ping` (the snapshot first, then the events). */
  onEvent(event: SvcEvent): void;
  /**
   * The stream stopped for good: the server closed with 4401 (the ticket or the user was refused: password
   * changed, user deactivated or deleted, session revoked) or a ticket could not be had while signed out.
   */
  onSignedOut?(): void;
  /** Connection state, for a status light: `connecting`, `open`, `waiting` (back-off), `stopped`. */
  onStatus?(status: EventsStatus, detail?: { closeCode?: number; retryInMs?: number }): void;
  /** A ticket request the client will not retry (403, 404: events are off on the server). */
  onError?(error: SvcApiError): void;
  /** Back-off after 1011 and network drops: first wait and cap. @default { initialMs: 1000, maxMs: 30000 } */
  backoff?: { initialMs?: number; maxMs?: number };
}

export type EventsStatus = 'connecting' | 'open' | 'waiting' | 'stopped';

/** A running subscription: `close()` stops it for good. */
export interface EventsSubscription {
  close(): void;
  readonly status: EventsStatus;
}

export interface EventsDeps {
  /** `POST /core/events/ticket` through the client (bearer, refresh): the ticket, or a thrown refusal. */
  ticket(): Promise<string>;
  /** `ws(s)://…/api/core/events/ws?ticket=` */
  socketUrl(ticket: string): string;
  WebSocket: WebSocketConstructor;
}

/**
 * SPEC "Connection rules": a ticket per connection (`POST /core/events/ticket`, valid 30 seconds, once), the
 * socket sends nothing, the server pings. After 1011 or a dropped connection: back off and retry with a new
 * ticket; after 4403 (superuser status changed): a new ticket at once; after 4401: stop, signed out.
 */
export function subscribeEvents(deps: EventsDeps, options: EventsOptions): EventsSubscription {
  const initialMs = options.backoff?.initialMs ?? 1000;
  const maxMs = options.backoff?.maxMs ?? 30_000;
  let status: EventsStatus = 'connecting';
  let stopped = false;
  let failures = 0;
  let socket: WebSocketLike | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;

  const setStatus = (next: EventsStatus, detail?: { closeCode?: number; retryInMs?: number }) => {
    status = next;
    options.onStatus?.(next, detail);
  };

  function stop(signedOut: boolean) {
    if (stopped) return;
    stopped = true;
    if (timer) clearTimeout(timer);
    setStatus('stopped');
    if (signedOut) options.onSignedOut?.();
  }

  /** Full jitter over an exponential window, so that clients of a restarted server do not return at once. */
  function retryLater(closeCode?: number) {
    if (stopped) return;
    const windowMs = Math.min(maxMs, initialMs * 2 ** failures);
    failures += 1;
    const waitMs = Math.round(windowMs / 2 + (Math.random() * windowMs) / 2);
    setStatus('waiting', { closeCode, retryInMs: waitMs });
    timer = setTimeout(connect, waitMs);
  }

  async function connect() {
    if (stopped) return;
    setStatus('connecting');
    let ticket: string;
    try {
      ticket = await deps.ticket();
    } catch (error) {
      if (error instanceof SvcApiError && error.status === 401) return stop(true);
      if (error instanceof SvcApiError && error.status < 500 && error.status !== 429) {
        options.onError?.(error);
        return stop(false);
      }
      return retryLater();
    }
    if (stopped) return;
    const ws = new deps.WebSocket(deps.socketUrl(ticket));
    socket = ws;
    ws.onmessage = (message: { data: unknown }) => {
      let frame: SvcEvent;
      try {
        frame = JSON.parse(String(message.data)) as SvcEvent;
      } catch {
        return;
      }
      if (frame.type === 'snapshot') {
        failures = 0; // accepted and authenticated: the back-off starts over
        setStatus('open');
      }
      if (frame.type !== 'ping') options.onEvent(frame);
    };
    ws.onerror = () => undefined; // the close that follows says what happened
    ws.onclose = (event: { code: number }) => {
      socket = undefined;
      if (stopped) return;
      if (event.code === CLOSE_UNAUTHORIZED) return stop(true);
      if (event.code === CLOSE_FORBIDDEN_CHANGED) {
        // SPEC: "reconnect with a new ticket" — the user's rights changed, nothing is broken.
        failures = 0;
        return void connect();
      }
      retryLater(event.code); // 1011, 1006 (network), 1001 (server going away), 1013 (too slow a reader)
    };
  }

  void connect();
  return {
    close() {
      stop(false);
      if (socket && socket.readyState <= 1) socket.close(1000);
    },
    get status() {
      return status;
    },
  };
}
