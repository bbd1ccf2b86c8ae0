import type { Settings } from '../kernel/config/schema.js';
import { SvcError } from '../kernel/errors/svc-error.js';
import { toAuthUser, type TokenPair } from '../kernel/identity.js';
import type { Logger } from '../kernel/log/logger.js';
import type { ModulePorts } from '../kernel/module.js';
import { apiBase } from '../kernel/routes.js';
import { BINDING_COOKIE, EXCHANGE_RATE_LIMIT_SCOPE, STATE_TTL_SECONDS } from './constants.js';
import { digest, randomToken, type FlowStore } from './flow-store.js';
import type { LinkingRules } from './linking.js';
import { createProviderClient, type ProviderClient } from './provider-client.js';
import type { ResolvedProvider } from './providers.js';
import { allowedRedirectOrigins, checkRedirectTo } from './redirect.js';
import type { IdentityRow, SocialLoginStore } from './store.js';
import { unlinkIdentity } from './unlink.js';

export type ExchangeResult = TokenPair | { mfa_required: true; mfa_token: string };

export interface SocialLoginServiceDeps {
  settings: Settings;
  providers: ResolvedProvider[];
  store: SocialLoginStore;
  flows: FlowStore;
  linking: LinkingRules;
  log: Logger;
  ports: ModulePorts<never, 'loginGuard', 'secondFactor' | 'rateLimiter'>;
  now: () => Date;
}

/** An answer that sets the browser-binding cookie. */
export interface WithCookie {
  setCookie: string;
}

/** A binding cookie value as issued: 32 random bytes, base64url. */
const BINDING_VALUE = /^[A-Za-z0-9_-]{43}$/;

