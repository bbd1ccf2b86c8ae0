import { defineRouter, type Router } from '../kernel/router.js';
import {
  TokenCreateBody,
  TokenCreatedOut,
  TokenIdParams,
  TokenListOut,
  UserIdParams,
  UserTokenParams,
} from './schemas.js';
import type { PersonalTokenService } from './service.js';

// SPEC-2 "Personal access tokens": the token routes are credential routes: a personal token is refused on
// every one of them (403 `access.token_not_allowed`), so no token mints, lists or deletes tokens.

/** `/auth/tokens` (router name `personal-tokens` for `disable_core_routers`). */
export function createPersonalTokenRouter(service: PersonalTokenService): Router {
  const tokens = defineRouter({
    prefix: '/auth',
    name: 'personal-tokens',
    tags: ['personal tokens'],
    allowPersonalToken: false,
  });
  tokens.post(
    '/tokens',
    {
      summary: 'Create a personal access token',
      description:
        'The token (`svc_pat_…`) is in this answer only. It acts as the caller with the permissions, staff and ' +
        'superuser status it names and the caller still holds. 422 `access.permission_not_held` with ' +
        '`params.permissions` naming what the caller lacks (codenames, `staff`, `superuser`); 422 ' +
        '`access.token_expiry_required` for `expiresInDays: null` unless a superuser; 403 ' +
        '`auth.reauthentication_required` unless the session’s login is recent; 409 `access.token_limit` at ' +
        '`personal_tokens_max_per_user` unexpired tokens.',
      body: TokenCreateBody,
      // SPEC-3 §7 rule 1: a token is a lasting credential: minted only soon after a login (a stolen access
      // token alone cannot turn itself into one).
      requireRecentLogin: true,
      response: TokenCreatedOut,
      status: 201,
      logAs: 'created a personal access token',
    },
    (ctx) => service.create(ctx.user, ctx.body),
  );
  tokens.get('/tokens', { summary: 'The own personal access tokens', response: TokenListOut }, (ctx) =>
    service.list(ctx.user.id),
  );
  tokens.delete(
    '/tokens/:token_id',
    {
      summary: 'Delete a personal access token',
      description:
        'It stops working at once. 404 `access.token_not_found` for an unknown id or another user’s.',
      params: TokenIdParams,
      status: 204,
      logAs: 'deleted personal access token {token_id}',
    },
    (ctx) => service.remove(ctx.user.id, ctx.params.token_id),
  );
  return tokens;
}

/** `/admin/user/{user_id}/tokens` (router name `personal-tokens-admin`). */
export function createPersonalTokenAdminRouter(service: PersonalTokenService): Router {
  const admin = defineRouter({
    prefix: '/admin/user',
    name: 'personal-tokens-admin',
    tags: ['users'],
    requireSuperuser: true,
    allowPersonalToken: false,
  });
  admin.get(
    '/:user_id/tokens',
    {
      summary: "A user's personal access tokens",
      description: '404 `user.not_found` for an unknown user.',
      params: UserIdParams,
      response: TokenListOut,
    },
    (ctx) => service.listOfUser(ctx.params.user_id),
  );
  admin.delete(
    '/:user_id/tokens/:token_id',
    {
      summary: "Delete a user's personal access token",
      description:
        '404 `user.not_found` for an unknown user, `access.token_not_found` for a token not theirs.',
      params: UserTokenParams,
      status: 204,
      logAs: 'deleted personal access token {token_id} of {user_id}',
    },
    (ctx) => service.removeOfUser(ctx.params.user_id, ctx.params.token_id),
  );
  return admin;
}
