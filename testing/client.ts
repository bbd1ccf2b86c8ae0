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
 * A second listener on a test app's own request handler that counts `POST /api/auth/refresh-token` and
 * `POST /api/auth/session/refresh` and the statuses they answered, and serves `pages` (path to content type and body) beside the API: one origin.
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
    // Both refresh routes: the bearer one and the cookie session's (SPEC-3 section 5).
    if (
      req.method === 'POST' &&
      (path === '/api/auth/refresh-token' || path === '/api/auth/session/refresh')
    ) {
      refreshes += 1;
      res.once('finish', () => {
        if (res.statusCode === 200) rotations += 1;
      });
    }
    handler(req, res);
  });
  // The event stream's WebSocket handshakes go on to the app's own listener, where its socket server is.
  const upgraded = new Set<Socket>();
  server.on('upgrade', (req, socket: Socket, head: Buffer) => {
    const upstream = connect(portOf(app.url), '127.0.0.1', () => {
      const lines = [`${req.method} ${req.url} HTTP/1.1`];
      for (let i = 0; i < req.rawHeaders.length; i += 2)
        lines.push(`${req.rawHeaders[i]}: ${req.rawHeaders[i + 1]}`);
      upstream.write(`${lines.join('\r\n')}\r\n\r\n`);
      upstream.write(head);
      socket.pipe(upstream).pipe(socket);
    });
    for (const end of [socket, upstream]) {
      upgraded.add(end);
      end.on('error', () => end.destroy());
      end.on('close', () => {
        upgraded.delete(end);
        socket.destroy();
        upstream.destroy();
      });
    }
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const address = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${address.port}`,
    refreshes: () => refreshes,
    rotations: () => rotations,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of upgraded) socket.destroy();
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

/**
 * A page's script bundled by esbuild with React (production build; 19, or 18) and @svc/react and @svc/client
 * from their sources, as a frontend's bundler would: for the React browser tests (test/browser/react-page.ts).
 */
export async function bundleReactPage(entry: string, react: 18 | 19 = 19): Promise<string> {
  const { build } = await import('esbuild');
  const source = (path: string) => new URL(`../packages/${path}`, import.meta.url).pathname;
  const result = await build({
    entryPoints: [entry],
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    write: false,
    logLevel: 'silent',
    minify: true,
    define: { 'process.env.NODE_ENV': '"production"' },
    alias: {
      '@svc/client': source('client/src/index.ts'),
      '@svc/react': source('react/src/index.ts'),
      // React 18, the oldest of the peer range: the repository's `react-18` and `react-dom-18` (npm aliases).
      ...(react === 18 ? { react: 'react-18', 'react-dom': 'react-dom-18' } : {}),
    },
  });
  return result.outputFiles[0]!.text;
}
