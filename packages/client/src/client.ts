import createFetchClient, { type Client as FetchClient } from 'openapi-fetch';
import { cookieSessionStorage, csrfVersion, readCsrf } from './cookie.js';
import { apiErrorOf, SvcApiError } from './errors.js';
import { subscribeEvents, type EventsOptions, type EventsSubscription } from './events.js';
import { createCredential, getAssertion } from './passkey.js';
import { browserStorage, globalWebSocket, inBrowser, type WebSocketConstructor } from './platform.js';
import { createRefresher, type SignedOutReason } from './refresh.js';
import type { paths } from './schema.js';
import { createSocialLogin, type OAuthProvider, type SignInFragment, type SvcIdentity } from './social.js';
import { expiresAt, localTokenStorage, memoryStorage, type TokenPair, type TokenStorage } from './storage.js';

/**
 * The current user as `GET /auth/user` returns it (SPEC "User"), with `permissions`; while a superuser
 * impersonates them, `impersonatedBy` names the superuser (SPEC-3 section 4).
 */
export type SvcUser =
  paths['/api/auth/user']['get']['responses'][200]['content']['application/json']['data'] & {
    impersonatedBy?: { id: string; username: string } | null;
  };

export interface ClientOptions {
  /** The server's origin (and any path it is mounted under), without `/api`: `https://app.example.com`. */
  baseUrl: string;
  /**
   * Where the session's tokens live (docs/client.md "Cookie mode", SPEC-3 section 5):
   * - `'bearer'`: the client keeps the token pair in `storage` and sends `Authorization: Bearer`;
   * - `'cookie'`: the server keeps them in HttpOnly cookies the page cannot read (`POST /auth/session`,
   *   `POST /auth/session/refresh`, `DELETE /auth/session`); the client sends `X-CSRF-Token` on unsafe methods
   *   and stores nothing. Needs a browser, and the page on the API's origin or under its `cookie_domain`.
   * @default 'bearer'
   */
  session?: 'bearer' | 'cookie';
  /**
   * Where the token pair lives (bearer mode; the cookie mode refuses a storage).
   * @default `localTokenStorage()` in a browser (shared by the origin's tabs), `memoryStorage()` elsewhere
   */
  storage?: TokenStorage;
  /**
   * The server's API base path: `/api` plus its `api_v1_prefix` (SPEC "Settings"), e.g. `'/api/v1'`. The
   * client's paths, and those given to `fetch`, are written under `/api` and sent under this base.
   * @default '/api'
   */
  apiBase?: string;
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

/**
 * A completed login. In cookie mode the server answers with the user (SPEC-3 section 5), given here as `user`;
 * the bearer mode's token routes do not, so there it is absent.
 */
export interface SignedIn {
  status: 'signed-in';
  user?: SvcUser;
}

/** The answer of `login`: signed in, or a second step to complete (SPEC "Authentication" 5). */
export type LoginResult = SignedIn | MfaStep;

/** A pending login that needs a second factor: a code (TOTP, email, SMS, backup) or, where enrolled, a passkey. */
export interface MfaStep {
  status: 'mfa-required';
  /** Completes the login with a TOTP, email or SMS code or a backup code (`POST /mfa/verify`). */
  verifyMfa(code: string): Promise<SignedIn>;
  /** Completes it with a passkey (`POST /mfa/webauthn/options`, then `POST /mfa/verify`), SPEC-2 section 6. */
  verifyWithPasskey(): Promise<SignedIn>;
}

/** A client of one svc server. */
export interface SvcClient {
  /** Password login (`POST /auth/token`); throws `SvcApiError` `auth.invalid_credentials` and the like. */
  login(username: string, password: string): Promise<LoginResult>;
  /** Passkey login (SPEC-2 section 6): options, the browser's prompt, then the token pair. */
  loginWithPasskey(options?: { username?: string; signal?: AbortSignal }): Promise<SignedIn>;
  /**
   * Registers a passkey for the signed-in user (SPEC-2 section 6): creation options, the browser's prompt,
   * then `POST /auth/passkeys/register`. Resolves with the stored passkey `{id, name, createdAt, ...}`.
   */
  registerPasskey(options?: { name?: string; signal?: AbortSignal }): Promise<SvcPasskey>;
  /**
   * Ends this login on the server (`POST /auth/logout` with its refresh token; in cookie mode
   * `DELETE /auth/session`, which clears the cookies) and forgets it in every tab.
   */
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
  fetch(path: string, init?: SvcFetchInit): Promise<Response>;
  /** SPEC-3 §2: the caller's organizations with their role (`GET /organizations`). */
  organizations(): Promise<SvcOrganizationMembership[]>;
  /** Creates an organization; the caller becomes its owner. */
  createOrganization(input: { name: string; slug: string }): Promise<SvcOrganization>;
  /** The routes of one organization: details, members, role changes, invitations. */
  organization(id: string): SvcOrganizationHandle;
  /** Accepts an invitation (`POST /organizations/invitations/accept`) with the token of its link. */
  acceptOrganizationInvitation(token: string): Promise<{ organization: SvcOrganization; role: string }>;
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
  /** Called when a login completes, in this client or another tab of the origin (not on a refresh). */
  onSignedIn(listener: () => void): () => void;
  /** `'bearer'` or `'cookie'`: how this client holds the session ({@link ClientOptions.session}). */
  readonly session: 'bearer' | 'cookie';
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

/**
 * Cookie mode: 401 codes a refresh can cure. The browser drops `svc_session` when the access token expires
 * (the cookie expires with it), so the request arrives without a credential (`auth.not_authenticated`); a
 * client clock ahead of the server's may still send an expired one (`auth.token_invalid`).
 */
const COOKIE_EXPIRED = new Set(['auth.not_authenticated', 'auth.token_invalid']);

/** Methods the server checks the CSRF header on (SPEC-3 section 5). */
const UNSAFE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** Token routes answer bare unless `wrap_auth_token_response` (SPEC "Response envelope"); other JSON is wrapped. */
function unwrap<T>(body: unknown): T {
  if (body && typeof body === 'object' && 'success' in body && 'data' in body)
    return (body as { data: T }).data;
  return body as T;
}

/**
 * `input` with its URL moved by `onApi` (ClientOptions `apiBase`). A request is made anew with its body read,
 * so that the same request works in browsers and Node (a streamed body would need `duplex`).
 */
async function underApiBase(
  input: Request | string | URL,
  onApi: (url: string) => string,
): Promise<Request | string> {
  if (!(input instanceof Request)) return onApi(String(input));
  const url = onApi(input.url);
  if (url === input.url) return input;
  const body = input.method === 'GET' || input.method === 'HEAD' ? undefined : await input.arrayBuffer();
  return new Request(url, {
    method: input.method,
    headers: input.headers,
    body,
    credentials: input.credentials,
    redirect: input.redirect,
    signal: input.signal,
  });
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
  const cookieMode = options.session === 'cookie';
  if (cookieMode && options.storage)
    throw new TypeError("createClient: session 'cookie' keeps no tokens in a storage; leave `storage` out");
  const apiRoot = `/${(options.apiBase ?? '/api').replace(/^\/+|\/+$/g, '')}`;
  /** A URL under `${base}/api/` moved under the API base (`options.apiBase`); any other as it is. */
  const onApi = (url: string): string =>
    apiRoot === '/api' || !url.startsWith(`${base}/api/`)
      ? url
      : `${base}${apiRoot}/${url.slice(base.length + '/api/'.length)}`;
  // Late-bound: a page or test may replace globalThis.fetch after the client is made. In cookie mode every
  // request carries the browser's cookies, also to an API on another origin under the same `cookie_domain`.
  const rawFetch: typeof fetch = options.fetch ?? ((...args) => globalThis.fetch(...args));
  const fetchOf: typeof fetch =
    apiRoot === '/api' ? rawFetch : async (input, init) => rawFetch(await underApiBase(input, onApi), init);
  const send: typeof fetch = cookieMode
    ? (input, init) => fetchOf(input, { ...init, credentials: 'include' })
    : fetchOf;
  const { storage, signedInNow, ready } = trackSignedIn(
    cookieMode
      ? cookieSessionStorage()
      : (options.storage ?? (inBrowser() && browserStorage() ? localTokenStorage() : memoryStorage())),
  );
  const crossTab = options.crossTab ?? inBrowser();
  const listeners = new Set<(reason: SignedOutReason) => void>();
  const signInListeners = new Set<() => void>();

  async function post(path: string, body: unknown, init: { form?: boolean; token?: string } = {}) {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (init.token) headers.authorization = `Bearer ${init.token}`;
    // SPEC-3 section 5: a token-issuing route answers like POST /auth/session, setting the cookies, when asked.
    if (cookieMode && TOKEN_ISSUING.has(path)) headers['x-svc-session'] = 'cookie';
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
      if (cookieMode) {
        // The refresh cookie goes by itself (its Path is /api/auth/session); the CSRF header must match.
        const response = await send(`${base}/api/auth/session/refresh`, {
          method: 'POST',
          headers: { accept: 'application/json', 'x-csrf-token': readCsrf() ?? '' },
        });
        if (!response.ok) throw await apiErrorOf(response);
        return cookiePair();
      }
      return pairOf(await post('/api/auth/refresh-token', { refresh_token: refreshToken }), refreshToken);
    },
    onSignedOut(reason) {
      for (const listener of listeners) listener(reason);
    },
    onSignedIn() {
      for (const listener of signInListeners) listener();
    },
  });

