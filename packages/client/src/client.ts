import createFetchClient, { type Client as FetchClient } from 'openapi-fetch';
import { apiErrorOf, SvcApiError } from './errors.js';
import { subscribeEvents, type EventsOptions, type EventsSubscription } from './events.js';
import { createCredential, getAssertion } from './passkey.js';
import { browserStorage, globalWebSocket, inBrowser, type WebSocketConstructor } from './platform.js';
import { createRefresher, type SignedOutReason } from './refresh.js';
import type { paths } from './schema.js';
import { createSocialLogin, type OAuthProvider, type SignInFragment, type SvcIdentity } from './social.js';
import { expiresAt, localTokenStorage, memoryStorage, type TokenPair, type TokenStorage } from './storage.js';

/** The current user as `GET /auth/user` returns it (SPEC "User"), with `permissions`. */
export type SvcUser = paths['/api/auth/user']['get']['responses'][200]['content']['application/json']['data'];

export interface ClientOptions {
  /** The server's origin (and any path it is mounted under), without `/api`: `https://app.example.com`. */
  baseUrl: string;
  /**
   * Where the token pair lives. @default `localTokenStorage()` in a browser (shared by the origin's tabs),
   * `memoryStorage()` elsewhere
   */
  storage?: TokenStorage;
  /** The fetch every request goes through. @default globalThis.fetch */
  fetch?: typeof fetch;
  /** The WebSocket of the event stream; on Node 20 pass `WebSocket` from the `ws` package. @default globalThis.WebSocket */
  WebSocket?: WebSocketConstructor;
  /**
   * Coordinate refreshes with the other tabs of the origin (Web Locks and a BroadcastChannel).
   * @default true in a browser, false elsewhere (Node: one refresh at a time per client)
   */
  crossTab?: boolean;
  /** How long a refused reuse waits for the pair another tab got: the server's `refresh_reuse_grace_seconds`. @default 10000 */
  refreshGraceMs?: number;
}

/** A registered passkey as `POST /auth/passkeys/register` returns it (no key material). */
export type SvcPasskey =
  paths['/api/auth/passkeys/register']['post']['responses'][201]['content']['application/json']['data'];

/** The answer of `login`: signed in, or a second step to complete (SPEC "Authentication" 5). */
export type LoginResult = { status: 'signed-in' } | MfaStep;

/** A pending login that needs a second factor: a code (TOTP, email, SMS, backup) or, where enrolled, a passkey. */
export interface MfaStep {
  status: 'mfa-required';
  /** Completes the login with a TOTP, email or SMS code or a backup code (`POST /mfa/verify`). */
  verifyMfa(code: string): Promise<{ status: 'signed-in' }>;
  /** Completes it with a passkey (`POST /mfa/webauthn/options`, then `POST /mfa/verify`), SPEC-2 section 6. */
  verifyWithPasskey(): Promise<{ status: 'signed-in' }>;
}

