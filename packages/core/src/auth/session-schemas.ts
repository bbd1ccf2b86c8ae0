import { z } from 'zod';
import { UserIdParam } from '../kernel/identity.js';

/** A session as the session routes show it (SPEC-2 "Sessions"). */
export const SessionOut = z.object({
  id: z.uuid(),
  createdAt: z.iso.datetime(),
  lastUsedAt: z.iso.datetime().describe('The login, or the last refresh of its tokens'),
  userAgent: z
    .string()
    .describe('As the client sent it at login, control characters replaced, at most 255 characters'),
  ip: z.string().describe('The client address at login, after the proxy rules'),
  current: z.boolean().describe("Whether it is the session of the request's access token"),
  impersonatedBy: z
    .object({ id: z.uuid(), username: z.string() })
    .optional()
    .describe('SPEC-3 §4: present on an impersonation session: the superuser acting as the user'),
});

/** Newest `lastUsedAt` first. */
export const SessionListOut = z.array(SessionOut);

// A session id parses like a user id (a UUID in any letter case is compared in its stored form); anything
// else reaches the service, which answers 404 `auth.session_not_found` rather than a 422.
export const SessionIdParams = z.object({ session_id: UserIdParam });
export const UserSessionParams = z.object({ user_id: UserIdParam });
export const UserSessionIdParams = z.object({ user_id: UserIdParam, session_id: UserIdParam });

/**
 * `DELETE /admin/user/{user_id}/sessions` (SPEC-3 §7 rule 2): `includeTokens=true` deletes the user's personal
 * access tokens as well.
 */
export const RevokeAllQuery = z.object({
  includeTokens: z
    .enum(['true', 'false'])
    .default('false')
    .transform((value) => value === 'true')
    .describe("Also delete the user's personal access tokens"),
});
