import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request a receiver got. */
export interface ReceivedWebhook {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** The parsed body. */
  json: any;
  /** The sender's port of the connection (which process sent it: test/cluster's `hostHolding`). */
  remotePort: number | undefined;
}

/** What the receiver answers at a path: a status, or `hang` (no answer: a timeout). */
export type ReceiverAnswer = number | 'hang';

/**
 * A webhook receiver on loopback (SPEC-3 §3 tests): records every request and answers each path as told
 * (`answers`, a list used in order, the last one repeating; 204 by default), after `delayMs` when given.
 */
export async function startWebhookReceiver(options: { delayMs?: number } = {}) {
  const received: ReceivedWebhook[] = [];
  const answers = new Map<string, ReceiverAnswer[]>();
  const hanging = new Set<ServerResponse>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const path = req.url ?? '/';
      let json: unknown = null;
      try {
        json = JSON.parse(body);
      } catch {
        /* recorded as text */
      }
      received.push({ path, headers: req.headers, body, json, remotePort: req.socket.remotePort });
      const list = answers.get(path) ?? [];
      const answer = list.length > 1 ? list.shift()! : (list[0] ?? 204);
      if (answer === 'hang') {
        hanging.add(res);
        res.on('close', () => hanging.delete(res));
        return;
      }
      const send = () => {
        res.statusCode = answer;
        if (answer >= 300 && answer < 400) res.setHeader('location', '/elsewhere');
        res.end('ok');
      };
      if (options.delayMs) setTimeout(send, options.delayMs);
      else send();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: (path: string) => `http://127.0.0.1:${port}${path}`,
    port,
    received,
    /** Requests to `path`. */
    at: (path: string) => received.filter((r) => r.path === path),
    answer(path: string, ...list: ReceiverAnswer[]) {
      answers.set(path, list);
    },
    async close() {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export type WebhookReceiver = Awaited<ReturnType<typeof startWebhookReceiver>>;
