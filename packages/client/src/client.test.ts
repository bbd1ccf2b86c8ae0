import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocket } from 'ws';
import { describeEachDatabase, startTestApp, type TestApp, type TestUser } from '@svc/core/testing';
import { countingServer, expiredCopyOf, type CountingServer } from '../../../testing/client.js';
import { enrolTotp, totpCode } from '../../../testing/mfa.js';
import {
  createClient,
  localTokenStorage,
  memoryStorage,
  sessionTokenStorage,
  SvcApiError,
  type SvcClient,
  type TokenStorage,
} from './index.js';

// docs/client.md against a real server: login, the MFA step, refresh on an expired access token, one
// refresh for many concurrent calls (SPEC "Refresh token and login"), logout and the signed-out signal.

/** The error a promise rejects with (fails the test when it resolves). */
async function refusal(promise: Promise<unknown>): Promise<SvcApiError> {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  if (!(error instanceof SvcApiError)) throw new Error(`expected an SvcApiError, got ${String(error)}`);
  return error;
}

describeEachDatabase('@svc/client on Node', (database) => {
  let app: TestApp;
  let counting: CountingServer;
  let alice: TestUser;

  beforeAll(async () => {
    app = await startTestApp({ database, settings: { mfa_enabled: true } });
    counting = await countingServer(app);
    alice = await app.createUser({ username: 'alice', email: 'alice@example.com' });
  });
  afterAll(async () => {
    await counting.close();
    await app.close();
  });

  /** A signed-in client on the counting listener, with its storage for the test to look into. */
  async function signedIn(user: TestUser): Promise<{ client: SvcClient; storage: TokenStorage }> {
    const storage = memoryStorage();
    const client = createClient({ baseUrl: counting.url, storage, WebSocket });
    expect(await client.login(user.username, user.password)).toEqual({ status: 'signed-in' });
    return { client, storage };
  }

  it('logs in, reads the user and calls typed routes with the bearer token', async () => {
    const { client } = await signedIn(alice);
    const me = await client.user();
    expect(me).toMatchObject({ id: alice.id, username: 'alice', permissions: [] });
    const { data, response } = await client.api.GET('/api/auth/user/settings');
    expect(response.status).toBe(200);
    expect(data?.data).toHaveProperty('appearance');
    const raw = await client.fetch('/api/mfa/status');
    expect(await raw.json()).toMatchObject({ data: { enabled: false } });
  });

  // SPEC-3 §7 rule 10: the bearer token never goes to another origin. The client's base is http://app.test; a
  // resolver (what DNS would do) sends app.test to the app and every other host or port to a second real server.
  it('refuses a path off the base URL before any request, so no request reaches another server', async () => {
    const seen: { url: string; authorization: string | undefined }[] = [];
    const other = createServer((req, res) => {
      seen.push({ url: req.url ?? '', authorization: req.headers.authorization });
      res.end('{}');
    });
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    const otherPort = (other.address() as AddressInfo).port;
    const appPort = new URL(app.url).port;
    const resolving: typeof fetch = async (input, init) => {
      const request = new Request(input, init);
      const url = new URL(request.url);
      const port = url.hostname === 'app.test' && url.port === '' ? appPort : String(otherPort);
      url.hostname = '127.0.0.1';
      url.port = port;
      return fetch(new Request(url, request));
    };
    try {
      const client = createClient({ baseUrl: 'http://app.test', fetch: resolving, storage: memoryStorage() });
      await client.login('alice', alice.password);
      expect((await client.fetch('/api/auth/user')).status).toBe(200);
      expect((await client.fetch('http://app.test/api/auth/user')).status).toBe(200);
      for (const path of [
        '.evil.test/x',
        'evil.test/x',
        '@evil.test/x',
        ':8080/x',
        '//evil.test/x',
        '/\\evil.test/x',
        'http://evil.test/x',
        'https://app.test/api/auth/user',
        'http://app.test.evil.test/x',
        'http://app.test:8080/x',
        'api/auth/user',
        '',
      ]) {
        const refused = await client.fetch(path).then(
          () => undefined,
          (error: unknown) => error,
        );
        expect(refused).toBeInstanceOf(TypeError);
        expect(String(refused)).toMatch(/client\.fetch/);
      }
      expect(seen).toEqual([]);
    } finally {
      await new Promise<void>((resolve) => other.close(() => resolve()));
    }
  });

  it('tells whether it is signed in synchronously (signedIn), and isSignedIn() still answers', async () => {
    const client = createClient({ baseUrl: app.url, storage: memoryStorage() });
    expect(client.signedIn).toBe(false);
    await client.login('alice', alice.password);
    expect(client.signedIn).toBe(true);
    expect(await client.isSignedIn()).toBe(true);
    await client.logout();
    expect(client.signedIn).toBe(false);
  });

  it('keeps signedIn in step with an asynchronous storage once ready', async () => {
    let pair: { accessToken: string; refreshToken: string | null } | null = null;
    const slow: TokenStorage = {
      get: async () => pair,
      set: async (next) => {
        pair = next;
      },
    };
    const first = createClient({ baseUrl: app.url, storage: slow });
    await first.ready;
    expect(first.signedIn).toBe(false);
    await first.login('alice', alice.password);
    expect(first.signedIn).toBe(true);
    // A second client on the same stored pair knows it once its first read is done.
    const second = createClient({ baseUrl: app.url, storage: slow });
    await second.ready;
    expect(second.signedIn).toBe(true);
  });

  it('refuses a wrong password with an SvcApiError carrying status, code, loc and params', async () => {
    const client = createClient({ baseUrl: app.url });
    const error = await refusal(client.login('alice', 'not-the-password'));
    expect(error).toMatchObject({ status: 401, code: 'auth.invalid_credentials', loc: ['body', 'username'] });
    expect(error.params).toEqual({});
    expect(await client.isSignedIn()).toBe(false);
  });

  it('completes an MFA login with verifyMfa after a wrong code', async () => {
    const bob = await app.createUser({ username: 'bob' });
    const { secret } = await enrolTotp(app, bob);
    const client = createClient({ baseUrl: app.url });
    const step = await client.login('bob', bob.password);
    if (step.status !== 'mfa-required') throw new Error('expected an MFA step');
    expect(await client.isSignedIn()).toBe(false);
    const wrong = await refusal(step.verifyMfa(totpCode(secret, 5)));
    expect(wrong).toMatchObject({ status: 401, code: 'mfa.code_invalid' });
    // The enrolment consumed the current step's code; the next step's is accepted (one step of drift).
    expect(await step.verifyMfa(totpCode(secret, 1))).toEqual({ status: 'signed-in' });
    expect(await client.user()).toMatchObject({ username: 'bob' });
  });

  it('refreshes once for 20 concurrent calls with an expired access token and retries each', async () => {
    const { client, storage } = await signedIn(alice);
    const before = (await storage.get())!;
    await storage.set({ ...before, accessToken: expiredCopyOf(before.accessToken) });
    const expired = await app.as((await storage.get())!.accessToken).get('/api/auth/user');
    expect(expired.status).toBe(401);
    expect(expired.body.detail[0].code).toBe('auth.token_invalid');

    const refreshesBefore = counting.refreshes();
    const responses = await Promise.all(Array.from({ length: 20 }, () => client.fetch('/api/auth/user')));
    expect(responses.map((response) => response.status)).toEqual(Array(20).fill(200));
    expect(counting.refreshes() - refreshesBefore).toBe(1);

    const after = (await storage.get())!;
    expect(after.refreshToken).not.toBe(before.refreshToken);
    expect((await app.as(after.accessToken).get('/api/auth/user')).status).toBe(200);
    // The spent token is refused (rotation); the new pair goes on working.
    const reuse = await app.post('/api/auth/refresh-token', { refresh_token: before.refreshToken });
    expect(reuse.body.detail[0].code).toBe('auth.refresh_token_revoked');
    expect((await client.user()).username).toBe('alice');
  });

  it('takes the pair another client got when its own refresh is refused inside the grace window', async () => {
    // Two clients on one shared storage (as tabs on localStorage) refresh the same pair at the same moment: a
    // fetch wrapper holds each refresh request until both are on their way, so the server sees a reuse.
    const storage: TokenStorage = { ...memoryStorage(), shared: true };
    const held: (() => void)[] = [];
    const together: typeof fetch = async (input, init) => {
      const request = new Request(input, init);
      if (new URL(request.url).pathname === '/api/auth/refresh-token') {
        await new Promise<void>((release) => {
          held.push(release);
          if (held.length === 2) for (const go of held) go();
        });
      }
      return fetch(request);
    };
    const first = createClient({ baseUrl: counting.url, storage, fetch: together });
    const second = createClient({ baseUrl: counting.url, storage, fetch: together });
    const reasons: string[] = [];
    for (const client of [first, second]) client.onSignedOut((reason) => reasons.push(reason));
    await first.login(alice.username, alice.password);
    const pair = (await storage.get())!;
    await storage.set({ ...pair, accessToken: expiredCopyOf(pair.accessToken) });

    const before = { refreshes: counting.refreshes(), rotations: counting.rotations() };
    const statuses = await Promise.all(
      [first, second].map(async (c) => (await c.fetch('/api/auth/user')).status),
    );
    expect(statuses).toEqual([200, 200]);
    expect(counting.refreshes() - before.refreshes).toBe(2);
    expect(counting.rotations() - before.rotations).toBe(1);
    expect(reasons).toEqual([]);
    expect((await second.user()).username).toBe('alice');
  });

  it('signs out with a signal when the refresh is refused, and returns the 401', async () => {
    const { client, storage } = await signedIn(alice);
    const reasons: string[] = [];
    client.onSignedOut((reason) => reasons.push(reason));
    const pair = (await storage.get())!;
    // Another device logs out of every login of alice (SPEC: logout without a body revokes all of them).
    const other = await app.loginAs(alice);
    expect((await other.post('/api/auth/logout')).status).toBe(204);
    await storage.set({ ...pair, accessToken: expiredCopyOf(pair.accessToken) });

    const response = await client.fetch('/api/auth/user');
    expect(response.status).toBe(401);
    expect(reasons).toEqual(['refresh_failed']);
    expect(await client.isSignedIn()).toBe(false);
    const error = await refusal(client.user());
    expect(error).toMatchObject({ status: 401, code: 'auth.not_authenticated' });
  });

  it('logs out on the server: the refresh token is revoked and the pair forgotten', async () => {
    const { client, storage } = await signedIn(alice);
    const reasons: string[] = [];
    client.onSignedOut((reason) => reasons.push(reason));
    const { refreshToken } = (await storage.get())!;
    await client.logout();
    expect(reasons).toEqual(['logout']);
    expect(await storage.get()).toBeNull();
    const reuse = await app.post('/api/auth/refresh-token', { refresh_token: refreshToken });
    expect(reuse.status).toBe(401);
    expect(reuse.body.detail[0].code).toBe('auth.refresh_token_revoked');
  });

  it('logs out with an expired access token: refreshes first and ends only this login', async () => {
    const { client, storage } = await signedIn(alice);
    const elsewhere = await app.loginAs(alice);
    const pair = (await storage.get())!;
    await storage.set({ ...pair, accessToken: expiredCopyOf(pair.accessToken) });
    await client.logout();
    expect(await storage.get()).toBeNull();
    // The body carried the refreshed pair's token: this login ended, the other device's did not.
    expect(
      (await app.post('/api/auth/refresh-token', { refresh_token: elsewhere.refreshToken })).status,
    ).toBe(200);
  });

  it('signs out when a request says the login is over (password changed elsewhere)', async () => {
    const carol = await app.createUser({ username: 'carol' });
    const { client } = await signedIn(carol);
    const reasons: string[] = [];
    client.onSignedOut((reason) => reasons.push(reason));
    // SPEC "Refresh token and login": a token issued in the same second as the change stays valid.
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const other = await app.loginAs(carol);
    const changed = await other.post('/api/auth/user/password', {
      currentPassword: carol.password,
      newPassword: 'another-long-password',
    });
    expect(changed.status).toBe(204);
    const response = await client.fetch('/api/auth/user');
    expect(response.status).toBe(401);
    expect(reasons).toEqual(['revoked']);
    expect(await client.isSignedIn()).toBe(false);
  });

  it('hands validation errors over with their params', async () => {
    const { client } = await signedIn(alice);
    const response = await client.fetch('/api/auth/user/password', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ currentPassword: alice.password, newPassword: 'short' }),
    });
    expect(response.status).toBe(422);
    const { error } = await client.api.POST('/api/auth/user/password', {
      body: { currentPassword: alice.password, newPassword: 'short' },
    });
    expect(error?.detail[0]).toMatchObject({ code: 'auth.password_too_short', params: { min_length: 12 } });
  });
});

