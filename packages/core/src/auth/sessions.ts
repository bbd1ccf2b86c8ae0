import type { Settings } from '../kernel/config/schema.js';
import { SvcError } from '../kernel/errors/svc-error.js';
import { isUuid } from '../kernel/identity.js';
import type { ModulePorts } from '../kernel/module.js';
import { currentClient, currentRoute } from '../kernel/log/context.js';
import { impersonationEndEntry } from './impersonation-end.js';
import { sanitizeText } from '../kernel/sanitize.js';
import {
  SESSION_IP_MAX_LENGTH,
  SESSION_PURGE_MARGIN_MS,
  SESSION_USER_AGENT_MAX_LENGTH,
} from './constants.js';
import type { EndedSession, LoginSession, SessionClient, SessionRow, SessionStore } from './session-store.js';

/** A session as `GET /auth/sessions` shows it (SPEC-2 "Sessions"). */
export interface SessionView {
  id: string;
  createdAt: string;
  lastUsedAt: string;
  userAgent: string;
  ip: string;
  current: boolean;
  /** SPEC-3 §4: on an impersonation session. */
  impersonatedBy?: { id: string; username: string };
}

export interface SessionServiceDeps {
  settings: Settings;
  sessions: SessionStore;
  /** Whether a user exists (the admin routes answer 404 `user.not_found` otherwise). */
  userExists(userId: string): Promise<boolean>;
  /** The username of a user id (an activity entry's `username`), null when gone. */
  usernameOf(userId: string): Promise<string | null>;
  /**
   * The event sink; the personal tokens' revoker for a revocation that includes them; the activity log's
   * writer (SPEC-3 §4: an impersonation ended along with every session of its user).
   */
  ports: ModulePorts<never, never, 'personalTokenRevoker' | 'activity'>;
  now: () => Date;
}

/**
 * The client of the current request as a session records it: the address after the proxy rules, and the
 * user agent sanitised like activity log text (SPEC-2 "Sessions": at most 255 characters).
 */
export function sessionClient(): SessionClient {
  const { ip, userAgent } = currentClient();
  return {
    ip: ip.slice(0, SESSION_IP_MAX_LENGTH),
    userAgent: sanitizeText(userAgent, SESSION_USER_AGENT_MAX_LENGTH),
  };
}

function toView(
  row: SessionRow & { impersonatorName?: string | null },
  current: string | undefined,
): SessionView {
  return {
    id: row.id,
    createdAt: row.createdAt.toISOString(),
    lastUsedAt: row.lastUsedAt.toISOString(),
    userAgent: row.userAgent,
    ip: row.ip,
    current: row.id === current,
    // SPEC-3 §4: an impersonation session is listed with its superuser.
    ...(row.impersonatorId
      ? { impersonatedBy: { id: row.impersonatorId, username: row.impersonatorName ?? '' } }
      : {}),
  };
}

/**
 * Sessions (SPEC-2 "Sessions"): what a user and a superuser see and end. Ending one marks it revoked (the
 * guard's user query refuses its access tokens from that moment, on every host: the state is read in the
 * same statement as the user), deletes its refresh records, closes its event sockets (4401, every process
 * through the events bus) and emits `session_revoked`.
 */