/** The value of cookie `name` in a `Cookie` header, or undefined. */
function cookieValue(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq !== -1 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/** The identity as the routes show it (SPEC-3 section 1). */
export function toIdentityOut(row: IdentityRow) {
  return {
    id: row.id,
    provider: row.provider,
    email: row.email,
    createdAt: row.createdAt.toISOString(),
    lastUsedAt: row.lastUsedAt ? row.lastUsedAt.toISOString() : null,
  };
}

/**
 * Social login (SPEC-3 section 1): the authorize and link redirects, the callback, the exchange of its code for
 * a login, and the identities of a user.
 */
export function createSocialLoginService(deps: SocialLoginServiceDeps) {
  const { settings, store, flows, linking, log, ports, now } = deps;
  const publicUrl = (settings.public_url || `http://${settings.host}:${settings.port}`).replace(/\/+$/, '');
  const callbackBase = `${apiBase(settings)}/auth/oauth`;
  const origins = allowedRedirectOrigins(publicUrl, settings.oauth_allowed_redirect_origins);
  const secure = publicUrl.startsWith('https:');
  const clients = new Map<string, ProviderClient>(
    deps.providers.map((p) => [
      p.name,
      createProviderClient(p, `${publicUrl}${callbackBase}/${p.name}/callback`, log),
    ]),
  );

  function client(name: string): ProviderClient {
    const found = clients.get(name);
    if (!found) throw new SvcError('auth.oauth_provider_unknown');
    return found;
  }

  /**
   * Where the callback sends the browser: `redirect_to` on `public_url`'s origin when relative, without a
   * fragment of its own, since the answer's fragment is `svc_code`, `svc_linked` or `svc_error` (SPEC-3
   * section 1; a second `#` would hide it from every client).
   */
  function target(redirectTo: string): string {
    const hash = redirectTo.indexOf('#');
    const path = hash === -1 ? redirectTo : redirectTo.slice(0, hash);
    return path.startsWith('/') ? `${new URL(publicUrl).origin}${path}` : path;
  }

  /**
   * Starts a flow: the state (stored as a digest with the PKCE verifier, nonce, `redirect_to`, purpose and the
   * link's user) bound to the browser by the cookie (SPEC-3 section 1). The browser's binding is kept when it
   * has one, so flows started in two tabs both complete.
   */
  async function start(
    name: string,
    purpose: 'login' | 'link',
    redirectTo: string | undefined,
    userId: string | null,
    cookieHeader: string | undefined,
  ): Promise<{ authorizationUrl: string } & WithCookie> {
    const provider = client(name);
    const checked = checkRedirectTo(redirectTo ?? '/', origins);
    const known = cookieValue(cookieHeader, BINDING_COOKIE);
    const binding = known && BINDING_VALUE.test(known) ? known : randomToken();
    const state = randomToken();
    const request = await provider.authorizationRequest(state);
    await flows.putState(state, {
      provider: name,
      purpose,
      userId,
      redirectTo: checked,
      codeVerifier: request.codeVerifier,
      nonce: request.nonce,
      browser: digest(binding),
    });
    const cookie = [
      `${BINDING_COOKIE}=${binding}`,
      `Path=${callbackBase}`,
      `Max-Age=${STATE_TTL_SECONDS}`,
      'HttpOnly',
      'SameSite=Lax',
      ...(secure ? ['Secure'] : []),
    ].join('; ');
    return { authorizationUrl: request.url, setCookie: cookie };
  }

  const fragment = (key: string, value: string) => `#${key}=${encodeURIComponent(value)}`;

  return {
    /** `GET /auth/oauth/providers`. */
    providers: () => deps.providers.map((p) => ({ name: p.name, label: p.label })),

    authorize: (name: string, redirectTo: string | undefined, cookie: string | undefined) =>
      start(name, 'login', redirectTo, null, cookie),

    link: (name: string, userId: string, redirectTo: string | undefined, cookie: string | undefined) =>
      start(name, 'link', redirectTo, userId, cookie),

    /**
     * `GET /auth/oauth/{provider}/callback`: where to send the browser. A state that is unknown, used, expired,
     * of another provider or of another browser goes to the root of `public_url` (no stored `redirect_to` is
     * trusted then); anything after goes to the flow's `redirect_to` with `#svc_code`, `#svc_linked` or
     * `#svc_error`.
     */
    async callback(
      name: string,
      query: Record<string, string>,
      cookieHeader: string | undefined,
    ): Promise<string> {
      client(name);
      const stateInvalid = `${publicUrl}/${fragment('svc_error', 'auth.oauth_state_invalid')}`;
      const state = query.state;
      if (!state) return stateInvalid;
      const flow = await flows.takeState(state);
      const binding = cookieValue(cookieHeader, BINDING_COOKIE);
      if (!flow || flow.provider !== name || !binding || digest(binding) !== flow.browser)
        return stateInvalid;
      const back = target(flow.redirectTo);
      try {
        if (query.error !== undefined) {
          throw new SvcError(
            query.error === 'access_denied' ? 'auth.oauth_denied' : 'auth.oauth_provider_error',
          );
        }
        const identity = await client(name).complete(query, {
          state,
          codeVerifier: flow.codeVerifier,
          nonce: flow.nonce,
        });
        const outcome = await linking.apply({
          entry: flow.purpose,
          provider: name,
          identity,
          boundUser: flow.userId,
        });
        if (outcome.kind === 'linked') return `${back}${fragment('svc_linked', name)}`;
        // SPEC-3 section 1: refused for inactive users and while the account is locked.
        const user = outcome.user;
        if (!user.isActive || (user.lockedUntil && user.lockedUntil.getTime() > now().getTime())) {
          throw new SvcError('auth.oauth_login_failed');
        }
        await store.recordUse(outcome.identity.id, identity.email, now());
        const code = await flows.putCode({
          userId: user.id,
          identityId: outcome.identity.id,
          provider: name,
          issuer: identity.issuer,
          subject: identity.subject,
        });
        return `${back}${fragment('svc_code', code)}`;
      } catch (error) {
        if (!(error instanceof SvcError)) throw error;
        return `${back}${fragment('svc_error', error.code)}`;
      }
    },

    /**
     * `POST /auth/oauth/exchange`: the login a `#svc_code` stands for, through the linking rules again (the
     * identity must still be the code's user's), with the rules of every login: `auth_rate_limit`, inactive and
     * locked accounts refused (401 `auth.oauth_login_failed`), MFA, `lastLoginAt`, `login`, a session.
     */
    async exchange(code: string, clientIp: string): Promise<ExchangeResult> {
      await ports.find('rateLimiter')?.hit(clientIp, EXCHANGE_RATE_LIMIT_SCOPE);
      const pending = await flows.takeCode(code);
      if (!pending) throw new SvcError('auth.oauth_code_invalid');
      const failed = () => new SvcError('auth.oauth_login_failed');
      const outcome = await linking.apply({
        entry: 'exchange',
        provider: pending.provider,
        identity: { issuer: pending.issuer, subject: pending.subject, email: null, emailVerified: false },
        boundUser: pending.userId,
      });
      const user = outcome.user;
      if (!user.isActive) throw failed();
      if (settings.require_verified_email && !user.isSuperuser && !user.emailVerifiedAt) {
        // SPEC-2 "Email verification", as for passwords and passkeys.
        throw new SvcError('auth.email_unverified');
      }
      const guard = ports.get('loginGuard');
      const authUser = toAuthUser(user);
      const secondFactor = settings.mfa_enabled ? ports.find('secondFactor') : undefined;
      if (secondFactor) {
        if (user.lockedUntil && user.lockedUntil.getTime() > now().getTime()) throw failed();
        // SPEC-3 section 1: a social login is a first factor.
        // SPEC-3 §3: the step's completed login still reports method `oauth`.
        const mfaToken = await secondFactor.startChallenge(authUser, undefined, 'oauth');
        if (mfaToken) return { mfa_required: true, mfa_token: mfaToken };
      }
      // SPEC "Account login lock": refused while locked; the slot is held until the login completes.
      const admission = await guard.admitAttempt(user.id);
      if (!admission.admitted) throw failed();
      // SPEC-3 §3: the `user.login` event says the login went through a provider.
      return guard.completeLogin(authUser, undefined, admission, 'oauth').catch((error: unknown) => {
        throw error instanceof SvcError && error.code === 'mfa.challenge_not_found' ? failed() : error;
      });
    },

    async identities(userId: string) {
      return (await store.list(userId)).map(toIdentityOut);
    },

    /**
     * Unlinks an identity (SPEC-3 section 1): 404 `auth.identity_not_found` for an unknown id or another user's,
     * 400 `auth.last_login_method` when the account would keep no password, passkey or other identity.
     */
    async unlink(userId: string, identityId: string): Promise<void> {
      const removed = await unlinkIdentity(store, userId, identityId, ports.get('webhooks'));
      ports.get('events').emit('identity_unlinked', { userId, provider: removed.provider });
    },
  };
}

export type SocialLoginService = ReturnType<typeof createSocialLoginService>;
