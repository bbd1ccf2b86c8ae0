// A fast webhook receiver for the benches (docs/performance.md "Webhooks"): a plain TCP server that reads each
// HTTP/1.1 request on a kept-alive connection (head, then `content-length` bytes of body) and answers
// `204 No Content` at once. On a real deployment the receiver is another machine; here it shares the two cores
// with the servers, PostgreSQL and the load generator, so it does as little as an HTTP server can: no header
// object, no streams, and the body handed on as bytes (parsed only by a caller that needs it).
import { createServer } from 'node:net';

const ANSWER = Buffer.from('HTTP/1.1 204 No Content\r\nConnection: keep-alive\r\n\r\n');
const HEAD_END = Buffer.from('\r\n\r\n');

/**
 * Starts the receiver on 127.0.0.1 at a free port. `onRequest(path, body)` runs for each request before its
 * answer is written. Resolves with `{ port, connections, close() }`.
 */
export async function startFastReceiver(onRequest) {
  const sockets = new Set();
  let connections = 0;
  const server = createServer((socket) => {
    connections++;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    let buffered = Buffer.alloc(0);
    socket.on('data', (chunk) => {
      buffered = buffered.length === 0 ? chunk : Buffer.concat([buffered, chunk]);
      for (;;) {
        const end = buffered.indexOf(HEAD_END);
        if (end < 0) return;
        const head = buffered.toString('latin1', 0, end);
        const length = Number(/\r\ncontent-length:\s*(\d+)/i.exec(head)?.[1] ?? 0);
        const total = end + HEAD_END.length + length;
        if (buffered.length < total) return;
        const path = head.slice(head.indexOf(' ') + 1, head.indexOf(' ', head.indexOf(' ') + 1));
        onRequest(path, buffered.subarray(end + HEAD_END.length, total));
        buffered = buffered.subarray(total);
        socket.write(ANSWER);
      }
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: server.address().port,
    /** Connections accepted so far (a sender that keeps them alive opens few). */
    get connections() {
      return connections;
    },
    close() {
      for (const socket of sockets) socket.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
