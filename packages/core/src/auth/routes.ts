import { defineRouter, type Router } from '../kernel/router.js';
import type { AuthUser } from '../kernel/ports.js';
import {
  CurrentUserOut,
  LoginForm,
  LoginOut,
  LogoutBody,
  PasswordChangeBody,
  RefreshBody,
  RegisterBody,
  TokenOut,
  toUserOut,
  UserOut,
  UserPatchBody,
} from './schemas.js';
import type { AuthService } from './service.js';
import type { Impersonation } from './impersonation.js';
import { isUsableHash } from './passwords.js';

/** The `auth` router (SPEC "Authentication routes", except the settings routes). */
export function createAuthRouter(service: AuthService, impersonation: Impersonation): Router {
  const auth = defineRouter({ prefix: '/auth', name: 'auth', tags: ['auth'] });

  auth.post(
    '/token',
    {
      public: true,
      summary: 'Log in (OAuth2 password flow)',
      bodyType: 'form',
      body: LoginForm,
      response: LoginOut,
      envelope: 'auth-token',
    },
    (ctx) => service.login({ username: ctx.body.username, password: ctx.body.password, ip: ctx.clientIp }),
  );

  auth.post(
    '/refresh-token',
    {
      public: true,
      summary: 'Exchange a refresh token',
      allowPersonalToken: false, // SPEC-2 "Personal access tokens": a credential route
      body: RefreshBody,
      response: TokenOut,
      envelope: 'auth-token',
    },
    (ctx) => service.refresh(ctx.body.refresh_token),
  );

  auth.post(
    '/logout',
    {
      summary: 'Log out (revoke this login, or all logins)',
      body: LogoutBody,
      status: 204,
      allowPersonalToken: false, // SPEC-2 "Personal access tokens": a credential route
      allowImpersonation: true, // SPEC-3 §4: ends the impersonation session only
    },
    async (ctx) => {
      const user = ctx.user;
      // SPEC-3 §4: with or without a body, an impersonation's logout ends that session only.
      if (user.impersonatorId === undefined) return service.logout(user, ctx.body.refresh_token);
      ctx.describeActivity('impersonation ended by logout');
      await impersonation.end({ ...user, impersonatorId: user.impersonatorId });
    },
  );

  auth.post(
    '/register',
    { public: true, summary: 'Register an account', body: RegisterBody, response: UserOut, status: 201 },
    async (ctx) => toUserOut(await service.register({ ...ctx.body, ip: ctx.clientIp })),
  );

  auth.get('/user', { summary: 'The current user', response: CurrentUserOut }, async (ctx) => {
    // docs/performance.md: the guard loaded the caller and their permissions in this request already; the profile query
    // runs only when it did not (the swagger_noauth superuser).
    const user = ctx.user as AuthUser & { permissions?: string[] };
    // SPEC-3 §4: while impersonating, who is acting (one lookup, on impersonation requests only).
    const impersonatedBy = await impersonation.impersonatedBy(user);
    const extra = impersonatedBy ? { impersonatedBy } : {};
    if (user.permissions && user.hasPassword !== undefined)
      return { ...toUserOut(user), permissions: user.permissions, hasPassword: user.hasPassword, ...extra };
    const row = await service.profile(user.id);
    return {
      ...toUserOut(row),
      permissions: row.permissions,
      hasPassword: isUsableHash(row.passwordHash),
      ...extra,
    };
  });

  auth.patch(
    '/user',
    {
      summary: 'Update the current user',
      body: UserPatchBody,
      response: CurrentUserOut,
      // SPEC-2 "Personal access tokens": the email-change route. The whole route, not only an email change:
      // a token acts for machines, which have no profile to edit.
      allowPersonalToken: false,
    },
    async (ctx) => {
      const row = await service.updateProfile(ctx.user.id, ctx.body);
      return { ...toUserOut(row), permissions: row.permissions, hasPassword: isUsableHash(row.passwordHash) };
    },
  );

  auth.post(
    '/user/password',
    {
      summary: 'Change the own password',
      body: PasswordChangeBody,
      status: 204,
      allowPersonalToken: false, // SPEC-2 "Personal access tokens": a credential route
    },
    async (ctx) => service.changePassword(ctx.user.id, ctx.body),
  );

  return auth;
}