  /** Cookie mode: the session's version after the server set the cookies; an error when the page cannot see them. */
  function cookiePair(): TokenPair {
    const pair = storage.get() as TokenPair | null;
    if (!pair)
      throw new Error(
        'cookie session: the server answered but no svc_csrf cookie is readable here; serve the page on the ' +
          "API's origin or under its cookie_domain (docs/browser-sessions.md)",
      );
    return pair;
  }

  async function signedIn(body: unknown): Promise<SignedIn> {
    if (cookieMode) {
      await refresher.store(cookiePair(), true);
      const user = (body as { user?: SvcUser } | undefined)?.user;
      return user ? { status: 'signed-in', user } : { status: 'signed-in' };
    }
    await refresher.store(pairOf(body), true);
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

  /**
   * Cookie mode: the CSRF header on an unsafe method, read from the cookie as the request leaves (another tab
   * may have refreshed meanwhile); the session's version it belongs to, or null when signed out.
   */
  function withCsrf(request: Request): string | null {
    const csrf = readCsrf();
    if (csrf && UNSAFE_METHODS.has(request.method.toUpperCase())) request.headers.set('x-csrf-token', csrf);
    return csrf && csrfVersion(csrf);
  }

  /** Cookie mode's {@link authedFetch}: the cookies go by themselves; a 401 a refresh can cure gets one. */
  async function cookieFetch(input: Request): Promise<Response> {
    const retry = input.clone();
    const sent = withCsrf(input);
    const response = await send(input);
    if (!sent) return response;
    if (response.status === 403) {
      // The CSRF cookie changed between reading it and the server's check (a refresh in another tab): the
      // header no longer matches; once more with the current one.
      const error = await apiErrorOf(response.clone());
      const now = readCsrf();
      if ((error.code as string) !== 'auth.csrf_failed' || !now || csrfVersion(now) === sent) return response;
      withCsrf(retry);
      return send(retry);
    }
    if (response.status !== 401) return response;
    const error = await apiErrorOf(response.clone());
    if (LOGIN_OVER.has(error.code)) {
      if ((storage.get() as TokenPair | null)?.accessToken === sent) await refresher.signOut('revoked');
      return response;
    }
    if (!COOKIE_EXPIRED.has(error.code)) return response;
    const fresh = await refresher.refresh(sent);
    if (!fresh) return response;
    withCsrf(retry);
    return send(retry);
  }

  /** The request with the stored access token; the same request again after one refresh when it expired. */
  async function authedFetch(input: Request): Promise<Response> {
    // SPEC-3 §7 rule 10: the bearer token goes to the server's origin only, whoever built the request.
    if (new URL(input.url).origin !== baseOrigin)
      throw new TypeError(`client.fetch: ${input.url} is not on ${baseOrigin}; no request was sent`);
    if (cookieMode) return cookieFetch(input);
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

  const clientFetch = async (path: string, init?: SvcFetchInit) => {
    // SPEC-3 §2: each request names its organization, so tabs never share an "active" one.
    if (init?.organization === undefined) return authedFetch(new Request(urlOnBase(base, path), init));
    const { organization, ...rest } = init;
    const headers = new Headers(rest.headers);
    headers.set('x-organization-id', organization);
    return authedFetch(new Request(urlOnBase(base, path), { ...rest, headers }));
  };

  /** A bearer request with a JSON body (if any) whose JSON answer is the result (none for 204); a refusal throws. */
  async function authedCall<T>(method: string, path: string, body?: unknown): Promise<T> {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (body !== undefined) headers['content-type'] = 'application/json';
    const response = await clientFetch(path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (!response.ok) throw await apiErrorOf(response);
    if (response.status === 204) return undefined as T;
    return unwrap<T>(await response.json());
  }

  function organizationHandle(id: string): SvcOrganizationHandle {
    const at = `/api/organizations/${encodeURIComponent(id)}`;
    return {
      id,
      get: () => authedCall('GET', at),
      update: (changes) => authedCall('PATCH', at, changes),
      delete: () => authedCall('DELETE', at),
      members(query = {}) {
        const search = new URLSearchParams();
        for (const [key, value] of Object.entries(query))
          if (value !== undefined) search.set(key, String(value));
        const q = search.toString();
        return authedCall('GET', `${at}/members${q ? `?${q}` : ''}`);
      },
      setRole: (userId, role) => authedCall('PATCH', `${at}/members/${encodeURIComponent(userId)}`, { role }),
      removeMember: (userId) => authedCall('DELETE', `${at}/members/${encodeURIComponent(userId)}`),
      invite: (email, role) => authedCall('POST', `${at}/invitations`, { email, role }),
      invitations: () => authedCall('GET', `${at}/invitations`),
      revokeInvitation: (invitationId) =>
        authedCall('DELETE', `${at}/invitations/${encodeURIComponent(invitationId)}`),
      fetch: (path, init) => clientFetch(path, { ...init, organization: id }),
    };
  }

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

  /**
   * Cookie mode's logout: `DELETE /auth/session` ends this session only and clears the cookies (SPEC-3 section
   * 5); an expired access cookie is refreshed first, as the bearer mode does, so the right session ends.
   */
  async function cookieLogout(): Promise<void> {
    try {
      if (!readCsrf()) return;
      const response = await cookieFetch(
        new Request(`${base}/api/auth/session`, {
          method: 'DELETE',
          headers: { accept: 'application/json' },
        }),
      );
      // A session already over is signed out all the same; anything else is the caller's to see.
      if (!response.ok && response.status !== 401) throw await apiErrorOf(response);
    } finally {
      await refresher.signOut('logout');
    }
  }

  // SPEC-3 section 1: social login (social.ts)
  const social = createSocialLogin({
    base,
    onApi,
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
      const path = cookieMode ? '/api/auth/session' : '/api/auth/token';
      const body = (await post(path, { username, password }, { form: true })) as {
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
      if (cookieMode) return cookieLogout();
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
    organizations: () => authedCall('GET', '/api/organizations'),
    createOrganization: (input) => authedCall('POST', '/api/organizations', input),
    organization: organizationHandle,
    acceptOrganizationInvitation: (token) =>
      authedCall('POST', '/api/organizations/invitations/accept', { token }),
    api,
    events(eventOptions) {
      const WebSocket = options.WebSocket ?? globalWebSocket();
      if (!WebSocket)
        throw new Error('no WebSocket here: pass createClient({ WebSocket }) (the ws package on Node 20)');
      return subscribeEvents(
        {
          WebSocket,
          socketUrl: (ticket) =>
            `${onApi(`${base}/api/core/events/ws`).replace(/^http/, 'ws')}?ticket=${encodeURIComponent(ticket)}`,
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
    onSignedIn(listener) {
      signInListeners.add(listener);
      return () => signInListeners.delete(listener);
    },
    session: cookieMode ? 'cookie' : 'bearer',
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

/** Routes that issue tokens, which set the cookies instead when asked with `X-Svc-Session: cookie` (SPEC-3 §5). */
const TOKEN_ISSUING = new Set([
  '/api/mfa/verify',
  '/api/auth/passkey/token',
  '/api/auth/oauth/exchange',
  '/api/auth/invitation/accept',
]);
// SPEC-3 §2 organizations ----------------------------------------------------------------------------------

/** An organization (`GET /organizations` adds the caller's `role`). */
export interface SvcOrganization {
  id: string;
  slug: string;
  name: string;
  createdAt: string;
}
/** An organization with the caller's role in it (null: a superuser who is no member). */
export interface SvcOrganizationMembership extends SvcOrganization {
  role: string | null;
}
/** `GET /organizations/{org_id}`: also the codenames the caller's role grants. */
export interface SvcOrganizationDetail extends SvcOrganizationMembership {
  permissions: string[];
}
export interface SvcOrganizationMember {
  userId: string;
  username: string;
  email: string | null;
  firstName: string;
  lastName: string;
  role: string;
  joinedAt: string;
}
export interface SvcOrganizationInvitation {
  id: string;
  email: string;
  role: string;
  expiresAt: string;
  invitedBy: { id: string; username: string } | null;
  createdAt: string;
}
/** A page of SPEC's pagination contract. */
export interface SvcPage<T> {
  items: T[];
  total: number;
  page: number;
  pageSize: number;
  pages: number;
}

/** `client.fetch` options: `organization` sends `X-Organization-Id` (SPEC-3 §2 organization routes). */
export type SvcFetchInit = RequestInit & { organization?: string };

/** One organization's routes (`client.organization(id)`), each a call of `/api/organizations/{id}/…`. */
export interface SvcOrganizationHandle {
  readonly id: string;
  get(): Promise<SvcOrganizationDetail>;
  update(changes: { name?: string; slug?: string }): Promise<SvcOrganization>;
  delete(): Promise<void>;
  members(query?: {
    page?: number;
    pageSize?: number;
    search?: string;
  }): Promise<SvcPage<SvcOrganizationMember>>;
  setRole(userId: string, role: string): Promise<SvcOrganizationMember>;
  removeMember(userId: string): Promise<void>;
  invite(email: string, role: string): Promise<SvcOrganizationInvitation>;
  invitations(): Promise<SvcOrganizationInvitation[]>;
  revokeInvitation(invitationId: string): Promise<void>;
  /** `client.fetch` scoped to this organization (sends `X-Organization-Id`). */
  fetch(path: string, init?: RequestInit): Promise<Response>;
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
