import { WebSocket } from 'ws';
import { z } from '../packages/core/src/index.js';
import { coreModules } from '../packages/core/src/app/modules.js';
import type { Audience } from '../packages/core/src/kernel/ports.js';
import { defineRouter } from '../packages/core/src/kernel/router.js';
import type { TestClient } from '../packages/core/src/testing/index.js';
import { createEventsModule, type EventsModuleOptions } from '../packages/core/src/events/index.js';

// Shared by the event tests; svc-internal, outside every published package (see testing/README.md).

/** A parsed frame of the event stream. */
export interface Frame {
  type: string;
  timestamp?: string;
  data?: any;
}

/** A `ws` client on the event route that records frames and the close code (tests only). */
export interface TestSocket {
  ws: WebSocket;
  frames: Frame[];
  /** Resolves with the close code once the connection is closed. */
  closed: Promise<number>;
  /** The first recorded frame (now or later) that matches; rejects after `timeoutMs`. */
  waitFor(predicate: (frame: Frame) => boolean, timeoutMs?: number): Promise<Frame>;
  close(): Promise<number>;
}

/** `ws://…/api/core/events/ws?<query>` of a test app's `http://` URL. */
export function eventsUrl(
  baseUrl: string,
  query: Record<string, string> = {},
  path = '/api/core/events/ws',
): string {
  const search = new URLSearchParams(query).toString();
  return `${baseUrl.replace(/^http/, 'ws')}${path}${search ? `?${search}` : ''}`;
}

/** Opens a socket; resolves once the handshake is accepted (the server closes unauthorised ones after it). */
export function openSocket(url: string): Promise<TestSocket> {
  const ws = new WebSocket(url);
  const frames: Frame[] = [];
  const waiters = new Set<{ predicate: (frame: Frame) => boolean; resolve(frame: Frame): void }>();
  ws.on('message', (data) => {
    const frame = JSON.parse(String(data)) as Frame;
    frames.push(frame);
    for (const waiter of [...waiters]) {
      if (waiter.predicate(frame)) {
        waiters.delete(waiter);
        waiter.resolve(frame);
      }
    }
  });
  const closed = new Promise<number>((resolve) => ws.on('close', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    ws.once('error', reject);
    ws.once('unexpected-response', (_req, res) => reject(new Error(`handshake answered ${res.statusCode}`)));
    ws.once('open', () => {
      ws.off('error', reject);
      ws.on('error', () => undefined);
      resolve({
        ws,
        frames,
        closed,
        waitFor(predicate, timeoutMs = 5_000) {
          const found = frames.find(predicate);
          if (found) return Promise.resolve(found);
          return new Promise<Frame>((resolveFrame, rejectFrame) => {
            const waiter = {
              predicate,
              resolve: (frame: Frame) => {
                clearTimeout(timer);
                resolveFrame(frame);
              },
            };
            const timer = setTimeout(() => {
              waiters.delete(waiter);
              rejectFrame(
                new Error(`no matching frame within ${timeoutMs} ms; got ${JSON.stringify(frames)}`),
              );
            }, timeoutMs);
            waiters.add(waiter);
          });
        },
        close() {
          if (ws.readyState === WebSocket.OPEN) ws.close(1000);
          return closed;
        },
      });
    });
  });
}

/** The HTTP status a refused handshake gets. */
export function handshakeStatus(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url);
    ws.once('unexpected-response', (_req, res) => {
      resolve(res.statusCode ?? 0);
      res.resume();
      ws.terminate();
    });
    ws.once('open', () => {
      ws.terminate();
      reject(new Error('the handshake was accepted'));
    });
    ws.on('error', () => undefined);
  });
}

/** Resolves with the close code, or rejects when the socket is still open after `timeoutMs`. */
export function closeCodeWithin(socket: TestSocket, timeoutMs: number): Promise<number> {
  return Promise.race([
    socket.closed,
    new Promise<number>((_resolve, reject) =>
      setTimeout(() => reject(new Error(`still open after ${timeoutMs} ms`)), timeoutMs).unref(),
    ),
  ]);
}

/** The core modules with the events module tuned for tests (short ping interval, small buffers, a clock). */
export function withEvents(options: EventsModuleOptions) {
  return coreModules.map((module) => (module.name === 'events' ? createEventsModule(options) : module));
}

/** A project router whose route emits whatever the test asks for through `ctx.emit`. */
export function projectRouter() {
  const project = defineRouter({ prefix: '/project', name: 'project' });
  project.post(
    '/emit',
    {
      body: z.object({
        type: z.string(),
        data: z.record(z.string(), z.unknown()),
        audience: z.any().optional(),
        repeat: z.number().int().min(1).max(1000).default(1),
      }),
    },
    (ctx) => {
      for (let i = 0; i < ctx.body.repeat; i++)
        ctx.emit(ctx.body.type, ctx.body.data, ctx.body.audience as Audience);
      return { emitted: ctx.body.repeat };
    },
  );
  return project;
}

export async function ticketOf(client: TestClient): Promise<string> {
  const res = await client.post('/api/core/events/ticket');
  if (res.status !== 200) throw new Error(`ticket: ${res.status} ${res.text}`);
  return res.body.ticket as string;
}
