import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { Settings } from '../kernel/config/schema.js';
import { SvcError } from '../kernel/errors/svc-error.js';
import { isUuid, UserIdParam } from '../kernel/identity.js';
import type { ModulePorts } from '../kernel/module.js';
import type { AuthUser } from '../kernel/ports.js';
import { apiBase } from '../kernel/routes.js';
import { defineRouter, type Router } from '../kernel/router.js';
import { impersonationEndEntry, type ImpersonationEndCause } from './impersonation-end.js';
import type { SessionStore } from './session-store.js';
import { sessionClient } from './sessions.js';
import type { AuthStore } from './store.js';
import type { TokenSigner } from './tokens.js';

// SPEC-3 §4 "Impersonation": a superuser acts as a user in a session of its own, with an access token that
// names them in its `act` claim; docs/impersonation.md.

/** SPEC-3 §4: the reason, 1 to 500 characters. */
export const IMPERSONATION_REASON_MAX_LENGTH = 500;

export const ImpersonateBody = z.object({
  reason: z.string().trim().min(1).max(IMPERSONATION_REASON_MAX_LENGTH),
});
export const ImpersonateParams = z.object({ user_id: UserIdParam });
export const ImpersonationTokenOut = z.object({
  access_token: z.string(),
  token_type: z.literal('bearer'),
  expires_in: z.number().int().describe('Seconds: `impersonation_expire_minutes` × 60'),
});
/** `impersonatedBy` of `GET /auth/user` and `GET /auth/sessions` while impersonating. */
export const ImpersonatedByOut = z.object({ id: z.uuid(), username: z.string() });

export interface ImpersonationDeps {
  settings: Settings;
  store: AuthStore;
  sessions: SessionStore;
  signer: TokenSigner;
  /** The event sink; the activity log's writer (`activity`), when the audit module is there. */
  ports: ModulePorts<never, never, 'activity'>;
  now: () => Date;
}

/** Why a superuser's impersonations end at once (SPEC-3 §4). */
export type { ImpersonationEndCause } from './impersonation-end.js';

/** How the superuser lost the power, at the admin route `PATCH /admin/user/{user_id}`. */
export interface ImpersonationEndSource {
  cause: ImpersonationEndCause;
}

export function createImpersonation(deps: ImpersonationDeps) {
  const { settings, store, sessions, signer, ports, now } = deps;

  /** The session's end told to its sockets, the user and superusers (SPEC-2 "Sessions", SPEC-3 §4). */
  function ended(userId: string, sessionId: string, impersonatorId: string): void {
    const events = ports.get('events');
    events.sessionsEnded?.(userId, [sessionId]);
    events.emit('session_revoked', { userId, sessionId });
    events.emit('impersonation_ended', { userId, impersonatorId });
  }

  return {
    /** `POST /admin/user/{user_id}/impersonate`. */
    async start(superuser: AuthUser, userId: string) {
      const target = isUuid(userId) ? await store.userById(userId) : undefined;
      if (!target) throw new SvcError('user.not_found', { status: 404, loc: ['path', 'user_id'] });
      if (target.isSuperuser || target.isStaff || !target.isActive || target.id === superuser.id)
        throw new SvcError('user.cannot_impersonate');
      const at = now();
      const lifetime = settings.impersonation_expire_minutes * 60;
      const sessionId = randomUUID();
      await sessions.createImpersonation({
        id: sessionId,
        userId: target.id,
        impersonatorId: superuser.id,
        at,
        expiresAt: new Date(at.getTime() + lifetime * 1000),
        client: sessionClient(),
      });
      ports.get('events').emit('impersonation_started', { userId: target.id, impersonatorId: superuser.id });
      return {
        target,
        answer: {
          access_token: signer.signImpersonation(target.id, sessionId, superuser.id),
          token_type: 'bearer' as const,
          expires_in: lifetime,
        },
      };
    },

    /** `POST /auth/logout` (and `DELETE /auth/session`) of an impersonation session: that session only. */
    async end(user: AuthUser & { impersonatorId: string; sessionId?: string }): Promise<void> {
      if (!user.sessionId) return;
      const ids = await sessions.revoke(user.id, now(), { only: user.sessionId });
      if (ids.length > 0) ended(user.id, user.sessionId, user.impersonatorId);
    },

    /**
     * SPEC-3 §4: the superuser was demoted or deactivated: their impersonation sessions end (the guard
     * refuses their tokens already, on every host: auth/session-store.ts `sessionStateColumn`).
     */
    async endBy(superuserId: string, source: ImpersonationEndSource = { cause: 'demotion' }): Promise<void> {
      const rows = await sessions.revokeImpersonationsBy(superuserId, now());
      const activity = ports.find('activity');
      for (const row of rows) {
        ended(row.userId, row.id, superuserId);
        // SPEC-3 §4: the end by the superuser's demotion is recorded like the end by logout: the user as the
        // user, the superuser as `impersonator_id` (the demoting request's own entry names whoever demoted).
        if (activity?.record) {
          const target = await store.userById(row.userId);
          await activity.record(
            impersonationEndEntry({
              userId: row.userId,
              username: target?.username ?? null,
              impersonatorId: superuserId,
              method: 'PATCH',
              path: `${apiBase(settings)}/admin/user/${superuserId}`,
              why: `the superuser's ${source.cause}`,
            }),
          );
        }
      }
    },

    /** `impersonatedBy` of a request's user, or undefined. */
    async impersonatedBy(user: AuthUser): Promise<{ id: string; username: string } | undefined> {
      if (!user.impersonatorId) return undefined;
      const row = await store.userById(user.impersonatorId);
      return { id: user.impersonatorId, username: row?.username ?? '' };
    },
  };
}

export type Impersonation = ReturnType<typeof createImpersonation>;

/** The impersonation route (router name `impersonation`), mounted while `impersonation_enabled`. */
export function createImpersonationRouter(impersonation: Impersonation): Router {
  const router = defineRouter({
    prefix: '/admin/user',
    name: 'impersonation',
    tags: ['users'],
    requireSuperuser: true,
    // SPEC-3 preamble and §7 rule 3: a personal token never impersonates.
    allowPersonalToken: false,
  });
  router.post(
    '/:user_id/impersonate',
    {
      summary: 'Act as a user (impersonation)',
      description:
        'An access token of the user with `act: {sub: <superuser id>}` in a session of its own, valid ' +
        '`impersonation_expire_minutes`; no refresh token. Credential routes refuse it (403 ' +
        '`access.impersonation_forbidden`); `POST /auth/logout` ends it. 403 `user.cannot_impersonate` for a ' +
        'superuser, a staff user, an inactive user or the caller; 404 `user.not_found`.',
      params: ImpersonateParams,
      body: ImpersonateBody,
      response: ImpersonationTokenOut,
      envelope: 'auth-token',
    },
    async (ctx) => {
      const { target, answer } = await impersonation.start(ctx.user, ctx.params.user_id);
      // SPEC-3 §4: the start is recorded with the reason in its description.
      ctx.describeActivity(`impersonation of ${target.username} started: ${ctx.body.reason}`);
      return answer;
    },
  );
  return router;
}
