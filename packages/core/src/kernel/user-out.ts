import { z } from 'zod';
import { toAuthUser, type StoredUserFields } from './identity.js';

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
  // toAuthUser (kernel/identity.ts) picks the fields without secrets; only the timestamps change form here.
  const {
    emailVerifiedAt,
    lastLoginAt,
    createdAt,
    passwordChangedAt: _changedAt,
    ...fields
  } = toAuthUser(row);
  return {
    ...fields,
    emailVerifiedAt: iso(emailVerifiedAt),
    lastLoginAt: iso(lastLoginAt),
    createdAt: createdAt.toISOString(),
  };
}
