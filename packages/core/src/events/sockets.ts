import type { IncomingMessage, Server } from 'node:http';
import { createRequire } from 'node:module';
import type { Duplex } from 'node:stream';
import type * as Ws from 'ws';
import type { WebSocket } from 'ws';
import type { Settings } from '../kernel/config/schema.js';
import { SvcError } from '../kernel/errors/svc-error.js';
import type { Logger } from '../kernel/log/logger.js';
import type { ActivityReader, Authenticator, PermissionResolver, UserChange } from '../kernel/ports.js';
import type { Target } from './bus.js';
import {
  BACKPRESSURE_TERMINATE_MS,
  CLOSE_CODES,
  MAX_CLIENT_FRAME_BYTES,
  SNAPSHOT_SIZE,
} from './constants.js';
import type { TicketStore } from './tickets.js';

/** The user fields a socket is checked against (SPEC "WebSocket connection"). */
export interface SocketUser {
  id: string;
  isActive: boolean;
  isSuperuser: boolean;
  passwordChangedAt: Date | null;
  /** The session of the ticket or token that opened the socket (SPEC-2 "Sessions"). */
  sessionId?: string | null;
}

/** What the socket server needs. */
export interface EventSocketsDeps {
  /** Full path of the WebSocket route (`/api` + `api_v1_prefix` + `/core/events/ws`). */
  path: string;
  /** `events_broadcast_enabled`: when false a handshake to `path` gets HTTP 403 (SPEC "Event routes"). */
  enabled: boolean;
  settings: Pick<Settings, 'events_allow_query_token'>;
  log: Logger;
  tickets: TicketStore;
  /** Reads the user from the auth database (undefined when deleted). */
  loadUser(userId: string): Promise<SocketUser | undefined>;
  authenticator(): Authenticator | undefined;
  permissions(): PermissionResolver | undefined;
  activity(): ActivityReader | undefined;
  /** Interval of the user re-check and `ping` (SPEC "Limits": 30 seconds). */
  pingIntervalMs: number;
  /** Unread bytes after which a client is dropped (back-pressure). */
  maxBufferedBytes: number;
}

interface Connection {
  ws: WebSocket;
  userId: string;
  /** SPEC "Event types and audience": superuser membership is the one held when the connection opened. */
  isSuperuser: boolean;
  passwordChangedAt: number | null;
  /** SPEC-2 "Sessions": the socket closes (4401) when this session ends; null for a token without `sid`. */
  sessionId: string | null;
  /** Effective permission codenames read at open (project audience `permission`). */
  permissions: ReadonlySet<string>;
  /**
   * Events that arrived before the snapshot was sent, or while a change of the user's permissions is read
   * ({@link refreshPermissions}); null while frames go out at once.
   */
  pending: { target: Target; frame: string }[] | null;
  /** Reads of the permissions after a change that hold the frames in `pending` until they end. */
  holding: number;
  /** Reads of the permissions begun, and the latest of them applied (an older read never overwrites a newer). */
  reads: number;
  applied: number;
  timer?: NodeJS.Timeout;
  checking: boolean;
  closed: boolean;
}

/** What the handshake's query string may carry (SPEC "Authentication" 9); empty values count as absent. */
interface Credentials {
  ticket: string | null;
  token: string | null;
}

/** A reset during the handshake must not crash the process; one listener for every socket. */
function ignoreError(): void {}

/** The frame sent at every check (SPEC "Frame format": no timestamp). */
const PING_FRAME = JSON.stringify({ type: 'ping' });
/** `ws.send` options: a Buffer goes out as a TEXT frame (SPEC "Frame format": JSON text frames). */
const TEXT_FRAME = { binary: false } as const;
/** Events queued for a socket whose snapshot is still being read; beyond this it is a slow open. */
const MAX_PENDING_FRAMES = 1_000;
/** On shutdown, sockets that did not finish the close handshake by then are cut. */
const SHUTDOWN_TERMINATE_MS = 2_000;

// SPEC "Frame format": a missing activity table is warned about once per process, not per connection.
let warnedMissingActivityTable = false;

const CHANGE_CLOSE_CODES: Record<Exclude<UserChange, 'permissions_changed'>, number> = {
  deleted: CLOSE_CODES.unauthorized,
  deactivated: CLOSE_CODES.unauthorized,
  password_changed: CLOSE_CODES.unauthorized,
  superuser_changed: CLOSE_CODES.forbidden,
};

const requireCommonJs = createRequire(import.meta.url);

/**
 * The event WebSocket (SPEC "WebSocket connection", "Connection rules"): upgrades on one path of the HTTP
 * server, authenticates after the handshake (ticket, or legacy `?token=`), sends the snapshot, re-checks the
 * user and pings on a fixed interval, and delivers event frames to the matching sockets.
 */
