import { defineRouter, type Router } from '../kernel/router.js';
import {
  RevokeAllQuery,
  SessionIdParams,
  SessionListOut,
  UserSessionIdParams,
  UserSessionParams,
} from './session-schemas.js';
import type { SessionService } from './sessions.js';

/**
 * The caller's sessions (SPEC-2 "Sessions"; router name `sessions`). A personal access token is refused here
 * (SPEC-2 "Personal access tokens": session routes are credential routes).
 */
export function createSessionRouter(sessions: SessionService): Router {
  const router = defineRouter({ prefix: '/auth', name: 'sessions', tags: ['auth'] });

  router.get(
    '/sessions',
    {
      summary: 'My active sessions',
      description: 'One per login, newest `lastUsedAt` first; `current` marks the one of this access token.',
      response: SessionListOut,
      allowPersonalToken: false,
    },
    (ctx) => sessions.list(ctx.user.id, ctx.user.sessionId),
  );

  router.post(
    '/sessions/revoke-others',
    {
      summary: 'End every session but this one',
      description:
        'Their refresh and access tokens stop working at once and their event sockets close (4401).',
      status: 204,
      allowPersonalToken: false,
    },
    async (ctx) => {
      // SPEC-3 §4: an impersonation among them ends by revocation, recorded as such.
      if (await sessions.revokeOthers(ctx.user.id, ctx.user.sessionId))
        ctx.describeActivity('impersonation ended by revocation');
    },
  );

  router.delete(
    '/sessions/:session_id',
    {
      summary: 'End one of my sessions',
      description:
        'Its refresh tokens (401 `auth.refresh_token_revoked`) and access tokens (401 `auth.session_revoked`) ' +
        'stop working at once and its event sockets close (4401). 404 `auth.session_not_found` for an unknown ' +
        "id or another user's.",
      params: SessionIdParams,
      status: 204,
      allowPersonalToken: false,
    },
    async (ctx) => {
      // SPEC-3 §4: the end of an impersonation by revocation is recorded as such.
      if (await sessions.revokeOwn(ctx.user.id, ctx.params.session_id))
        ctx.describeActivity('impersonation ended by revocation');
    },
  );

  return router;
}

/**
 * A user's sessions for superusers (SPEC-2 "Sessions"; router name `sessions-admin`). Session routes refuse
 * personal access tokens (SPEC-2 "Personal access tokens"), these too: ending logins is a login's business.
 */
export function createSessionAdminRouter(sessions: SessionService): Router {
  const admin = defineRouter({
    prefix: '/admin/user',
    name: 'sessions-admin',
    tags: ['users'],
    requireSuperuser: true,
    allowPersonalToken: false,
  });

  admin.get(
    '/:user_id/sessions',
    {
      summary: "A user's active sessions",
      description: 'Newest `lastUsedAt` first. 404 `user.not_found`.',
      params: UserSessionParams,
      response: SessionListOut,
    },
    (ctx) => sessions.adminList(ctx.params.user_id),
  );

  admin.delete(
    '/:user_id/sessions',
    {
      summary: "End all of a user's sessions",
      description:
        'Every login of the user ends at once (tokens refused, event sockets closed); with ' +
        '`includeTokens=true` their personal access tokens are deleted too. 404 `user.not_found`.',
      params: UserSessionParams,
      query: RevokeAllQuery,
      status: 204,
      logAs: 'ended the sessions of {user_id}',
    },
    async (ctx) => {
      // SPEC-3 §4: an impersonation among them ends by revocation, recorded as such.
      if (await sessions.adminRevokeAll(ctx.params.user_id, ctx.query.includeTokens))
        ctx.describeActivity(
          `ended the sessions of ${ctx.params.user_id}; impersonation ended by revocation`,
        );
    },
  );

  admin.delete(
    '/:user_id/sessions/:session_id',
    {
      summary: "End one of a user's sessions",
      description: "404 `user.not_found`; 404 `auth.session_not_found` for an unknown id or another user's.",
      params: UserSessionIdParams,
      status: 204,
      logAs: 'ended session {session_id} of {user_id}',
    },
    async (ctx) => {
      // SPEC-3 §4: the end of an impersonation by revocation is recorded as such.
      if (await sessions.adminRevoke(ctx.params.user_id, ctx.params.session_id))
        ctx.describeActivity('impersonation ended by revocation');
    },
  );

  return admin;
}
