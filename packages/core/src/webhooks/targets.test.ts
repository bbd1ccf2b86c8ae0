import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { describeEachDatabase, startTestApp, type LoggedInClient, type TestApp } from '../testing/index.js';
import { attemptDelivery } from './attempt.js';
import { createConnectionPool } from './connections.js';
import { RESPONSE_BODY_LIMIT } from './constants.js';
import { isPrivateAddress } from './target.js';

/** An attempt of `{}` at a loopback receiver's `url`, on `pool`'s kept-alive connections. */
const attemptThrough = (pool: ReturnType<typeof createConnectionPool>, url: string, timeoutMs: number) =>
  attemptDelivery({
    url,
    body: '{}',
    headers: {},
    timeoutMs,
    allowPrivate: true,
    agent: pool.agentFor(new URL(url)),
  });

/**
 * SPEC-3 §3 "Errors" and the SSRF defence: `https://` only, no loopback, private, link-local or unique-local
 * target unless `webhooks_allow_private_targets`, checked against every resolved address at creation, at a change
 * of the URL and at each attempt (the connection only reaches the addresses checked).
 */
describe('Webhook targets', () => {
  it('classes loopback, private, link-local, unique-local and mapped addresses as private, public ones not', () => {
    for (const address of [
      '127.0.0.1',
      '10.1.2.3',
      '172.16.0.1',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '::1',
      '::',
      'fe80::1',
      'fc00::1',
      'fd12:3456::1',
      '::ffff:127.0.0.1',
      '::ffff:7f00:1',
      '::ffff:169.254.169.254',
    ]) {
      expect([address, isPrivateAddress(address)]).toEqual([address, true]);
    }
    for (const address of ['93.184.216.34', '8.8.8.8', '2606:4700:4700::1111', '::ffff:8.8.8.8']) {
      expect([address, isPrivateAddress(address)]).toEqual([address, false]);
    }
  });

  describe('an attempt to a private target while not allowed', () => {
    let server: Server;
    let hits = 0;
    let port = 0;
    beforeAll(async () => {
      server = createServer((_req, res) => {
        hits++;
        res.end();
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      port = (server.address() as AddressInfo).port;
    });
    afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

    it('never connects: neither to a loopback literal nor to a name that resolves to one', async () => {
      for (const url of [
        `https://127.0.0.1:${port}/x`,
        `https://localhost:${port}/x`,
        `https://[::1]:${port}/x`,
      ]) {
        const outcome = await attemptDelivery({
          url,
          body: '{}',
          headers: {},
          timeoutMs: 2000,
          allowPrivate: false,
        });
        expect(outcome.statusCode).toBeNull();
        expect(outcome.error).toMatch(/private address/);
      }
      expect(hits).toBe(0);
      // Allowed (and http://, which only then passes), the same receiver answers.
      const allowed = await attemptDelivery({
        url: `http://localhost:${port}/x`,
        body: '{}',
        headers: {},
        timeoutMs: 2000,
        allowPrivate: true,
      });
      expect(allowed.statusCode).toBe(200);
      expect(hits).toBe(1);
    });

    it('never connects through a pool of kept-alive connections either', async () => {
      const before = hits;
      const pool = createConnectionPool({ allowPrivate: false });
      try {
        for (const url of [`https://localhost:${port}/x`, `https://127.0.0.1:${port}/x`]) {
          const outcome = await attemptDelivery({
            url,
            body: '{}',
            headers: {},
            timeoutMs: 2000,
            allowPrivate: false,
            agent: pool.agentFor(new URL(url)),
          });
          expect(outcome.statusCode).toBeNull();
          expect(outcome.error).toMatch(/private address/);
        }
      } finally {
        pool.close();
      }
      expect(hits).toBe(before);
    });
  });

  describe('kept-alive connections', () => {
    let server: Server;
    let port = 0;
    /** The client port of each request's connection: the same port, the same connection. */
    const ports: number[] = [];
    beforeAll(async () => {
      server = createServer((req, res) => {
        ports.push(req.socket.remotePort!);
        req.resume();
        // Far more than arrives with the head: the attempt stops reading while the answer is still coming.
        if (req.url === '/big') res.end('x'.repeat(RESPONSE_BODY_LIMIT * 1024));
        else if (req.url !== '/hang') res.end('ok');
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      port = (server.address() as AddressInfo).port;
    });
    afterAll(() => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    });

    it('are reused between attempts, but not after an answer over the limit or a timeout', async () => {
      const pool = createConnectionPool({ allowPrivate: true });
      const attempt = (path: string) => attemptThrough(pool, `http://localhost:${port}${path}`, 500);
      try {
        expect((await attempt('/a')).statusCode).toBe(200);
        expect((await attempt('/a')).statusCode).toBe(200);
        expect(ports[1]).toBe(ports[0]);
        // An answer over the limit is cut off with its connection, half read: the next attempt opens another.
        expect((await attempt('/big')).statusCode).toBe(200);
        expect(ports[2]).toBe(ports[0]);
        expect((await attempt('/a')).statusCode).toBe(200);
        expect(ports[3]).not.toBe(ports[0]);
        // So is one that timed out.
        expect((await attempt('/hang')).error).toMatch(/timeout/);
        expect((await attempt('/a')).statusCode).toBe(200);
        expect(ports[5]).not.toBe(ports[4]);
      } finally {
        pool.close();
      }
    });
  });
});

describe('a receiver that closes a kept-alive connection as it is reused', () => {
  it('gets the attempt again on a new connection, once', async () => {
    // Answers the first request of each connection and closes the connection at its second, unanswered: what
    // a receiver's idle timeout does when it fires just as the next attempt arrives.
    const served = new WeakMap<object, number>();
    let cut = 0;
    const server = createServer((req, res) => {
      const n = (served.get(req.socket) ?? 0) + 1;
      served.set(req.socket, n);
      req.resume();
      if (n === 1) res.end('ok');
      else {
        cut++;
        req.socket.destroy();
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
    const pool = createConnectionPool({ allowPrivate: true });
    const attempt = () => attemptThrough(pool, url, 2000);
    try {
      expect(await attempt()).toEqual({ statusCode: 200, error: null });
      expect(await attempt()).toEqual({ statusCode: 200, error: null });
      expect(cut).toBe(1);
    } finally {
      pool.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});

describe('an https receiver', () => {
  // A self-signed certificate for localhost, made by openssl for this test; attempts trust it through `tls.ca`
  // (createApp's `webhookTls`), as a deployment with a private certificate authority would.
  let dir: string;
  let server: ReturnType<typeof createHttpsServer>;
  let port = 0;
  let cert = '';
  const bodies: string[] = [];
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'svc-webhook-tls-'));
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-days',
        '1',
        '-subj',
        '/CN=localhost',
        '-addext',
        'subjectAltName=DNS:localhost',
        '-keyout',
        join(dir, 'key.pem'),
        '-out',
        join(dir, 'cert.pem'),
      ],
      { stdio: 'ignore' },
    );
    cert = readFileSync(join(dir, 'cert.pem'), 'utf8');
    server = createHttpsServer({ key: readFileSync(join(dir, 'key.pem')), cert }, (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        bodies.push(Buffer.concat(chunks).toString('utf8'));
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    rmSync(dir, { recursive: true, force: true });
  });

  it('is delivered to over TLS when its certificate is trusted, and refused when it is not', async () => {
    const attempt = (tls?: { ca: string }) =>
      attemptDelivery({
        url: `https://localhost:${port}/hook`,
        body: '{"id":"tls"}',
        headers: { 'content-type': 'application/json' },
        timeoutMs: 5000,
        allowPrivate: true,
        ...(tls ? { tls } : {}),
      });
    expect(await attempt({ ca: cert })).toEqual({ statusCode: 204, error: null });
    expect(bodies).toEqual(['{"id":"tls"}']);
    const untrusted = await attempt();
    expect(untrusted.statusCode).toBeNull();
    expect(untrusted.error).toMatch(/self[- ]signed|certificate/i);
    expect(bodies).toHaveLength(1);
  });

  it('checks the address of a reused connection again at each attempt', async () => {
    // The pool's connection was opened while private targets were allowed; an attempt that may not reach a
    // private address refuses it before sending a byte (what a name that now resolves privately meets).
    const pool = createConnectionPool({ allowPrivate: true, tls: { ca: cert } });
    const url = `https://localhost:${port}/hook`;
    const attempt = (allowPrivate: boolean) =>
      attemptDelivery({
        url,
        body: '{"id":"reused"}',
        headers: { 'content-type': 'application/json' },
        timeoutMs: 5000,
        allowPrivate,
        tls: { ca: cert },
        agent: pool.agentFor(new URL(url)),
      });
    try {
      expect(await attempt(true)).toEqual({ statusCode: 204, error: null });
      const before = bodies.length;
      const refused = await attempt(false);
      expect(refused.statusCode).toBeNull();
      expect(refused.error).toMatch(/private address/);
      expect(bodies).toHaveLength(before);
    } finally {
      pool.close();
    }
  });
});

describeEachDatabase('Webhook targets at creation and change', (database) => {
  let app: TestApp;
  let admin: LoggedInClient;
  beforeAll(async () => {
    app = await startTestApp({ database, settings: { webhooks_enabled: true } });
    admin = await app.loginAs(await app.createUser({ username: 'tg_admin', isSuperuser: true }));
  });
  afterAll(() => app.close());

  it('refuses http:// as url_invalid, then private targets (literal or resolved) as url_forbidden', async () => {
    const invalid = await admin.post('/api/admin/webhooks', {
      url: 'http://example.com/hook',
      events: ['*'],
    });
    expect(invalid.status).toBe(422);
    expect(invalid.body.detail[0]).toMatchObject({ code: 'webhook.url_invalid', loc: ['body', 'url'] });
    for (const url of [
      'https://127.0.0.1/hook',
      'https://localhost/hook',
      'https://[::1]/hook',
      'https://169.254.169.254/latest/meta-data',
      'https://10.0.0.8/hook',
    ]) {
      const res = await admin.post('/api/admin/webhooks', { url, events: ['*'] });
      expect([url, res.status, res.body.detail?.[0]?.code]).toEqual([url, 422, 'webhook.url_forbidden']);
    }
    const ok = await admin.post('/api/admin/webhooks', { url: 'https://93.184.216.34/hook', events: ['*'] });
    expect(ok.status).toBe(201);
    const changed = await admin.patch(`/api/admin/webhooks/${ok.body.data.id}`, {
      url: 'https://127.0.0.2/x',
    });
    expect(changed.status).toBe(422);
    expect(changed.body.detail[0].code).toBe('webhook.url_forbidden');
    // Disabled right away: the test leaves no delivery to an outside address behind.
    await admin.delete(`/api/admin/webhooks/${ok.body.data.id}`);
  });
});
