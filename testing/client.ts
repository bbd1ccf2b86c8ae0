import { createServer as createHttpServer, type Server } from 'node:http';
import { connect, createServer as createTcpServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { TEST_SECRET_KEY, type TestApp } from '../packages/core/src/testing/index.js';
import { craftJwt, hmacSigner } from '../test/hardening/helpers.js';

// Shared by the @svc/client tests (Node and browser); svc-internal, outside every published package.

/**
 * The same access token, expired: its claims (`sub`, `sid`, `iat`) kept, `exp` set to its `iat`, signed with
 * the test key. The server answers it 401 `auth.token_invalid` as it does a token past its lifetime, without
 * a test waiting the minute `access_token_expire_minutes` allows at least.
 */
export function expiredCopyOf(accessToken: string): string {
  const [header, payload] = accessToken
    .split('.')
    .slice(0, 2)
    .map((part) => JSON.parse(Buffer.from(part, 'base64url').toString()));
  return craftJwt(header, { ...payload, exp: payload.iat }, hmacSigner(TEST_SECRET_KEY));
}

/**
 * A second listener on a test app's own request handler that counts `POST /api/auth/refresh-token` and the
 * statuses it answered, and serves `pages` (path to content type and body) beside the API: one origin.
 */
export interface CountingServer {
  url: string;
  /** Refresh requests received so far. */
  refreshes(): number;
  /** Refreshes answered 200 so far: rotations. */
  rotations(): number;
  close(): Promise<void>;
}

export async function countingServer(
  app: TestApp,
  pages: Record<string, { type: string; body: string }> = {},
  port = 0,
): Promise<CountingServer> {
  let refreshes = 0;
  let rotations = 0;
  const handler = app.app.handler;
  const server: Server = createHttpServer((req, res) => {
    const path = req.url?.split('?')[0] ?? '';
    const page = pages[path];
    if (req.method === 'GET' && page) {
      res.writeHead(200, { 'content-type': page.type, 'cache-control': 'no-store' }).end(page.body);
      return;
    }
    if (req.method === 'POST' && path === '/api/auth/refresh-token') {
      refreshes += 1;
      res.once('finish', () => {
        if (res.statusCode === 200) rotations += 1;
      });
    }
    handler(req, res);
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const address = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${address.port}`,
    refreshes: () => refreshes,
    rotations: () => rotations,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * A TCP relay in front of real servers: `cut()` drops every open connection (a network failure as a client
 * sees it), and `route` picks the server of each new connection from its first bytes (the request line and
 * headers), so one URL can reach two apps.
 */
export interface TcpRelay {
  url: string;
  cut(): void;
  close(): Promise<void>;
}

export async function tcpRelay(route: (head: string) => number): Promise<TcpRelay> {
  const open = new Set<Socket>();
  const server = createTcpServer((client) => {
    open.add(client);
    client.on('close', () => open.delete(client));
    client.on('error', () => client.destroy());
    client.once('data', (first) => {
      const upstream = connect(route(first.toString('latin1')), '127.0.0.1');
      open.add(upstream);
      upstream.on('close', () => {
        open.delete(upstream);
        client.destroy();
      });
      upstream.on('error', () => upstream.destroy());
      client.on('close', () => upstream.destroy());
      upstream.write(first);
      client.pipe(upstream);
      upstream.pipe(client);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    cut() {
      for (const socket of open) socket.destroy();
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of open) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** The port of a test app's URL. */
export const portOf = (url: string): number => Number(new URL(url).port);

/** @svc/client bundled for a page (ESM, browser platform) by esbuild, as a frontend's bundler would. */
export async function bundleClient(): Promise<string> {
  const { build } = await import('esbuild');
  const result = await build({
    entryPoints: [new URL('../packages/client/src/index.ts', import.meta.url).pathname],
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    write: false,
    logLevel: 'silent',
  });
  return result.outputFiles[0]!.text;
}
