import type { ActivityEntry } from '../kernel/ports.js';
import type { SessionStore } from './session-store.js';

// The end of impersonations outside the app (`svc users`), apart from the impersonation routes in
// impersonation.ts: a user command loads neither routers nor route compilation (packages/cli start-imports test).

/**
 * The activity entry of an impersonation's end (SPEC-3 §4), whatever ended it: the impersonated user as the
 * user, the superuser as `impersonator_id`, the request (or command) that ended it as method and path, and why.
 */
export function impersonationEndEntry(end: {
  userId: string;
  username: string | null;
  impersonatorId: string;
  method: string;
  path: string;
  why: string;
}): ActivityEntry {
  return {
    userId: end.userId,
    username: end.username,
    impersonatorId: end.impersonatorId,
    method: end.method,
    path: end.path,
    statusCode: 200,
    description: `impersonation ended by ${end.why}`,
  };
}

/** What ended a superuser's impersonations (SPEC-3 §4): their demotion or their deactivation. */
export type ImpersonationEndCause = 'demotion' | 'deactivation';

/**
 * SPEC-3 §4 for a process without the app (`svc users update --no-superuser` / `--no-active`): ends the live
 * impersonation sessions of the superuser (the guard already refuses their tokens on every host, auth/
 * session-store.ts `sessionStateColumn`; this marks them ended, so the user's session list drops them) and
 * hands each end to `record` as its activity entry, named by the command. The ended sessions, with their users.
 */
export async function endImpersonationsByCommand(input: {
  sessions: SessionStore;
  /** The username of a user id (the entry's `username`). */
  usernameOf(userId: string): Promise<string | null>;
  superuserId: string;
  cause: ImpersonationEndCause;
  /** The command, recorded as the entry's path (its method is `CLI`). */
  command: string;
  record?(entry: ActivityEntry): Promise<void>;
}): Promise<{ id: string; userId: string }[]> {
  const rows = await input.sessions.revokeImpersonationsBy(input.superuserId, new Date());
  if (input.record) {
    for (const row of rows) {
      await input.record(
        impersonationEndEntry({
          userId: row.userId,
          username: await input.usernameOf(row.userId),
          impersonatorId: input.superuserId,
          method: 'CLI',
          path: input.command,
          why: `the superuser's ${input.cause}`,
        }),
      );
    }
  }
  return rows;
}
