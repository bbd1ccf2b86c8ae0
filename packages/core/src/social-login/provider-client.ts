import type * as Oidc from 'openid-client';
import { SvcError } from '../kernel/errors/svc-error.js';
import type { Logger } from '../kernel/log/logger.js';
import { MAX_IAT_FUTURE_SECONDS, PROVIDER_TIMEOUT_MS } from './constants.js';
import type { OAuthProfile, ResolvedProvider } from './providers.js';

/** The authorization request of one flow: where to send the browser, and what the callback must check. */
export interface AuthorizationRequest {
  url: string;
  codeVerifier: string;
  nonce: string | null;
}

/** Who signed in, as the provider's checked answer says: the identity `(issuer, subject)` and its profile. */
export interface ProviderIdentity extends OAuthProfile {
  issuer: string;
}

/**
 * openid-client, loaded when a provider is first needed: a server with social login off, and every start,
 * do not pay for it (docs/performance.md, cold start).
 */
let library: Promise<typeof Oidc> | undefined;
const openidClient = () => (library ??= import('openid-client'));

const providerError = () => new SvcError('auth.oauth_provider_error');
const tokenInvalid = () => new SvcError('auth.oauth_token_invalid');

/**
 * Failures of the provider itself (unreachable, timed out, an error or a malformed answer from its token
 * endpoint): `auth.oauth_provider_error`. Everything else that openid-client refuses is the answer failing its
 * checks (the ID token's signature, `iss`, `aud`, `exp`, `nonce`, an unknown key, an unsupported `alg`):
 * `auth.oauth_token_invalid` (SPEC-3 section 1).
 */
const PROVIDER_FAILURES = new Set([
  'OAUTH_RESPONSE_BODY_ERROR',
  'OAUTH_RESPONSE_IS_NOT_CONFORM',
  'OAUTH_RESPONSE_IS_NOT_JSON',
  'OAUTH_PARSE_ERROR',
  'OAUTH_HTTP_REQUEST_FORBIDDEN',
  'OAUTH_REQUEST_PROTOCOL_FORBIDDEN',
]);

/**
 * Whether `error` or one of its causes (openid-client wraps what it does not know) is the provider failing. By
 * names and codes, not `instanceof`: fetch's errors come from Node's own realm.
 */