it('keeps its refresh token when the server does not rotate (an answer without refresh_token)', async () => {
  // SPEC "Refresh token and login": with refresh_token_rotation off the refresh answers an access token only.
  const storage = memoryStorage();
  await storage.set({ accessToken: 'stale', refreshToken: 'kept' });
  const fetch = async (input: Request | string | URL, init?: RequestInit) => {
    const request = new Request(input, init);
    if (request.url.endsWith('/api/auth/refresh-token')) {
      expect(await request.json()).toEqual({ refresh_token: 'kept' });
      return Response.json({ access_token: 'fresh', token_type: 'bearer' });
    }
    if (request.headers.get('authorization') === 'Bearer fresh') return Response.json({ data: {} });
    const item = {
      loc: ['header', 'Authorization'],
      msg: 'expired',
      type: 'auth',
      code: 'auth.token_invalid',
    };
    return Response.json({ detail: [item] }, { status: 401 });
  };
  const client = createClient({ baseUrl: 'http://svc.test', storage, fetch, crossTab: false });
  expect((await client.fetch('/api/auth/user')).status).toBe(200);
  expect(await storage.get()).toEqual({ accessToken: 'fresh', refreshToken: 'kept' });
});

describe('@svc/client Web Storage token storages (docs/client.md "Storage")', () => {
  /** A Web Storage of a map (Node has none). */
  function mapStorage() {
    const map = new Map<string, string>();
    return {
      map,
      getItem: (key: string) => map.get(key) ?? null,
      setItem: (key: string, value: string) => void map.set(key, value),
      removeItem: (key: string) => void map.delete(key),
    };
  }

  it('keeps the pair as JSON under its key; shared for localStorage, this tab only for sessionStorage', () => {
    for (const [make, shared] of [
      [localTokenStorage, true],
      [sessionTokenStorage, false],
    ] as const) {
      const web = mapStorage();
      const storage = make('app.auth', web);
      expect(storage.shared).toBe(shared);
      storage.set({ accessToken: 'a', refreshToken: 'r' });
      expect(JSON.parse(web.map.get('app.auth')!)).toEqual({ accessToken: 'a', refreshToken: 'r' });
      expect(storage.get()).toEqual({ accessToken: 'a', refreshToken: 'r' });
      web.map.set('app.auth', 'not json');
      expect(storage.get()).toBeNull();
      storage.set(null);
      expect(web.map.has('app.auth')).toBe(false);
    }
    // Node has no sessionStorage: the error says what to use instead.
    expect(() => sessionTokenStorage()).toThrow(/use memoryStorage/);
  });
});