export function createSessionService(deps: SessionServiceDeps) {
  const { settings, sessions, ports, now } = deps;

  function ended(userId: string, ids: string[]): void {
    if (ids.length === 0) return;
    const events = ports.get('events');
    events.sessionsEnded?.(userId, ids);
    for (const sessionId of ids) events.emit('session_revoked', { userId, sessionId });
  }

  async function existingUser(userId: string): Promise<void> {
    if (!isUuid(userId) || !(await deps.userExists(userId))) {
      throw new SvcError('user.not_found', { status: 404, loc: ['path', 'user_id'] });
    }
  }

  /** Ends sessions with their `session.revoked` webhook events in the same transaction (SPEC-3 §3). */
  function revokeRecorded(
    userId: string,
    which: { only?: string; except?: string } = {},
  ): Promise<EndedSession[]> {
    const webhooks = ports.get('webhooks');
    return sessions.end(
      userId,
      now(),
      which,
      webhooks.enabled
        ? async (tx, ids) => {
            for (const sessionId of ids) await webhooks.record(tx, 'session.revoked', { userId, sessionId });
          }
        : undefined,
    );
  }

  /**
   * SPEC-3 §4: the impersonations among the sessions just ended (live ones: an expired impersonation ended by
   * its expiry, which is not recorded), each told to superusers with `impersonation_ended`. Only the statement
   * that marked a session returns it (session-store.ts `end`), so each end is told once. Their superusers.
   */
  function impersonationsEnded(userId: string, rows: EndedSession[]): string[] {
    const impersonators: string[] = [];
    for (const row of rows) {
      if (!row.impersonatorId || !row.live) continue;
      ports.get('events').emit('impersonation_ended', { userId, impersonatorId: row.impersonatorId });
      impersonators.push(row.impersonatorId);
    }
    return impersonators;
  }

  /**
   * SPEC-3 §4: impersonations ended by a request that ended every session of their user for another reason
   * (a password change, a deactivation, a logout of every login) are recorded by an entry of their own, as
   * the end by the superuser's demotion is: the user, the superuser as `impersonator_id`, the request's method
   * and path. (The session routes, whose very action is the revocation, describe their own entry instead.)
   */
  async function recordImpersonationEnds(userId: string, impersonators: string[]): Promise<void> {
    const activity = ports.find('activity');
    if (impersonators.length === 0 || !activity?.record) return;
    const route = currentRoute() ?? { method: 'CLI', path: 'svc' };
    const username = await deps.usernameOf(userId);
    for (const impersonatorId of impersonators) {
      await activity.record(
        impersonationEndEntry({ userId, username, impersonatorId, ...route, why: 'revocation' }),
      );
    }
  }

  /**
   * Ends several sessions of the user (all, or all but one); true when impersonation sessions were among them,
   * whose ends are told as a single revocation's are (SPEC-3 §4: revoking the session ends it).
   */
  async function revokeSeveral(userId: string, which: { except?: string }): Promise<boolean> {
    const rows = await revokeRecorded(userId, which);
    ended(
      userId,
      rows.map((row) => row.id),
    );
    return impersonationsEnded(userId, rows).length > 0;
  }

  /** Ends one session; the superuser's id when it was an impersonation (SPEC-3 §4), else null. */
  async function revokeOne(userId: string, sessionId: string): Promise<string | null> {
    // SPEC-3 §4: revoking an impersonation session ends the impersonation (its event names the superuser).
    const rows = isUuid(sessionId) ? await revokeRecorded(userId, { only: sessionId }) : [];
    if (rows.length === 0) throw new SvcError('auth.session_not_found');
    ended(
      userId,
      rows.map((row) => row.id),
    );
    return impersonationsEnded(userId, rows)[0] ?? null;
  }

  return {
    /**
     * What a completing login writes of its session, in the login's own statement (auth/store.ts
     * `completeLogin`): the client of the request, and the cutoff of the housekeeping that deletes the
     * user's older sessions whose refresh tokens have all expired.
     */
    loginSession(at: Date): LoginSession {
      const lifetimeMs = settings.refresh_token_expire_days * 86_400_000;
      return {
        ...sessionClient(),
        purgeBefore: new Date(at.getTime() - lifetimeMs - SESSION_PURGE_MARGIN_MS),
      };
    },
    /** Whether session `id` of the user is still active (event sockets check it). */
    isActive(userId: string, id: string): Promise<boolean> {
      return isUuid(id) ? sessions.isActive(id, userId) : Promise.resolve(false);
    },
    /** A refresh of session `id`: false when it is revoked (or another user's). */
    touch(id: string, userId: string, at: Date): Promise<boolean> {
      return sessions.touch(id, userId, at, sessionClient());
    },
    /**
     * Ends sessions by the rules of {@link createSessionService}; `notify` false for password changes and
     * deactivations, whose own notice closes every socket of the user. An impersonation among them ends with
     * its event and its own activity entry (SPEC-3 §4; `recordImpersonationEnds`).
     */
    async revoke(
      userId: string,
      which: { only?: string; except?: string } = {},
      notify = true,
    ): Promise<string[]> {
      const rows = notify ? await revokeRecorded(userId, which) : await sessions.end(userId, now(), which);
      const ids = rows.map((row) => row.id);
      if (notify) ended(userId, ids);
      await recordImpersonationEnds(userId, impersonationsEnded(userId, rows));
      return ids;
    },

    /** `GET /auth/sessions` (and the account export): newest `lastUsedAt` first, the caller's flagged. */
    async list(userId: string, current?: string): Promise<SessionView[]> {
      return (await sessions.listActive(userId, now())).map((row) => toView(row, current));
    },
    /** `DELETE /auth/sessions/{session_id}`: 404 `auth.session_not_found` unless an active session of the caller. */
    revokeOwn: revokeOne,
    /**
     * `POST /auth/sessions/revoke-others`: every session of the caller but `current`; true when an
     * impersonation was among them.
     */
    revokeOthers(userId: string, current: string | undefined): Promise<boolean> {
      return revokeSeveral(userId, current ? { except: current } : {});
    },

    /** `GET /admin/user/{user_id}/sessions`. */
    async adminList(userId: string): Promise<SessionView[]> {
      await existingUser(userId);
      return (await sessions.listActive(userId, now())).map((row) => toView(row, undefined));
    },
    /**
     * `DELETE /admin/user/{user_id}/sessions`; `includeTokens` deletes the personal tokens too (SPEC-3 §7 rule
     * 2: revoking everything means everything).
     */
    async adminRevokeAll(userId: string, includeTokens = false): Promise<boolean> {
      await existingUser(userId);
      const impersonationEnded = await revokeSeveral(userId, {});
      if (includeTokens) await ports.find('personalTokenRevoker')?.deleteAll(userId);
      return impersonationEnded;
    },
    /** `DELETE /admin/user/{user_id}/sessions/{session_id}`. */
    async adminRevoke(userId: string, sessionId: string): Promise<string | null> {
      await existingUser(userId);
      return revokeOne(userId, sessionId);
    },
  };
}

export type SessionService = ReturnType<typeof createSessionService>;
