import {
  clearedCookieHeaders,
  cookieNames,
  isCrossSite,
  newCsrfToken,
  passesCsrf,
  readCookie,
  sessionCookieHeaders,
  wantsCookieSession,
  type SiteHeaders,
} from '../kernel/browser-session.js';
import type { Settings } from '../kernel/config/schema.js';
import { SvcError } from '../kernel/errors/svc-error.js';
import type { BrowserSessions, IssuedLogin, TokenRouteContext } from '../kernel/ports.js';
import { defineRouter, type Router } from '../kernel/router.js';
import { LoginForm } from './schemas.js';
import { CookieLoginOut, CookieSessionOut } from './cookie-schemas.js';
import type { AuthService } from './service.js';
import type { Impersonation } from './impersonation.js';

// SPEC-3 §5 "Browser sessions (cookies)": the routes `/auth/session` and the cookie answer every
// token-issuing route shares (the `browserSessions` port). docs/browser-sessions.md.

/** The request as the cookie rules read it. */
const siteHeaders = (ctx: TokenRouteContext) => ctx.headers as SiteHeaders;

export function createBrowserSessions(deps: { settings: Settings; service: AuthService }) {
  const { settings, service } = deps;

  /**
   * Sets the cookies of a token pair and answers `{user}` as `GET /auth/user` shows it: the user and their
   * permissions come from the new access token by the guard's own query.
   */
  async function answerWithCookies(
    ctx: TokenRouteContext,
    pair: { access_token: string; refresh_token?: string },
  ): Promise<{ user: unknown }> {
    const user = await service.authenticator.authenticate(pair.access_token, { withPermissions: true });
    ctx.setHeader(
      'Set-Cookie',
      sessionCookieHeaders(settings, {
        accessToken: pair.access_token,
        accessMaxAge: settings.access_token_expire_minutes * 60,
        ...(pair.refresh_token !== undefined
          ? { refreshToken: pair.refresh_token, refreshMaxAge: settings.refresh_token_expire_days * 86_400 }
          : {}),
        csrfToken: newCsrfToken(),
      }),
    );
    ctx.setEnvelope(true);
    return { user: service.currentUserOut(user) };
  }

  const port: BrowserSessions = {
    async issue(ctx, login) {
      if (!wantsCookieSession(siteHeaders(ctx), settings)) return login();
      // No cross-site login: a login sets cookies, so it must come from a trusted origin.
      if (isCrossSite(siteHeaders(ctx), settings)) throw new SvcError('auth.csrf_failed');
      const result: IssuedLogin = await login();
      if ('mfa_required' in result) {
        ctx.setEnvelope(true);
        return result;
      }
      return answerWithCookies(ctx, result);
    },
  };

  return { port, answerWithCookies };
}

export type BrowserSessionsImpl = ReturnType<typeof createBrowserSessions>;

/** The cookie session routes (router name `session`), mounted while `cookie_sessions_enabled`. */
export function createCookieSessionRouter(
  settings: Settings,
  service: AuthService,
  cookies: BrowserSessionsImpl,
  impersonation: Impersonation,
): Router {
  // SPEC-3 preamble: personal access tokens are refused on the cookie session routes.
  const router = defineRouter({
    prefix: '/auth',
    name: 'session',
    tags: ['auth'],
    allowPersonalToken: false,
  });

  router.post(
    '/session',
    {
      public: true,
      summary: 'Log in a browser session (cookies)',
      description:
        'Form or JSON `username`, `password`. 200 `{user}` setting the session, refresh and CSRF cookies; or ' +
        '`{mfa_required, mfa_token}` setting none (complete with `POST /mfa/verify` and `X-Svc-Session: ' +
        'cookie`). 401 `auth.invalid_credentials` as `POST /auth/token`; 403 `auth.csrf_failed` from an ' +
        'untrusted origin (docs/browser-sessions.md).',
      body: LoginForm,
      response: CookieLoginOut,
      envelope: true,
    },
    async (ctx) => {
      if (isCrossSite(siteHeaders(ctx), settings)) throw new SvcError('auth.csrf_failed');
      const result = await service.login({
        username: ctx.body.username,
        password: ctx.body.password,
        ip: ctx.clientIp,
      });
      if ('mfa_required' in result) return result;
      return cookies.answerWithCookies(ctx, result);
    },
  );

  router.post(
    '/session/refresh',
    {
      public: true,
      summary: 'Refresh a browser session (cookies)',
      description:
        'The refresh cookie, rotated as `POST /auth/refresh-token` rotates (same reuse and grace rules); ' +
        'answers `{user}` and sets new cookies. 403 `auth.csrf_failed` without a trusted origin and an ' +
        '`X-CSRF-Token` equal to the CSRF cookie; 401 `auth.refresh_token_invalid` without the cookie.',
      response: CookieSessionOut,
      envelope: true,
    },
    async (ctx) => {
      if (!passesCsrf(siteHeaders(ctx), settings)) throw new SvcError('auth.csrf_failed');
      const name = cookieNames(settings).refresh;
      const token = readCookie(ctx.headers.cookie, name);
      if (token === undefined) throw new SvcError('auth.refresh_token_invalid', { loc: ['cookie', name] });
      return cookies.answerWithCookies(ctx, await service.refresh(token));
    },
  );

  router.delete(
    '/session',
    {
      summary: 'End the browser session (cookies)',
      description:
        'Ends the session of the session cookie as `POST /auth/logout` with its refresh token does, and ' +
        'clears the cookies. 403 `auth.csrf_failed` as every unsafe cookie request.',
      status: 204,
      allowImpersonation: true,
    },
    async (ctx) => {
      const user = ctx.user;
      if (user.impersonatorId !== undefined) {
        // SPEC-3 §4: the end by logout is recorded, as at `POST /auth/logout`.
        ctx.describeActivity('impersonation ended by logout');
        await impersonation.end({ ...user, impersonatorId: user.impersonatorId });
      } else await service.endSession(user);
      ctx.setHeader('Set-Cookie', clearedCookieHeaders(settings));
    },
  );

  return router;
}
