// Social login from the browser (SPEC-3 section 1, docs/social-login.md "The frontend"): the enabled providers,
// the redirect to one, the fragment the callback comes back with (`#svc_code`, `#svc_linked`, `#svc_error`),
// the exchange of the code (with the MFA step) and the caller's identities.
import { SvcApiError } from './errors.js';
import { inBrowser } from './platform.js';

/** A provider of the sign-in buttons (`GET /auth/oauth/providers`). */
export interface OAuthProvider {
  name: string;
  label: string;
}

/** A linked identity of the signed-in user (`GET /auth/identities`). */
export interface SvcIdentity {
  id: string;
  provider: string;
  email: string | null;
  createdAt: string;
  lastUsedAt: string | null;
}

/** What the callback's fragment said: a link done, or nothing there (a page opened directly). */
export type SignInFragment = { status: 'linked'; provider: string } | null;

export interface SocialLoginDeps {
  base: string;
  /** A URL under `${base}/api/` moved under the server's API base (ClientOptions `apiBase`). */
  onApi(url: string): string;
  /** A public POST (JSON) whose unwrapped answer is returned; a refusal throws `SvcApiError`. */
  post(path: string, body: unknown): Promise<unknown>;
  /** A public GET, the same way. */
  get(path: string): Promise<unknown>;
  /** A bearer request's unwrapped JSON answer. */
  authedJson<T>(path: string, post?: { body?: unknown }): Promise<T>;
}

/** What the client uses of the browser's `location` and `history` (no DOM types: the package builds for Node too). */
interface LocationLike {
  href: string;
  pathname: string;
  search: string;
  assign(url: string): void;
}
interface HistoryLike {
  replaceState(data: unknown, unused: string, url: string): void;
}

/** The browser's address, or `undefined` outside one. */
function currentLocation(): LocationLike | undefined {
  return inBrowser() ? (globalThis as unknown as { location: LocationLike }).location : undefined;
}

/** Where the callback should come back to by default: this page (a path on the server's origin, else the URL). */
function defaultRedirect(base: string): string | undefined {
  const here = currentLocation();
  if (!here) return undefined;
  const url = new URL(here.href);
  url.hash = '';
  return url.origin === new URL(base).origin ? `${url.pathname}${url.search}` : url.href;
}

function navigate(url: string): void {
  currentLocation()?.assign(url);
}

export function createSocialLogin(deps: SocialLoginDeps) {
  const { base } = deps;
  return {
    /** `GET /auth/oauth/providers`: the enabled providers, for the sign-in buttons. */
    async oauthProviders(): Promise<OAuthProvider[]> {
      return (await deps.get('/api/auth/oauth/providers')) as OAuthProvider[];
    },

    /**
     * Sends the browser to the provider (`GET /auth/oauth/{provider}/authorize`); it comes back to `redirectTo`
     * (a path on the server's origin or a URL on an allowed origin; default this page) with the fragment that
     * {@link completeSignIn} reads. Returns the URL (outside a browser nothing navigates).
     */
    signInWith(provider: string, options: { redirectTo?: string } = {}): string {
      const redirectTo = options.redirectTo ?? defaultRedirect(base);
      const query = redirectTo === undefined ? '' : `?redirect_to=${encodeURIComponent(redirectTo)}`;
      const url = `${deps.onApi(`${base}/api/auth/oauth/${encodeURIComponent(provider)}/authorize`)}${query}`;
      navigate(url);
      return url;
    },

    /**
     * Reads the fragment the callback came back with (`url`, default the browser's address) and removes it from
     * the address bar: `#svc_code` is exchanged (`POST /auth/oauth/exchange`) for a login, `{status:
     * 'signed-in'}` or the MFA step; `#svc_linked` gives `{status: 'linked', provider}`; `#svc_error` throws
     * `SvcApiError` with that code (`auth.oauth_account_exists`, ...). Null when the fragment holds none.
     */
    async readFragment(
      url: string | undefined,
      signIn: (code: string) => Promise<unknown>,
    ): Promise<unknown> {
      const href = url ?? currentLocation()?.href ?? '';
      const hash = href.includes('#') ? href.slice(href.indexOf('#') + 1) : '';
      const params = new URLSearchParams(hash);
      const code = params.get('svc_code');
      const error = params.get('svc_error');
      const linked = params.get('svc_linked');
      if (code === null && error === null && linked === null) return null;
      // The code is a credential for 60 seconds: out of the address bar and the history at once.
      const here = currentLocation();
      if (url === undefined && here) {
        (globalThis as unknown as { history: HistoryLike }).history.replaceState(
          null,
          '',
          `${here.pathname}${here.search}`,
        );
      }
      if (error !== null)
        throw new SvcApiError(400, [
          { loc: ['fragment', 'svc_error'], msg: error, type: 'value_error', code: error },
        ]);
      if (linked !== null) return { status: 'linked', provider: linked };
      return signIn(code!);
    },

    /**
     * Links a provider to the signed-in user (`POST /auth/oauth/{provider}/link`, which needs a recent login:
     * `auth.reauthentication_required` otherwise), then sends the browser to the provider; it comes back with
     * `#svc_linked`. Returns the provider's URL.
     */
    async link(provider: string, options: { redirectTo?: string } = {}): Promise<string> {
      const redirectTo = options.redirectTo ?? defaultRedirect(base);
      const { authorizationUrl } = await deps.authedJson<{ authorizationUrl: string }>(
        `/api/auth/oauth/${encodeURIComponent(provider)}/link`,
        { body: redirectTo === undefined ? {} : { redirectTo } },
      );
      navigate(authorizationUrl);
      return authorizationUrl;
    },

    /** `GET /auth/identities`: the signed-in user's linked identities. */
    identities: () => deps.authedJson<SvcIdentity[]>('/api/auth/identities'),
  };
}
