#!/usr/bin/env node
// docs/performance.md "Benchmark suite": WebSocket scenarios. Forked as `--clients`, this process holds the sockets (so their work is not
// counted on the server) and records, for every `login` frame, when each socket received it. The parent side
// (exports) drives it, triggers the broadcasts and reads the server's heap through the inspector protocol.
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import WebSocket from 'ws';
import { call, login } from './project.mjs';
import { percentile, sleep } from './stats.mjs';

const SELF = fileURLToPath(import.meta.url);

/** Sockets opened and closed before the heap is measured. */
const WARMUP_SOCKETS = 200;

if (process.argv[2] === '--clients') {
  const sockets = [];
  /** timestamp of the frame -> receipt times (ms since epoch) */
  const received = new Map();
  process.on('message', async (m) => {
    if (m.op === 'open') {
      let opened = 0;
      let ready = 0;
      const snapshots = [];
      await Promise.all(
        m.urls.map(
          (url) =>
            new Promise((resolve, reject) => {
              const ws = new WebSocket(url);
              ws.once('open', () => (opened++, resolve()));
              ws.once('error', reject);
              // The handshake's `open` comes before the server has authenticated the socket; it sends the
              // `snapshot` frame once it has (SPEC "Frame format"). A socket closed first is not waited for.
              let snapshot;
              snapshots.push(new Promise((r) => (snapshot = r)));
              ws.once('close', snapshot);
              ws.on('message', (data) => {
                const at = Date.now();
                const frame = JSON.parse(data.toString());
                if (frame.type === 'snapshot') return (ready++, snapshot());
                if (frame.type !== m.type) return;
                const list = received.get(frame.timestamp) ?? [];
                list.push(at);
                received.set(frame.timestamp, list);
              });
              sockets.push(ws);
            }),
        ),
      );
      await Promise.all(snapshots);
      process.send({ opened, ready });
    } else if (m.op === 'collect') {
      const out = [...received.entries()].map(([timestamp, times]) => ({
        timestamp,
        count: times.length,
        lastMs: Math.max(...times) - Date.parse(timestamp),
        firstMs: Math.min(...times) - Date.parse(timestamp),
      }));
      received.clear();
      process.send({ frames: out });
    } else if (m.op === 'close') {
      for (const ws of sockets) ws.terminate();
      sockets.length = 0;
      process.send({ closed: true });
    }
  });
}

function ask(child, message) {
  return new Promise((resolve, reject) => {
    child.once('message', resolve);
    child.once('exit', (code) => reject(new Error(`ws clients exited with ${code}`)));
    child.send(message);
  }).finally(() => child.removeAllListeners('exit'));
}

/** Whether the server offers the event stream (the ticket route exists). */
export async function eventsAvailable(base, token) {
  try {
    await call(base, 'POST', '/api/core/events/ticket', { token });
    return true;
  } catch {
    return false;
  }
}

async function ticketUrls(base, token, count) {
  const urls = [];
  const wsBase = base.replace(/^http/, 'ws');
  for (let i = 0; i < count; i += 20) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(20, count - i) }, () =>
        call(base, 'POST', '/api/core/events/ticket', { token }),
      ),
    );
    for (const r of batch)
      urls.push(`${wsBase}/api/core/events/ws?ticket=${encodeURIComponent(r.body.ticket)}`);
  }
  return urls;
}

/** The server's V8 heap after a full GC, read through the inspector (the server runs with --inspect). */
export async function heapUsed(inspectorUrl) {
  const ws = new WebSocket(inspectorUrl);
  await new Promise((resolve, reject) => (ws.once('open', resolve), ws.once('error', reject)));
  let id = 0;
  const pending = new Map();
  ws.on('message', (data) => {
    const msg = JSON.parse(data.toString());
    if (msg.id && pending.has(msg.id)) pending.get(msg.id)(msg);
  });
  const send = (method, params = {}) =>
    new Promise((resolve) => {
      const n = ++id;
      pending.set(n, resolve);
      ws.send(JSON.stringify({ id: n, method, params }));
    });
  for (let i = 0; i < 3; i++) await send('HeapProfiler.collectGarbage');
  const r = await send('Runtime.evaluate', {
    expression: 'process.memoryUsage().heapUsed',
    returnByValue: true,
  });
  ws.close();
  return r.result.result.value;
}

/**
 * Opens `sockets` superuser sockets, measures the heap each idle socket costs, then times `broadcasts`
 * `login` events (each a real `POST /api/auth/token` of `trigger`) to the last socket.
 */
export async function measureSockets({ server, inspectorUrl, adminToken, trigger, sockets, broadcasts }) {
  const clients = fork(SELF, ['--clients'], { stdio: 'inherit' });
  try {
    // Warm-up: the first sockets also pay what a server pays once (code compiled on first use, database pool
    // connections opened for the tickets, caches): measured here, 200 sockets opened and closed left 1.4 MB
    // (SQLite) to 1.9 MB (PostgreSQL) behind, while the next 200 cost 5 to 7 KiB each. Opened and closed
    // first, they keep that one-time cost out of the per-socket figure.
    // `open` answers once every socket has its snapshot frame, i.e. the server has finished opening it: a
    // socket's handshake completes before the server redeems its ticket and reads the user, session,
    // permissions and snapshot. On PostgreSQL the 1,000 opens queue for the pool's connections and took 8 to
    // 9 s here; read 500 ms after the handshakes, the heap held ~985 ticket redemptions still waiting for a
    // connection (postgres-js Query objects, their promises, drizzle's statements, the suspended opens) and
    // gave 12.5 to 16.7 KiB per socket for what is 4 to 5 KiB once the sockets are open, as on SQLite.
    await ask(clients, {
      op: 'open',
      urls: await ticketUrls(server.base, adminToken, WARMUP_SOCKETS),
      type: 'login',
    });
    await ask(clients, { op: 'close' });
    await sleep(500);
    const heapBefore = await heapUsed(inspectorUrl);
    const urls = await ticketUrls(server.base, adminToken, sockets);
    const { opened, ready } = await ask(clients, { op: 'open', urls, type: 'login' });
    await sleep(500);
    await ask(clients, { op: 'collect' }); // drop anything before the measurement
    const heapAfter = await heapUsed(inspectorUrl);
    const perSocketBytes = (heapAfter - heapBefore) / opened;

    for (let i = 0; i < 3; i++) await login(server.base, trigger); // warm-up broadcasts
    await sleep(200);
    await ask(clients, { op: 'collect' });
    for (let i = 0; i < broadcasts; i++) {
      await login(server.base, trigger);
      await sleep(50);
    }
    await sleep(500);
    const { frames } = await ask(clients, { op: 'collect' });
    const complete = frames.filter((f) => f.count === opened);
    const last = frames.map((f) => f.lastMs);
    return {
      sockets: opened,
      ready,
      heapBefore,
      heapAfter,
      perSocketBytes,
      broadcasts: frames.length,
      complete: complete.length,
      lastSocketP50: percentile(last, 50),
      lastSocketP99: percentile(last, 99),
      firstSocketP50: percentile(
        frames.map((f) => f.firstMs),
        50,
      ),
    };
  } finally {
    await ask(clients, { op: 'close' }).catch(() => {});
    clients.kill();
  }
}