function isProviderFailure(error: unknown): boolean {
  const seen = new Set<unknown>();
  for (let current = error; current && typeof current === 'object' && !seen.has(current);) {
    seen.add(current);
    const { name, message, code } = current as { name?: unknown; message?: unknown; code?: unknown };
    if (name === 'ResponseBodyError' || name === 'AbortError' || name === 'TimeoutError') return true;
    if (name === 'TypeError' && message === 'fetch failed') return true; // refused, reset, DNS
    if (
      typeof code === 'string' &&
      (PROVIDER_FAILURES.has(code) || /^(UND_ERR|ECONN|ENOTFOUND|ETIMEDOUT)/.test(code))
    )
      return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}

function classify(error: unknown, log: Logger, provider: string): SvcError {
  if (error instanceof SvcError) return error;
  const failure = isProviderFailure(error);
  // The reason goes to the log (without tokens: openid-client's messages name claims, never values of secrets).
  log.warn(
    `social login at '${provider}' failed: ${error instanceof Error ? error.message : String(error)}`,
    {
      code: (error as { code?: unknown }).code,
    },
  );
  return failure ? providerError() : tokenInvalid();
}

/**
 * One provider spoken to through openid-client (a certified relying-party library): discovery and keys fetched
 * when first needed and cached (a failed fetch is retried at the next request, so an unreachable provider never
 * stops the start), PKCE S256, `state`, and for OpenID a `nonce` and an ID token whose signature is ALWAYS
 * checked against the provider's keys (openid-client v6 skips it unless `enableNonRepudiationChecks` is set; its
 * key cache re-fetches the JWKS for an unknown key id at most once a minute).
 */
export function createProviderClient(provider: ResolvedProvider, redirectUri: string, log: Logger) {
  let configuration: Promise<Oidc.Configuration> | null = null;
  const timeoutSeconds = PROVIDER_TIMEOUT_MS / 1000;

  /** The client's authentication: with its secret, or none (a public client relying on PKCE alone). */
  function clientAuth(oidc: typeof Oidc, withSecret: (secret: string) => Oidc.ClientAuth): Oidc.ClientAuth {
    return provider.clientSecret === '' ? oidc.None() : withSecret(provider.clientSecret);
  }

  async function load(): Promise<Oidc.Configuration> {
    const oidc = await openidClient();
    const execute = provider.insecure ? [oidc.allowInsecureRequests] : [];
    if (provider.kind === 'oidc') {
      const config = await oidc.discovery(
        new URL(provider.discoveryIssuer ?? provider.issuer),
        provider.clientId,
        undefined,
        clientAuth(oidc, oidc.ClientSecretBasic),
        { execute: [...execute, oidc.enableNonRepudiationChecks], timeout: timeoutSeconds },
      );
      config.timeout = timeoutSeconds;
      return config;
    }
    const endpoints = provider.github ?? {
      authorizationEndpoint: provider.definition!.authorizationEndpoint,
      tokenEndpoint: provider.definition!.tokenEndpoint,
    };
    const config = new oidc.Configuration(
      {
        issuer: provider.issuer,
        authorization_endpoint: endpoints.authorizationEndpoint,
        token_endpoint: endpoints.tokenEndpoint,
      },
      provider.clientId,
      undefined,
      clientAuth(oidc, oidc.ClientSecretPost),
    );
    for (const step of execute) step(config);
    config.timeout = timeoutSeconds;
    return config;
  }

  /** The configuration, fetched once; a failure is forgotten so the next request tries again. */
  function config(): Promise<Oidc.Configuration> {
    configuration ??= load().catch((error: unknown) => {
      configuration = null;
      throw error;
    });
    return configuration;
  }

  const isOpenId = provider.kind === 'oidc';

  return {
    provider,

    /** The provider's authorization URL for a new flow; 502 `auth.oauth_provider_error` when unreachable. */
    async authorizationRequest(state: string): Promise<AuthorizationRequest> {
      // Before any answer of the provider, whatever fails is the provider's discovery: 502.
      const cfg = await config().catch((error: unknown) => {
        classify(error, log, provider.name);
        throw providerError();
      });
      const oidc = await openidClient();
      const codeVerifier = oidc.randomPKCECodeVerifier();
      const nonce = isOpenId ? oidc.randomNonce() : null;
      const parameters: Record<string, string> = {
        redirect_uri: redirectUri,
        scope: provider.scopes,
        code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier),
        code_challenge_method: 'S256',
        state,
        ...(nonce ? { nonce } : {}),
      };
      return { url: oidc.buildAuthorizationUrl(cfg, parameters).href, codeVerifier, nonce };
    },

    /**
     * The code grant of a callback (its query as received), checked: the identity and profile of who signed
     * in. Throws `auth.oauth_provider_error` or `auth.oauth_token_invalid`.
     */
    async complete(
      query: Record<string, string>,
      checks: { state: string; codeVerifier: string; nonce: string | null },
    ): Promise<ProviderIdentity> {
      try {
        const oidc = await openidClient();
        const cfg = await config();
        const currentUrl = new URL(redirectUri);
        for (const [key, value] of Object.entries(query)) currentUrl.searchParams.set(key, value);
        const tokens = await oidc.authorizationCodeGrant(cfg, currentUrl, {
          pkceCodeVerifier: checks.codeVerifier,
          expectedState: checks.state,
          ...(isOpenId && checks.nonce ? { expectedNonce: checks.nonce, idTokenExpected: true } : {}),
        });
        if (isOpenId) {
          const claims = tokens.claims();
          if (!claims) throw tokenInvalid();
          // SPEC-3 section 1: `iat` present and at most 5 minutes in the future (openid-client checks it is a
          // number and not too old, not this).
          const now = Math.floor(Date.now() / 1000);
          if (typeof claims.iat !== 'number' || claims.iat > now + MAX_IAT_FUTURE_SECONDS)
            throw tokenInvalid();
          return {
            issuer: claims.iss,
            subject: claims.sub,
            email: typeof claims.email === 'string' && claims.email !== '' ? claims.email : null,
            emailVerified: claims.email_verified === true,
            ...optional('username', claims.preferred_username ?? claims.nickname),
            ...optional('firstName', claims.given_name),
            ...optional('lastName', claims.family_name),
          };
        }
        if (provider.kind === 'github') {
          return { issuer: provider.issuer, ...(await githubProfile(provider, tokens.access_token)) };
        }
        const profile = await provider.definition!.profile({
          accessToken: tokens.access_token,
          ...(tokens.id_token ? { idToken: tokens.id_token } : {}),
        });
        return { issuer: provider.issuer, ...profile, subject: String(profile.subject) };
      } catch (error) {
        throw classify(error, log, provider.name);
      }
    },
  };
}

export type ProviderClient = ReturnType<typeof createProviderClient>;

function optional<K extends string>(key: K, value: unknown): Partial<Record<K, string>> {
  return typeof value === 'string' && value !== '' ? ({ [key]: value } as Record<K, string>) : {};
}

/**
 * GitHub's profile (OAuth 2.0 without OpenID; SPEC-3 section 1): the user (`id`, `login`, `name`) and, as the
 * email, the primary address of the user's email list with GitHub's `verified` flag.
 */
async function githubProfile(provider: ResolvedProvider, accessToken: string): Promise<OAuthProfile> {
  const api = provider.github!.apiUrl;
  const get = async (path: string): Promise<unknown> => {
    const res = await fetch(`${api}${path}`, {
      headers: {
        Authorization: `Bearer ${accessToken}`,
        Accept: 'application/vnd.github+json',
        'User-Agent': 'svc',
      },
      signal: AbortSignal.timeout(PROVIDER_TIMEOUT_MS),
    });
    if (!res.ok) throw providerError();
    return res.json();
  };
  const [user, emails] = await Promise.all([get('/user'), get('/user/emails')]);
  const u = user as { id?: unknown; login?: unknown; name?: unknown };
  if ((typeof u.id !== 'number' && typeof u.id !== 'string') || !Array.isArray(emails)) throw providerError();
  const primary = (emails as { email?: unknown; primary?: unknown; verified?: unknown }[]).find(
    (e) => e.primary === true && typeof e.email === 'string',
  );
  const name = typeof u.name === 'string' ? u.name.trim() : '';
  const space = name.indexOf(' ');
  return {
    subject: String(u.id),
    email: primary ? (primary.email as string) : null,
    emailVerified: primary?.verified === true,
    ...optional('username', u.login),
    ...optional('firstName', space === -1 ? name : name.slice(0, space)),
    ...optional('lastName', space === -1 ? '' : name.slice(space + 1)),
  };
}