/** A client of one svc server. */
export interface SvcClient {
  /** Password login (`POST /auth/token`); throws `SvcApiError` `auth.invalid_credentials` and the like. */
  login(username: string, password: string): Promise<LoginResult>;
  /** Passkey login (SPEC-2 section 6): options, the browser's prompt, then the token pair. */
  loginWithPasskey(options?: { username?: string; signal?: AbortSignal }): Promise<{ status: 'signed-in' }>;
  /**
   * Registers a passkey for the signed-in user (SPEC-2 section 6): creation options, the browser's prompt,
   * then `POST /auth/passkeys/register`. Resolves with the stored passkey `{id, name, createdAt, ...}`.
   */
  registerPasskey(options?: { name?: string; signal?: AbortSignal }): Promise<SvcPasskey>;
  /** Ends this login on the server (`POST /auth/logout` with its refresh token) and forgets it in every tab. */
  logout(): Promise<void>;
  /** `GET /auth/user`: the signed-in user with permissions. */
  user(): Promise<SvcUser>;
  /**
   * A request to `baseUrl + path` with the bearer token; on a 401 for an expired access token, one refresh
   * (shared with every concurrent caller and tab) and one retry. Returns the Response as is.
   * `path` is an absolute path (`/api/...`) or a URL under `baseUrl`; anything else (`api/x`, `//host/x`,
   * `.evil.example/x`, another origin) rejects with a `TypeError` before any request, so the token never
   * leaves the server's origin (SPEC-3 §7 rule 10).
   */
  fetch(path: string, init?: RequestInit): Promise<Response>;
  /** Typed calls of every core route (openapi-fetch over the server's OpenAPI document), through `fetch`. */
  readonly api: FetchClient<paths>;
  /** The event stream (SPEC "Events"): ticket, connect, reconnect; see {@link EventsOptions}. */
  events(options: EventsOptions): EventsSubscription;
  /**
   * Whether a token pair is stored (it may still be refused by the server), synchronously: read from a
   * synchronous storage (memory, `localStorage`) each time; with an asynchronous one, what the client last
   * read or wrote there (false until {@link SvcClient.ready}).
   * @example if (!client.signedIn) showLoginForm();
   */
  readonly signedIn: boolean;
  /** Settles once the stored pair was read at creation: then `signedIn` holds for an asynchronous storage too. */
  readonly ready: Promise<void>;
  /**
   * Whether a token pair is stored, as a Promise (`if (client.isSignedIn())` is always true).
   * @deprecated use the synchronous `signedIn` (after `await client.ready` with an asynchronous storage)
   */
  isSignedIn(): Promise<boolean>;
  /** Called when the login ends: logout here or in another tab, a refused refresh, a revoked login. */
  onSignedOut(listener: (reason: SignedOutReason) => void): () => void;
  /** Stops listening to the other tabs. */
  close(): void;
  // SPEC-3 section 1: social login (social.ts)
  /** The enabled sign-in providers (`GET /auth/oauth/providers`), for the buttons. */
  oauthProviders(): Promise<OAuthProvider[]>;
  /** Sends the browser to the provider; it comes back to `redirectTo` (default this page). Returns the URL. */
  signInWith(provider: string, options?: { redirectTo?: string }): string;
  /**
   * Completes what the provider's callback came back with (the fragment of `url`, default the address bar):
   * signed in, the MFA step, `{status: 'linked', provider}`, or null when there is nothing; `#svc_error` throws
   * `SvcApiError` with its code.
   */
  completeSignIn(url?: string): Promise<LoginResult | NonNullable<SignInFragment> | null>;
  /** Links a provider to the signed-in user (a recent login is needed), then goes to the provider. */
  link(provider: string, options?: { redirectTo?: string }): Promise<string>;
  /** The signed-in user's linked identities (`GET /auth/identities`). */
  identities(): Promise<SvcIdentity[]>;
}

/** 401 codes that say the login itself is over: refreshing cannot help (SPEC "Authentication" 3, SPEC-2 4). */
const LOGIN_OVER = new Set(['auth.token_revoked', 'auth.session_revoked', 'user.not_found']);

/** Token routes answer bare unless `wrap_auth_token_response` (SPEC "Response envelope"); other JSON is wrapped. */
function unwrap<T>(body: unknown): T {
  if (body && typeof body === 'object' && 'success' in body && 'data' in body)
    return (body as { data: T }).data;
  return body as T;
}

/**
 * Creates a client of the svc server at `baseUrl`.
 * @example
 * const client = createClient({ baseUrl: 'https://app.example.com' });
 * const step = await client.login('alice', password);
 * if (step.status === 'mfa-required') await step.verifyMfa(prompt('Code?')!);
 * const me = await client.user();
 */
