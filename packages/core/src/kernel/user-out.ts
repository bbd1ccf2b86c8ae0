import { z } from 'zod';
import type { StoredUserFields } from './identity.js';

/** Longest password accepted anywhere: longer inputs only cost hashing time (the SPEC sets no maximum). */
export const PASSWORD_MAX_LENGTH = 1024;

/**
 * The user as clients see it (SPEC "User": camelCase, timestamps ISO 8601, no secrets). One shape for every
 * route that returns a user (own profile, registration, admin routes).
 */
export const UserOut = z.object({
  id: z.string(),
  username: z.string(),
  email: z.string().nullable(),
  firstName: z.string(),
  lastName: z.string(),
  isActive: z.boolean(),
  isStaff: z.boolean(),
  isSuperuser: z.boolean(),
  emailVerifiedAt: z.string().nullable().describe('ISO 8601'),
  lastLoginAt: z.string().nullable().describe('ISO 8601'),
  createdAt: z.string().describe('ISO 8601'),
});
export type UserOut = z.infer<typeof UserOut>;

/** The stored user fields the mapper reads (a table row or an `AuthUser`). */
export type UserLike = StoredUserFields;

const iso = (date: Date | null | undefined) => (date ? date.toISOString() : null);

/**
 * A user in its public JSON shape; the password hash, lock state and `password_changed_at` never leave.
 * @example return toUserOut(row);
 */
export function toUserOut(row: UserLike): UserOut {
  // The fields of toAuthUser (kernel/identity.ts) in its order, written out instead of copying its result and
  // dropping `passwordChangedAt` with a rest spread: every user response goes through here (GET /auth/user,
  // docs/performance.md). Only the timestamps change form; the UserOut type keeps the two lists equal.
  return {
    id: row.id,
    username: row.username,
    email: row.email ?? null,
    firstName: row.firstName,
    lastName: row.lastName,
    isActive: row.isActive,
    isStaff: row.isStaff,
    isSuperuser: row.isSuperuser,
    emailVerifiedAt: iso(row.emailVerifiedAt),
    lastLoginAt: iso(row.lastLoginAt),
    createdAt: row.createdAt.toISOString(),
  };
}
