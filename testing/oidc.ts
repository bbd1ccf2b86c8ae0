// A real OpenID provider for social-login tests (SPEC-3 section 1): the certified `oidc-provider` package on
// loopback, with its development login and consent pages driven over HTTP the way a browser would (cookies,
// redirects, form posts), accounts the test defines, key rotation, and a middleman on its token endpoint that
// can tamper with the ID token (another key, `alg: none`, a wrong `iss`/`aud`/`nonce`, expired, `iat` ahead).
// Also a loopback fixture of GitHub's three endpoints (authorize, token, API), which is OAuth 2.0 without OpenID.
import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type Provider from 'oidc-provider';

/** What the provider says of an account (standard claims; `sub` is the login name typed on its login page). */
export interface IdpAccount {
  sub: string;
  email?: string;
  email_verified?: boolean;
  preferred_username?: string;
  given_name?: string;
  family_name?: string;
}

/** How the middleman changes the next ID tokens (null: it passes them on). */
export type IdTokenTamper =
  | null
  | 'wrong-key'
  | 'alg-none'
  | 'wrong-iss'
  | 'wrong-aud'
  | 'wrong-nonce'
  | 'expired'
  | 'future-iat'
  | 'no-iat';

export interface TestIdp {
  /** `http://127.0.0.1:<port>` */
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** Accounts by `sub`; add or change them at any time. */
  accounts: Map<string, IdpAccount>;
  /** Applied to every token response until set back to null. */
  tamper: IdTokenTamper;
  /** Starts the provider with the client's redirect URIs (the app's callbacks, known once the app is set up). */
  register(redirectUris: string[]): Promise<void>;
  /** A new signing key replaces the old one (a new provider instance on the same address: sessions end). */
  rotateKeys(): Promise<void>;
  /**
   * Follows an authorization URL through the provider's login (as `sub`) and consent pages; the URL the
   * provider finally sends the browser to (the app's callback with `code` and `state`, or `error`).
   * `deny`: the user aborts at the provider (`error=access_denied`).
   */
  signIn(authorizationUrl: string, sub: string, options?: { deny?: boolean }): Promise<string>;
  /** Stops answering (connections refused) until {@link resume}. */
  suspend(): Promise<void>;
  resume(): Promise<void>;
  close(): Promise<void>;
}

/** A cookie jar of one browser for one host (enough for the provider's own cookies). */
export class CookieJar {
  private readonly cookies = new Map<string, string>();
  store(res: Response): void {
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const eq = pair!.indexOf('=');
      const name = pair!.slice(0, eq).trim();
      const value = pair!.slice(eq + 1).trim();
      if (/max-age=0|expires=thu, 01 jan 1970/i.test(line) || value === '') this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }
  header(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }
  get(name: string): string | undefined {
    return this.cookies.get(name);
  }
  set(name: string, value: string): void {
    this.cookies.set(name, value);
  }
}

function base64url(value: Buffer | string): string {
  return Buffer.from(value).toString('base64url');
}

function newSigningKey(): { privateKey: KeyObject; kid: string; jwk: Record<string, unknown> } {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const kid = randomBytes(8).toString('hex');
  const jwk = {
    ...(privateKey.export({ format: 'jwk' }) as Record<string, unknown>),
    kid,
    use: 'sig',
    alg: 'RS256',
  };
  return { privateKey, kid, jwk };
}

/** Signs `payload` as a JWS with RS256 and `kid`, or unsigned (`alg: none`). */
function signJwt(
  payload: Record<string, unknown>,
  key: { privateKey: KeyObject; kid: string } | 'none',
): string {
  const header = key === 'none' ? { alg: 'none', typ: 'JWT' } : { alg: 'RS256', typ: 'JWT', kid: key.kid };
  const input = `${base64url(JSON.stringify(header))}.${base64url(JSON.stringify(payload))}`;
  if (key === 'none') return `${input}.`;
  return `${input}.${base64url(sign('sha256', Buffer.from(input), key.privateKey))}`;
}