export function createClient(options: ClientOptions): SvcClient {
  const base = options.baseUrl.replace(/\/+$/, '');
  const baseOrigin = new URL(base).origin;
  // Late-bound: a page or test may replace globalThis.fetch after the client is made.
  const send: typeof fetch = options.fetch ?? ((...args) => globalThis.fetch(...args));
  const { storage, signedInNow, ready } = trackSignedIn(
    options.storage ?? (inBrowser() && browserStorage() ? localTokenStorage() : memoryStorage()),
  );
  const crossTab = options.crossTab ?? inBrowser();
  const listeners = new Set<(reason: SignedOutReason) => void>();

  async function post(path: string, body: unknown, init: { form?: boolean; token?: string } = {}) {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (init.token) headers.authorization = `Bearer ${init.token}`;
    let payload: string | undefined;
    if (init.form) {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      payload = new URLSearchParams(body as Record<string, string>).toString();
    } else if (body !== undefined) {
      headers['content-type'] = 'application/json';
      payload = JSON.stringify(body);
    }
    const response = await send(`${base}${path}`, { method: 'POST', headers, body: payload });
    if (!response.ok) throw await apiErrorOf(response);
    return response.status === 204 ? undefined : unwrap<unknown>(await response.json());
  }

  function pairOf(body: unknown, spentRefreshToken: string | null = null): TokenPair {
    const tokens = body as { access_token?: unknown; refresh_token?: unknown };
    if (typeof tokens?.access_token !== 'string') throw new SvcApiError(200, []);
    // SPEC "Refresh token and login": without rotation the response has no refresh_token; the old one stays.
    const refreshToken = typeof tokens.refresh_token === 'string' ? tokens.refresh_token : spentRefreshToken;
    return { accessToken: tokens.access_token, refreshToken };
  }

  const refresher = createRefresher({
    storage,
    crossTabName: crossTab ? `svc-auth:${base}` : undefined,
    graceMs: options.refreshGraceMs ?? 10_000,
    async requestRefresh(refreshToken) {
      return pairOf(await post('/api/auth/refresh-token', { refresh_token: refreshToken }), refreshToken);
    },
    onSignedOut(reason) {
      for (const listener of listeners) listener(reason);
    },
  });

  async function signedIn(body: unknown): Promise<{ status: 'signed-in' }> {
    await refresher.store(pairOf(body));
    return { status: 'signed-in' };
  }

  function mfaStep(mfaToken: string): MfaStep {
    return {
      status: 'mfa-required',
      async verifyMfa(code) {
        return signedIn(await post('/api/mfa/verify', { mfa_token: mfaToken, code }));
      },
      async verifyWithPasskey() {
        const options = await post('/api/mfa/webauthn/options', { mfa_token: mfaToken });
        const webauthn = await getAssertion(unwrapOptions(options));
        return signedIn(await post('/api/mfa/verify', { mfa_token: mfaToken, webauthn }));
      },
    };
  }

  /** The request with the stored access token; the same request again after one refresh when it expired. */
  async function authedFetch(input: Request): Promise<Response> {
    // SPEC-3 §7 rule 10: the bearer token goes to the server's origin only, whoever built the request.
    if (new URL(input.url).origin !== baseOrigin)
      throw new TypeError(`client.fetch: ${input.url} is not on ${baseOrigin}; no request was sent`);
    const retry = input.clone();
    const pair = await storage.get();
    if (pair) input.headers.set('authorization', `Bearer ${pair.accessToken}`);
    const response = await send(input);
    if (response.status !== 401 || !pair) return response;
    const error = await apiErrorOf(response.clone());
    if (LOGIN_OVER.has(error.code)) {
      // The server refuses this login for good; only act if no other tab or caller replaced it meanwhile.
      const now = await storage.get();
      if (now?.accessToken === pair.accessToken) await refresher.signOut('revoked');
      return response;
    }
    // SPEC "Authentication" 3: an expired access token is 401 auth.token_invalid. A client clock may be off,
    // so the server's answer decides, not only the local `exp`.
    const expired =
      error.code === 'auth.token_invalid' || (expiresAt(pair.accessToken) ?? Infinity) * 1000 <= Date.now();
    if (!expired) return response;
    const fresh = await refresher.refresh(pair.accessToken);
    if (!fresh) return response;
    retry.headers.set('authorization', `Bearer ${fresh.accessToken}`);
    return send(retry);
  }

  const clientFetch = async (path: string, init?: RequestInit) =>
    authedFetch(new Request(urlOnBase(base, path), init));

  const api = createFetchClient<paths>({ baseUrl: base, fetch: authedFetch });

  /** A bearer request (GET, or POST with its JSON body if any) whose JSON answer is the result; a refusal throws. */
  async function authedJson<T>(path: string, post?: { body?: unknown }): Promise<T> {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (post?.body !== undefined) headers['content-type'] = 'application/json';
    const response = await clientFetch(path, {
      method: post ? 'POST' : 'GET',
      headers,
      body: post?.body === undefined ? undefined : JSON.stringify(post.body),
    });
    if (!response.ok) throw await apiErrorOf(response);
    return unwrap<T>(await response.json());
  }

  // SPEC-3 section 1: social login (social.ts)
  const social = createSocialLogin({
    base,
    post: (path, body) => post(path, body),
    async get(path) {
      const response = await send(`${base}${path}`, { headers: { accept: 'application/json' } });
      if (!response.ok) throw await apiErrorOf(response);
      return unwrap<unknown>(await response.json());
    },
    authedJson,
  });

  return {
    async login(username, password) {
      const body = (await post('/api/auth/token', { username, password }, { form: true })) as {
        mfa_required?: boolean;
        mfa_token?: string;
      };
      if (body?.mfa_required && typeof body.mfa_token === 'string') return mfaStep(body.mfa_token);
      return signedIn(body);
    },
    async loginWithPasskey(request = {}) {
      const { challengeId, options } = (await post(
        '/api/auth/passkey/options',
        request.username ? { username: request.username } : {},
      )) as { challengeId: string; options: unknown };
      const response = await getAssertion(unwrapOptions(options), request.signal);
      return signedIn(await post('/api/auth/passkey/token', { challengeId, response }));
    },
    async registerPasskey(request = {}) {
      const creation = await authedJson('/api/auth/passkeys/register/options', { body: {} });
      const response = await createCredential(unwrapOptions(creation) as never, request.signal);
      return authedJson<SvcPasskey>('/api/auth/passkeys/register', {
        body: { response, ...(request.name ? { name: request.name } : {}) },
      });
    },
    async logout() {
      try {
        // SPEC "Refresh token and login": logout with the caller's refresh token ends that login only; any other
        // body ends all of the user's logins. So the body carries the pair's current refresh token: after a
        // refresh on the way (an expired access token), the new one, not the one just spent.
        for (let attempt = 0; attempt < 2; attempt++) {
          const pair = await storage.get();
          if (!pair) return;
          const response = await send(`${base}/api/auth/logout`, {
            method: 'POST',
            headers: { authorization: `Bearer ${pair.accessToken}`, 'content-type': 'application/json' },
            body: JSON.stringify(pair.refreshToken ? { refresh_token: pair.refreshToken } : {}),
          });
          if (response.ok) return;
          const error = await apiErrorOf(response);
          // A login already over is signed out all the same; anything else is the caller's to see.
          if (response.status !== 401) throw error;
          if (
            attempt > 0 ||
            error.code !== 'auth.token_invalid' ||
            !(await refresher.refresh(pair.accessToken))
          )
            return;
        }
      } finally {
        await refresher.signOut('logout');
      }
    },
    user: () => authedJson<SvcUser>('/api/auth/user'),
    fetch: clientFetch,
    api,
    events(eventOptions) {
      const WebSocket = options.WebSocket ?? globalWebSocket();
      if (!WebSocket)
        throw new Error('no WebSocket here: pass createClient({ WebSocket }) (the ws package on Node 20)');
      return subscribeEvents(
        {
          WebSocket,
          socketUrl: (ticket) =>
            `${base.replace(/^http/, 'ws')}/api/core/events/ws?ticket=${encodeURIComponent(ticket)}`,
          async ticket() {
            return (await authedJson<{ ticket: string }>('/api/core/events/ticket', {})).ticket;
          },
        },
        eventOptions,
      );
    },
    get signedIn() {
      return signedInNow();
    },
    ready,
    async isSignedIn() {
      return (await storage.get()) !== null;
    },
    onSignedOut(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    close() {
      refresher.close();
    },
    // SPEC-3 section 1: social login (social.ts)
    oauthProviders: () => social.oauthProviders(),
    signInWith: (provider, signInOptions) => social.signInWith(provider, signInOptions),
    async completeSignIn(url) {
      return (await social.readFragment(url, async (code) => {
        const body = (await post('/api/auth/oauth/exchange', { code })) as {
          mfa_required?: boolean;
          mfa_token?: string;
        };
        if (body?.mfa_required && typeof body.mfa_token === 'string') return mfaStep(body.mfa_token);
        return signedIn(body);
      })) as LoginResult | NonNullable<SignInFragment> | null;
    },
    link: (provider, linkOptions) => social.link(provider, linkOptions),
    identities: () => social.identities(),
  };
}

/** Options answers are `{challengeId, options}` or the options themselves (SPEC-2 section 6). */
function unwrapOptions(value: unknown): { challenge: string } {
  const inner = (value as { options?: unknown })?.options ?? value;
  return ((inner as { publicKey?: unknown })?.publicKey ?? inner) as { challenge: string };
}

/**
 * The URL of `client.fetch(path)` (SPEC-3 §7 rule 10): `path` is an absolute path, appended to the base (a
 * second slash or a backslash would make it a host: `//evil.example/x`), or a URL under the base. Anything else,
 * such as `.evil.example/x` (which would extend the base's host name), throws before a request exists.
 */
function urlOnBase(base: string, path: string): string {
  const refuse = (): never => {
    throw new TypeError(
      `client.fetch: ${JSON.stringify(path)} is not an absolute path on ${base} (start it with one "/"); no request was sent`,
    );
  };
  if (path.startsWith(`${base}/`)) return path;
  if (!/^\/(?![/\\])/.test(path)) refuse();
  const url = `${base}${path}`;
  if (new URL(url).origin !== new URL(base).origin) refuse();
  return url;
}

/**
 * The storage with the client's knowledge of whether a pair is stored: read fresh from a synchronous storage,
 * and remembered from every read and write of an asynchronous one (which the client does on each request).
 */
function trackSignedIn(inner: TokenStorage): {
  storage: TokenStorage;
  signedInNow: () => boolean;
  ready: Promise<void>;
} {
  let known = false;
  let written = false;
  const note = (pair: TokenPair | null) => {
    known = pair !== null;
  };
  const storage: TokenStorage = {
    shared: inner.shared,
    get() {
      const pair = inner.get();
      if (pair instanceof Promise) return pair.then((p) => (note(p), p));
      note(pair);
      return pair;
    },
    set(pair) {
      written = true;
      note(pair);
      return inner.set(pair);
    },
  };
  const first = inner.get();
  const ready =
    first instanceof Promise
      ? first.then(
          (pair) => {
            if (!written) note(pair); // a login meanwhile decided already
          },
          () => undefined,
        )
      : Promise.resolve(note(first));
  return {
    storage,
    // A synchronous storage is read each time: another tab's login or logout in localStorage counts at once.
    signedInNow: () => {
      if (first instanceof Promise) return known;
      return inner.get() !== null;
    },
    ready,
  };
}