export function createEventSockets(deps: EventSocketsDeps) {
  const { log } = deps;
  // ws (CommonJS) is required when the sockets are made, at start-up: the `svc` commands import this file
  // through @svc/core/internal and open no socket (docs/performance.md "The CLI's start").
  const wsLibrary = requireCommonJs('ws') as typeof Ws;
  const { OPEN, CONNECTING } = wsLibrary.WebSocket;
  const wss = new wsLibrary.WebSocketServer({
    noServer: true,
    maxPayload: MAX_CLIENT_FRAME_BYTES,
    clientTracking: true,
  });
  const all = new Set<Connection>();
  const byUser = new Map<string, Set<Connection>>();
  let shuttingDown = false;

  /** Whether a socket's session is still active (true without an authenticator that knows sessions). */
  async function sessionActive(userId: string, sessionId: string): Promise<boolean> {
    const authenticator = deps.authenticator();
    return authenticator?.sessionActive ? authenticator.sessionActive(userId, sessionId) : true;
  }

  function refuseHandshake(socket: Duplex, status: 403 | 404 | 503): void {
    const reason = { 403: 'Forbidden', 404: 'Not Found', 503: 'Service Unavailable' }[status];
    socket.end(`HTTP/1.1 ${status} ${reason}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
  }

  function onUpgrade(server: Server, req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (url.pathname !== deps.path) {
      // Another listener may own that path; alone, we answer what the HTTP side would: no such route.
      if (server.listenerCount('upgrade') === 1) refuseHandshake(socket, 404);
      return;
    }
    if (!deps.enabled) return refuseHandshake(socket, 403); // SPEC "Event routes"
    if (shuttingDown) return refuseHandshake(socket, 503);
    socket.on('error', ignoreError); // a reset during the handshake must not crash the process
    const credentials: Credentials = {
      ticket: url.searchParams.get('ticket'),
      token: url.searchParams.get('token'),
    };
    wss.handleUpgrade(req, socket, head, (ws) => accept(ws, credentials));
  }

  /**
   * The socket's listeners are created here, not in `onUpgrade`: a closure there would share its scope and
   * hold the parsed handshake URL for the socket's whole life (docs/performance.md, the idle socket's heap).
   */
  function accept(ws: WebSocket, credentials: Credentials): void {
    ws.on('error', onSocketError);
    open(ws, credentials).catch((error: unknown) => {
      log.error('event socket failed to open', { exc: error });
      closeSocket(ws, CLOSE_CODES.serverError);
    });
  }

  function onSocketError(error: Error): void {
    log.debug('event socket error', { error: String(error) });
  }

  /** SPEC "Authentication" 9: the ticket wins over `token`; `?token=` only with `events_allow_query_token`. */
  async function authenticate({ ticket, token }: Credentials): Promise<SocketUser | null> {
    if (ticket) {
      const redeemed = await deps.tickets.redeem(ticket); // a cache outage throws: 1011
      if (!redeemed) return null;
      const user = await deps.loadUser(redeemed.userId);
      if (!user || !user.isActive) return null;
      // SPEC "Authentication" 8: a password change revokes what was issued before it.
      if (user.passwordChangedAt && user.passwordChangedAt.getTime() > redeemed.issuedAt.getTime())
        return null;
      // SPEC-2 "Sessions": a ticket of a session ended since it was issued opens nothing.
      if (redeemed.sessionId && !(await sessionActive(user.id, redeemed.sessionId))) return null;
      return { ...user, sessionId: redeemed.sessionId };
    }
    if (!token || !deps.settings.events_allow_query_token) return null;
    const authenticator = deps.authenticator();
    if (!authenticator) return null;
    try {
      // Throws the 401s of SPEC "Authentication" 3 (a refresh token: wrong type) and 400 user.disabled.
      const user = await authenticator.authenticate(token);
      return {
        id: user.id,
        isActive: user.isActive,
        isSuperuser: user.isSuperuser,
        passwordChangedAt: user.passwordChangedAt,
        sessionId: user.sessionId ?? null,
      };
    } catch (error) {
      if (error instanceof SvcError && error.status < 500) return null;
      throw error;
    }
  }

  async function open(ws: WebSocket, credentials: Credentials): Promise<void> {
    const user = await authenticate(credentials);
    if (!user) return closeSocket(ws, CLOSE_CODES.unauthorized);
    if (ws.readyState !== OPEN) return;
    if (shuttingDown) return closeSocket(ws, CLOSE_CODES.goingAway);
    const conn: Connection = {
      ws,
      userId: user.id,
      isSuperuser: user.isSuperuser,
      passwordChangedAt: user.passwordChangedAt?.getTime() ?? null,
      sessionId: user.sessionId ?? null,
      permissions: new Set(),
      pending: [],
      holding: 0,
      reads: 0,
      applied: 0,
      checking: false,
      closed: false,
    };
    // Registered before the slow reads below so that a user change or an event in between is not missed.
    register(conn);
    ws.on('close', () => unregister(conn));
    await refreshPermissions(conn);
    const snapshot = await snapshotOf(conn);
    if (conn.closed) return;
    send(conn, JSON.stringify({ type: 'snapshot', data: snapshot }));
    flushPending(conn);
    // SPEC "Connection rules" 3: the deadline is absolute, counted from open, not reset by traffic.
    conn.timer = setInterval(() => void recheck(conn), deps.pingIntervalMs);
    conn.timer.unref();
  }

  async function permissionsOf(userId: string): Promise<ReadonlySet<string>> {
    const resolver = deps.permissions();
    if (!resolver) return new Set();
    try {
      return new Set(await resolver.effectivePermissions(userId));
    } catch (error) {
      log.error('event socket: permissions could not be read; permission audiences will skip it', {
        exc: error,
      });
      return new Set();
    }
  }

  /** SPEC "Frame format": superusers get the last 20 activity entries, oldest first; others an empty list. */
  async function snapshotOf(conn: Connection): Promise<Record<string, unknown>[]> {
    if (!conn.isSuperuser) return [];
    const reader = deps.activity();
    if (!reader) return [];
    const entries = await reader.recent(SNAPSHOT_SIZE);
    if (entries === null) {
      if (!warnedMissingActivityTable) {
        warnedMissingActivityTable = true;
        log.warn('the activity log table does not exist: event snapshots are empty');
      }
      return [];
    }
    return entries;
  }

  /** Sends the frames held in `pending` that the connection's audience takes now; frames go out at once after. */
  function flushPending(conn: Connection): void {
    const pending = conn.pending ?? [];
    conn.pending = null;
    for (const { target, frame } of pending) if (matches(conn, target)) send(conn, frame);
  }

  /**
   * Re-reads the effective permissions of an open socket's user (permission audiences). With `hold` (a change
   * of the user's permissions, whose `user_permissions_changed` frame has gone out already), the frames that
   * arrive meanwhile wait and are matched against the new permissions: an event sent after the change reaches
   * the new audience, never the old (SPEC "Event types and audience"). Frames held for the snapshot at open are
   * left to the open.
   */
  async function refreshPermissions(conn: Connection, hold = false): Promise<void> {
    const read = ++conn.reads;
    const holding = hold && (conn.pending === null || conn.holding > 0);
    if (holding) {
      conn.holding += 1;
      conn.pending ??= [];
    }
    try {
      const permissions = await permissionsOf(conn.userId);
      if (!conn.closed && read > conn.applied) {
        conn.permissions = permissions;
        conn.applied = read;
      }
    } finally {
      if (holding && --conn.holding === 0 && !conn.closed) flushPending(conn);
    }
  }

  /** SPEC "Connection rules" 3: re-read the user, ping, close 4401/4403 on a change; a failing check keeps it. */
  async function recheck(conn: Connection): Promise<void> {
    if (conn.closed || conn.checking) return;
    conn.checking = true;
    try {
      const user = await deps.loadUser(conn.userId);
      if (conn.closed) return;
      if (!user || !user.isActive || (user.passwordChangedAt?.getTime() ?? null) !== conn.passwordChangedAt) {
        return close(conn, CLOSE_CODES.unauthorized);
      }
      if (user.isSuperuser !== conn.isSuperuser) return close(conn, CLOSE_CODES.forbidden);
      // SPEC-2 "Sessions": a session ended outside the API (the CLI) closes its sockets here.
      if (conn.sessionId && !(await sessionActive(conn.userId, conn.sessionId))) {
        return close(conn, CLOSE_CODES.unauthorized);
      }
      // Permission changes made outside the API reach the audience here, within one interval.
      if (!conn.isSuperuser) await refreshPermissions(conn);
    } catch (error) {
      log.error('event socket user check failed; the connection stays open', {
        exc: error,
        userId: conn.userId,
      });
    } finally {
      conn.checking = false;
    }
    send(conn, PING_FRAME);
  }

  function register(conn: Connection): void {
    all.add(conn);
    let set = byUser.get(conn.userId);
    if (!set) byUser.set(conn.userId, (set = new Set()));
    set.add(conn);
  }

  function unregister(conn: Connection): void {
    if (conn.closed) return;
    conn.closed = true;
    if (conn.timer) clearInterval(conn.timer);
    all.delete(conn);
    const set = byUser.get(conn.userId);
    set?.delete(conn);
    if (set?.size === 0) byUser.delete(conn.userId);
  }

  function close(conn: Connection, code: number): void {
    unregister(conn);
    closeSocket(conn.ws, code);
  }

  function closeSocket(ws: WebSocket, code: number): void {
    if (ws.readyState === OPEN || ws.readyState === CONNECTING) ws.close(code);
  }

  /**
   * A frame is a string, or its UTF-8 bytes when it goes to many sockets: `ws` encodes a string on every
   * `send`, so a broadcast encodes once and every socket gets the same Buffer as a TEXT frame (docs/performance.md).
   */
  function send(conn: Connection, frame: string | Buffer): void {
    if (conn.closed || conn.ws.readyState !== OPEN) return;
    if (conn.ws.bufferedAmount > deps.maxBufferedBytes) return dropSlowClient(conn);
    conn.ws.send(frame, TEXT_FRAME);
  }

  /** Back-pressure: a client that does not read is closed (1013) instead of buffering without bound. */
  function dropSlowClient(conn: Connection): void {
    log.warn('event socket closed: the client does not read its events', {
      userId: conn.userId,
      bufferedBytes: conn.ws.bufferedAmount,
    });
    close(conn, CLOSE_CODES.tryAgainLater);
    // The close frame waits behind the unread data; do not hold that memory for ws's 30-second timeout.
    setTimeout(() => conn.ws.terminate(), BACKPRESSURE_TERMINATE_MS).unref();
  }

  function matches(conn: Connection, target: Target): boolean {
    if (target.all) return true;
    if (target.superusers && conn.isSuperuser) return true;
    if (target.userIds?.includes(conn.userId)) return true;
    if (target.codename !== undefined) return conn.isSuperuser || conn.permissions.has(target.codename);
    return false;
  }

  return {
    /** Handles upgrades of the HTTP server. */
    attach(server: Server): void {
      server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) =>
        onUpgrade(server, req, socket, head),
      );
    },

    /** Sends one serialised frame to every socket the target selects. */
    deliver(target: Target, frame: string): void {
      const onlyUsers = !target.all && !target.superusers && target.codename === undefined;
      const candidates = onlyUsers
        ? new Set((target.userIds ?? []).flatMap((id) => [...(byUser.get(id) ?? [])]))
        : all;
      let bytes: Buffer | undefined; // encoded on the first socket that takes it, shared by the others
      for (const conn of candidates) {
        if (conn.pending) {
          // Held (before the snapshot, or while changed permissions are read): matched when sent, against the
          // permissions then; a permission audience is kept for that, whatever the permissions are now.
          if (!matches(conn, target) && target.codename === undefined) continue;
          if (conn.pending.length >= MAX_PENDING_FRAMES) dropSlowClient(conn);
          else conn.pending.push({ target, frame });
        } else if (matches(conn, target)) send(conn, (bytes ??= Buffer.from(frame)));
      }
    },

    /**
     * SPEC "WebSocket connection": closes the user's sockets at once (4401, or 4403 for superuser status); a
     * change of the user's permissions re-reads the permission audience of their open sockets instead, so a
     * removed permission stops reaching them at once.
     */
    userChanged(userId: string, change: UserChange): void {
      const conns = [...(byUser.get(userId) ?? [])];
      if (change === 'permissions_changed') {
        for (const conn of conns) void refreshPermissions(conn, true);
        return;
      }
      for (const conn of conns) close(conn, CHANGE_CLOSE_CODES[change]);
    },

    /** SPEC-2 "Sessions": closes the user's sockets of these sessions (4401); others stay open. */
    sessionsEnded(userId: string, sessionIds: string[]): void {
      const ended = new Set(sessionIds);
      for (const conn of [...(byUser.get(userId) ?? [])]) {
        if (conn.sessionId !== null && ended.has(conn.sessionId)) close(conn, CLOSE_CODES.unauthorized);
      }
    },

    /** Open, authenticated sockets. */
    get size(): number {
      return all.size;
    },

    /** Graceful shutdown: every socket gets 1001; those that do not answer are cut shortly after. */
    async shutdown(): Promise<void> {
      closeAll();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
    },
  };

  function closeAll(): void {
    if (shuttingDown) return;
    shuttingDown = true;
    for (const conn of [...all]) unregister(conn);
    for (const ws of wss.clients) closeSocket(ws, CLOSE_CODES.goingAway);
    const timer = setTimeout(() => {
      for (const ws of wss.clients) ws.terminate();
    }, SHUTDOWN_TERMINATE_MS);
    timer.unref();
  }
}

export type EventSockets = ReturnType<typeof createEventSockets>;