async function listen(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<Server> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

function closeServer(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

/**
 * oidc-provider, imported with its warning about the Node.js version muted: it asks for Node 22 and works on the
 * Node 20 the repository supports, for what these tests use.
 */
async function loadProvider(): Promise<typeof Provider> {
  const warn = console.warn;
  console.warn = () => undefined;
  try {
    return (await import('oidc-provider')).default;
  } finally {
    console.warn = warn;
  }
}

/**
 * The settings of an OpenID provider named `name` at the test provider: issuer, client id and secret. Settings
 * named after a provider are not among the declared settings, hence the plain record.
 */
export function oidcSettings(name: string, idp: TestIdp): Record<string, string> {
  return {
    [`oauth_${name}_issuer`]: idp.issuer,
    [`oauth_${name}_client_id`]: idp.clientId,
    [`oauth_${name}_client_secret`]: idp.clientSecret,
  };
}

/** Starts the provider's server on loopback; call {@link TestIdp.register} once the app's callbacks are known. */
export async function startTestIdp(
  options: { clientId?: string; clientSecret?: string } = {},
): Promise<TestIdp> {
  const ProviderClass = await loadProvider();
  const clientId = options.clientId ?? 'svc-app';
  const clientSecret = options.clientSecret ?? randomBytes(24).toString('hex');
  const accounts = new Map<string, IdpAccount>();
  let key = newSigningKey();
  let redirectUris: string[] = [];
  let provider: Provider | null = null;
  let suspended = false;

  function build(): Provider {
    // The package warns on the console that its development adapter and pages are in use: they are what a test
    // wants, so the warnings of construction are dropped.
    const warn = console.warn;
    console.warn = () => undefined;
    try {
      return construct();
    } finally {
      console.warn = warn;
    }
  }

  function construct(): Provider {
    const p = new ProviderClass(idp.issuer, {
      clients: [
        {
          client_id: clientId,
          client_secret: clientSecret,
          redirect_uris: redirectUris,
          grant_types: ['authorization_code'],
          response_types: ['code'],
          token_endpoint_auth_method: 'client_secret_basic',
        },
      ],
      jwks: { keys: [key.jwk as never] },
      claims: {
        openid: ['sub'],
        email: ['email', 'email_verified'],
        profile: ['preferred_username', 'given_name', 'family_name'],
      },
      // The claims of the scopes go into the ID token (as Google's and GitLab's do), not only the userinfo.
      conformIdTokenClaims: false,
      pkce: { required: () => true },
      // Explicit lifetimes (the defaults print a notice each time they are used).
      ttl: {
        AccessToken: 3600,
        AuthorizationCode: 60,
        IdToken: 3600,
        Interaction: 600,
        Session: 3600,
        Grant: 3600,
      },
      findAccount: (_ctx, sub) => {
        const account = accounts.get(sub) ?? { sub };
        return { accountId: sub, claims: () => ({ ...account, sub }) };
      },
      features: { devInteractions: { enabled: true } },
      cookies: { keys: ['test-cookie-key-0123456789'] },
    });
    return p;
  }

  /** The middleman: passes requests to the provider, rewriting the ID token of token responses on request. */
  function handle(req: IncomingMessage, res: ServerResponse): void {
    if (!provider) {
      res.statusCode = 503;
      res.end();
      return;
    }
    if (idp.tamper && req.method === 'POST' && req.url?.startsWith('/token')) {
      const end = res.end.bind(res);
      (res as { end: unknown }).end = (chunk?: unknown, ...rest: unknown[]) => {
        if (chunk && res.statusCode === 200) {
          const body = JSON.parse(String(chunk)) as Record<string, unknown>;
          if (typeof body.id_token === 'string') body.id_token = tamper(body.id_token, idp.tamper!);
          const text = JSON.stringify(body);
          res.setHeader('Content-Length', Buffer.byteLength(text));
          return end(text);
        }
        return end(chunk as never, ...(rest as []));
      };
    }
    provider.callback()(req, res);
  }

  function tamper(idToken: string, how: Exclude<IdTokenTamper, null>): string {
    const claims = JSON.parse(Buffer.from(idToken.split('.')[1]!, 'base64url').toString()) as Record<
      string,
      unknown
    >;
    const now = Math.floor(Date.now() / 1000);
    switch (how) {
      case 'wrong-key':
        return signJwt(claims, { privateKey: newSigningKey().privateKey, kid: key.kid });
      case 'alg-none':
        return signJwt(claims, 'none');
      case 'wrong-iss':
        return signJwt({ ...claims, iss: 'http://127.0.0.1:1/other' }, key);
      case 'wrong-aud':
        return signJwt({ ...claims, aud: 'another-client' }, key);
      case 'wrong-nonce':
        return signJwt({ ...claims, nonce: 'not-the-nonce' }, key);
      case 'expired':
        return signJwt({ ...claims, iat: now - 7200, exp: now - 3600 }, key);
      case 'future-iat':
        return signJwt({ ...claims, iat: now + 3600, exp: now + 7200 }, key);
      case 'no-iat': {
        const { iat: _iat, ...rest } = claims;
        return signJwt(rest, key);
      }
    }
  }

  const server = await listen((req, res) => {
    if (suspended) {
      req.socket.destroy();
      return;
    }
    handle(req, res);
  });
  const { port } = server.address() as AddressInfo;

  const idp: TestIdp = {
    issuer: `http://127.0.0.1:${port}`,
    clientId,
    clientSecret,
    accounts,
    tamper: null,
    async register(uris) {
      redirectUris = uris;
      provider = build();
    },
    async rotateKeys() {
      key = newSigningKey();
      provider = build();
    },
    async signIn(authorizationUrl, sub, options = {}) {
      const jar = new CookieJar();
      let url = authorizationUrl;
      for (let hop = 0; hop < 20; hop++) {
        const target = new URL(url, idp.issuer);
        if (target.origin !== idp.issuer) return target.href; // back to the app
        let res: Response;
        const interaction = /^\/interaction\/[^/]+$/.exec(target.pathname);
        if (interaction) {
          const page = await fetch(target, { headers: { cookie: jar.header() }, redirect: 'manual' });
          jar.store(page);
          const html = await page.text();
          const prompt = /name="prompt" value="(\w+)"/.exec(html)?.[1];
          if (options.deny) {
            res = await fetch(`${target.href}/abort`, {
              headers: { cookie: jar.header() },
              redirect: 'manual',
            });
          } else {
            const form = new URLSearchParams(
              prompt === 'login' ? { prompt, login: sub, password: 'any' } : { prompt: prompt ?? 'consent' },
            );
            res = await fetch(target, {
              method: 'POST',
              headers: { cookie: jar.header(), 'content-type': 'application/x-www-form-urlencoded' },
              body: form.toString(),
              redirect: 'manual',
            });
          }
        } else {
          res = await fetch(target, { headers: { cookie: jar.header() }, redirect: 'manual' });
        }
        jar.store(res);
        const location = res.headers.get('location');
        if (!location)
          throw new Error(`the provider answered ${res.status} at ${target.pathname}: ${await res.text()}`);
        await res.arrayBuffer().catch(() => undefined);
        url = new URL(location, target).href;
      }
      throw new Error('too many redirects at the provider');
    },
    async suspend() {
      suspended = true;
      server.closeAllConnections();
    },
    async resume() {
      suspended = false;
    },
    close: () => closeServer(server),
  };
  return idp;
}

// ---------------------------------------------------------------------------------------------------------------
// GitHub

/** A GitHub user of the fixture: `/user` and `/user/emails` as GitHub answers them. */
export interface GithubAccount {
  id: number;
  login: string;
  name?: string;
  emails: { email: string; primary: boolean; verified: boolean }[];
}

export interface TestGithub {
  /** The base URL to give as `oauth_github_issuer` (GitHub Enterprise layout: `/login/oauth/...`, `/api/v3`). */
  url: string;
  clientId: string;
  clientSecret: string;
  accounts: Map<string, GithubAccount>;
  /** Follows the authorization URL as `login` (GitHub asks nothing more of a user who authorized the app). */
  signIn(authorizationUrl: string, login: string, options?: { deny?: boolean }): Promise<string>;
  close(): Promise<void>;
}

/**
 * GitHub's three endpoints on loopback, as their documentation describes them ("Authorizing OAuth apps"): the
 * authorization page redirects back with `code` and `state` (or `error=access_denied`), the token endpoint
 * trades the code (with the client secret and PKCE verifier) for a bearer token, and the API answers `/user`
 * and `/user/emails` for that token.
 */
export async function startTestGithub(): Promise<TestGithub> {
  const clientId = 'Iv1.testclient';
  const clientSecret = randomBytes(20).toString('hex');
  const accounts = new Map<string, GithubAccount>();
  const codes = new Map<string, { login: string; redirectUri: string; challenge: string }>();
  const tokens = new Map<string, string>();

  const json = (res: ServerResponse, status: number, body: unknown) => {
    res.statusCode = status;
    res.setHeader('Content-Type', 'application/json; charset=utf-8');
    res.end(JSON.stringify(body));
  };

  const server = await listen((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (req.method === 'GET' && url.pathname === '/login/oauth/authorize') {
      // The test's "browser" says who it is with a header (GitHub would show its login and consent pages).
      const login = String(req.headers['x-test-login'] ?? '');
      const back = new URL(url.searchParams.get('redirect_uri') ?? '');
      back.searchParams.set('state', url.searchParams.get('state') ?? '');
      if (req.headers['x-test-deny']) back.searchParams.set('error', 'access_denied');
      else {
        const code = randomBytes(10).toString('hex');
        codes.set(code, {
          login,
          redirectUri: url.searchParams.get('redirect_uri') ?? '',
          challenge: url.searchParams.get('code_challenge') ?? '',
        });
        back.searchParams.set('code', code);
      }
      res.statusCode = 302;
      res.setHeader('Location', back.href);
      res.end();
      return;
    }
    if (req.method === 'POST' && url.pathname === '/login/oauth/access_token') {
      let text = '';
      req.on('data', (d: Buffer) => (text += d.toString()));
      req.on('end', () => {
        const form = new URLSearchParams(text);
        const pending = codes.get(form.get('code') ?? '');
        codes.delete(form.get('code') ?? '');
        const verifier = form.get('code_verifier') ?? '';
        const challenge = createHash('sha256').update(verifier).digest('base64url');
        if (
          !pending ||
          form.get('client_id') !== clientId ||
          form.get('client_secret') !== clientSecret ||
          form.get('redirect_uri') !== pending.redirectUri ||
          challenge !== pending.challenge
        ) {
          json(res, 200, { error: 'bad_verification_code' }); // GitHub answers errors with 200
          return;
        }
        const token = `gho_${randomBytes(16).toString('hex')}`;
        tokens.set(token, pending.login);
        json(res, 200, { access_token: token, token_type: 'bearer', scope: 'read:user,user:email' });
      });
      return;
    }
    const login = tokens.get(String(req.headers.authorization ?? '').replace(/^Bearer /, ''));
    const account = login ? accounts.get(login) : undefined;
    if (req.method === 'GET' && url.pathname === '/api/v3/user' && account) {
      json(res, 200, { id: account.id, login: account.login, name: account.name ?? null });
      return;
    }
    if (req.method === 'GET' && url.pathname === '/api/v3/user/emails' && account) {
      json(
        res,
        200,
        account.emails.map((e) => ({ ...e, visibility: e.primary ? 'private' : null })),
      );
      return;
    }
    json(res, 401, { message: 'Bad credentials' });
  });
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    clientId,
    clientSecret,
    accounts,
    async signIn(authorizationUrl, login, options = {}) {
      const res = await fetch(authorizationUrl, {
        headers: { 'x-test-login': login, ...(options.deny ? { 'x-test-deny': '1' } : {}) },
        redirect: 'manual',
      });
      const location = res.headers.get('location');
      if (!location) throw new Error(`the GitHub fixture answered ${res.status}`);
      return location;
    },
    close: () => closeServer(server),
  };
}

// ---------------------------------------------------------------------------------------------------------------
// The browser's side of a social login against an svc app

/** What the callback's redirect carried: where it went and its fragment (`svc_code`, `svc_linked`, `svc_error`). */
export interface CallbackResult {
  location: string;
  /** The location without the fragment. */
  target: string;
  fragment: Record<string, string>;
}

/** The fragment's parameters of a location. */
export function fragmentOf(location: string): Record<string, string> {
  const hash = location.includes('#') ? location.slice(location.indexOf('#') + 1) : '';
  return Object.fromEntries(new URLSearchParams(hash));
}

/** The `name=value` of the binding cookie an authorize or link answer set. */
export function bindingCookie(res: { headers: Headers }): string {
  const line = res.headers.getSetCookie().find((l) => l.startsWith('svc_oauth_binding='));
  if (!line) throw new Error('no binding cookie was set');
  return line.split(';')[0]!;
}

/** A provider the browser can sign in at: the OpenID test provider or the GitHub fixture. */
export interface SignInProvider {
  signIn(authorizationUrl: string, who: string, options?: { deny?: boolean }): Promise<string>;
}

/**
 * A social login as a browser makes it: `GET .../authorize` (keeping its cookie), the sign-in at the provider as
 * `who`, then the callback with the cookie; the callback's redirect. `cookie` overrides the browser's cookie at
 * the callback (another browser); `authorizationUrl` + `cookie` continue a flow started elsewhere (a link).
 */
export async function socialSignIn(
  appUrl: string,
  provider: string,
  at: SignInProvider,
  who: string,
  options: {
    redirectTo?: string;
    deny?: boolean;
    start?: { authorizationUrl: string; cookie: string };
    callbackCookie?: string | null;
    /** Where the callback is served (another instance of the app). @default appUrl */
    callbackAppUrl?: string;
  } = {},
): Promise<CallbackResult> {
  const start = options.start ?? (await startAuthorize(appUrl, provider, options.redirectTo));
  const callback = await at.signIn(start.authorizationUrl, who, options.deny ? { deny: true } : {});
  const url = new URL(callback);
  const callbackUrl = options.callbackAppUrl
    ? `${options.callbackAppUrl}${url.pathname}${url.search}`
    : callback;
  const cookie = options.callbackCookie === undefined ? start.cookie : options.callbackCookie;
  const res = await fetch(callbackUrl, { headers: cookie ? { cookie } : {}, redirect: 'manual' });
  await res.arrayBuffer();
  const location = res.headers.get('location');
  if (res.status !== 302 || !location) throw new Error(`the callback answered ${res.status}`);
  return { location, target: location.split('#')[0]!, fragment: fragmentOf(location) };
}

/** `GET /api/auth/oauth/{provider}/authorize`: the provider's URL and the binding cookie. */
export async function startAuthorize(
  appUrl: string,
  provider: string,
  redirectTo?: string,
): Promise<{ authorizationUrl: string; cookie: string }> {
  const query = redirectTo === undefined ? '' : `?redirect_to=${encodeURIComponent(redirectTo)}`;
  const res = await fetch(`${appUrl}/api/auth/oauth/${provider}/authorize${query}`, { redirect: 'manual' });
  const text = await res.text();
  const location = res.headers.get('location');
  if (res.status !== 302 || !location) throw new Error(`authorize answered ${res.status}: ${text}`);
  return { authorizationUrl: location, cookie: bindingCookie(res) };
}
