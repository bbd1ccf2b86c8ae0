import type { IssueTokens } from '../kernel/browser-session.js';
import { SvcError } from '../kernel/errors/svc-error.js';
import { isUuid } from '../kernel/identity.js';
import { defineRouter, type HandlerContext, type Router } from '../kernel/router.js';
import {
  AdminIdentityParams,
  AdminUserParams,
  AuthorizeQuery,
  ExchangeBody,
  ExchangeOut,
  IdentityListOut,
  IdentityParams,
  LinkBody,
  LinkOut,
  ProviderListOut,
  ProviderParams,
} from './schemas.js';
import type { SocialLoginService } from './service.js';
import type { SocialLoginStore } from './store.js';

/** Sends the browser to `location` (302, no body). */
function redirect(ctx: Pick<HandlerContext, 'setHeader' | 'setStatus'>, location: string): undefined {
  ctx.setHeader('Location', location);
  ctx.setHeader('Cache-Control', 'no-store');
  // The fragment may carry a login code: no page it leads to sends it on.
  ctx.setHeader('Referrer-Policy', 'no-referrer');
  ctx.setStatus(302);
  return undefined;
}

/** The string values of a query (a repeated parameter is no value: the callback treats it as missing). */
function stringsOf(query: Record<string, unknown>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(query).filter((entry): entry is [string, string] => typeof entry[1] === 'string'),
  );
}

/** The public routes of social login (SPEC-3 section 1; router name `oauth`). */
export function createOAuthRouter(service: SocialLoginService, issue: IssueTokens): Router {
  const oauth = defineRouter({ prefix: '/auth/oauth', name: 'oauth', tags: ['social login'], public: true });
  oauth.get('/providers', { summary: 'The enabled sign-in providers', response: ProviderListOut }, () =>
    service.providers(),
  );
  oauth.post(
    '/exchange',
    {
      summary: 'Exchange the code of a social login',
      description:
        'The `#svc_code` of the callback for a token pair like `POST /auth/token` (not enveloped by default), or ' +
        '`{mfa_required, mfa_token}`. 400 `auth.oauth_code_invalid` for an unknown, used or expired code (60 ' +
        'seconds, once); 401 `auth.oauth_login_failed` when the account cannot log in any more.',
      body: ExchangeBody,
      response: ExchangeOut,
      envelope: 'auth-token',
    },
    // SPEC-3 §5: with `X-Svc-Session: cookie`, the cookies and `{user}` instead of the pair.
    (ctx) => issue(ctx, () => service.exchange(ctx.body.code, ctx.clientIp)),
  );
  oauth.get(
    '/:provider/authorize',
    {
      summary: 'Start a social login',
      description:
        '302 to the provider (authorization code, PKCE S256, `state`, and `nonce` for OpenID), with a cookie ' +
        'binding the flow to this browser. 400 `auth.oauth_redirect_invalid` for a `redirect_to` that is neither ' +
        'a relative path nor on an allowed origin; 404 `auth.oauth_provider_unknown`; 502 ' +
        '`auth.oauth_provider_error` when the provider is unreachable.',
      params: ProviderParams,
      query: AuthorizeQuery,
      status: 302,
    },
    async (ctx) => {
      const started = await service.authorize(ctx.params.provider, ctx.query.redirect_to, ctx.headers.cookie);
      ctx.setHeader('Set-Cookie', started.setCookie);
      return redirect(ctx, started.authorizationUrl);
    },
  );
  oauth.get(
    '/:provider/callback',
    {
      summary: 'The provider’s redirect back',
      description:
        '302 to `redirect_to` with `#svc_code=<code>` after a login, `#svc_linked=<provider>` after a link, ' +
        '`#svc_error=<error code>` on failure; to the root of `public_url` with ' +
        '`#svc_error=auth.oauth_state_invalid` for a state that is unknown, used, expired or of another browser.',
      params: ProviderParams,
      status: 302,
    },
    async (ctx) =>
      redirect(
        ctx,
        await service.callback(
          ctx.params.provider,
          stringsOf(ctx.query as Record<string, unknown>),
          ctx.headers.cookie,
        ),
      ),
  );
  return oauth;
}

/** The caller's identities and linking (SPEC-3 section 1; router name `identities`): credential routes. */
export function createIdentitiesRouter(service: SocialLoginService): Router {
  const router = defineRouter({ name: 'identities', tags: ['social login'], allowPersonalToken: false });
  router.post(
    '/auth/oauth/:provider/link',
    {
      summary: 'Start linking a provider to the caller’s account',
      description:
        '`{authorizationUrl}`: the same redirect as the authorize route, bound to the caller (and, by a cookie, ' +
        'to this browser). 403 `auth.reauthentication_required` unless the session’s login is recent.',
      params: ProviderParams,
      body: LinkBody,
      response: LinkOut,
      requireRecentLogin: true, // SPEC-3 §7 rule 1: a linked identity is a lasting credential
      logAs: 'started linking {provider}',
    },
    async (ctx) => {
      const started = await service.link(
        ctx.params.provider,
        ctx.user.id,
        ctx.body.redirectTo,
        ctx.headers.cookie,
      );
      ctx.setHeader('Set-Cookie', started.setCookie);
      ctx.setHeader('Cache-Control', 'no-store');
      return { authorizationUrl: started.authorizationUrl };
    },
  );
  router.get(
    '/auth/identities',
    { summary: 'The caller’s linked identities', response: IdentityListOut },
    (ctx) => service.identities(ctx.user.id),
  );
  router.delete(
    '/auth/identities/:identity_id',
    {
      summary: 'Unlink an identity',
      description:
        '404 `auth.identity_not_found` (also for another user’s); 400 `auth.last_login_method` when the account ' +
        'would keep no password, passkey or other identity.',
      params: IdentityParams,
      status: 204,
      logAs: 'unlinked identity {identity_id}',
    },
    (ctx) => service.unlink(ctx.user.id, ctx.params.identity_id),
  );
  return router;
}

/** A user's identities for superusers (SPEC-3 section 1; router name `identities-admin`). */
export function createAdminIdentitiesRouter(service: SocialLoginService, store: SocialLoginStore): Router {
  const router = defineRouter({
    prefix: '/admin/user',
    name: 'identities-admin',
    tags: ['social login'],
    requireSuperuser: true,
    allowPersonalToken: false,
  });
  const userOf = async (userId: string) => {
    const user = isUuid(userId) ? await store.user(userId) : undefined;
    if (!user) throw new SvcError('user.not_found', { status: 404, loc: ['path', 'user_id'] });
    return user;
  };
  router.get(
    '/:user_id/identities',
    { summary: 'A user’s linked identities', params: AdminUserParams, response: IdentityListOut },
    async (ctx) => service.identities((await userOf(ctx.params.user_id)).id),
  );
  router.delete(
    '/:user_id/identities/:identity_id',
    {
      summary: 'Unlink a user’s identity',
      description: 'The rules of `DELETE /auth/identities/{identity_id}`.',
      params: AdminIdentityParams,
      status: 204,
      logAs: 'unlinked identity {identity_id} of user {user_id}',
    },
    async (ctx) => service.unlink((await userOf(ctx.params.user_id)).id, ctx.params.identity_id),
  );
  return router;
}
