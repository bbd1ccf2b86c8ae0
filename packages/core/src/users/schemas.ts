import { z } from 'zod';
import { PaginationQuery, pageSchema } from '../kernel/pagination.js';
import { EMAIL_MAX_LENGTH, NAME_MAX_LENGTH } from './constants.js';

/** A user as the admin routes return it (SPEC "User", camelCase, no secrets). */
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

/** `data` of `GET /admin/user` (SPEC "Pagination contract"). */
export const UserPage = pageSchema(UserOut);

/** Query of `GET /admin/user`: the pagination parameters; `search` matches username, email, first and last name. */
export const UserListQuery = PaginationQuery;
export type UserListQuery = z.infer<typeof UserListQuery>;

/** Path of the single-user routes. */
export const UserIdParams = z.object({ user_id: z.string() });

/**
 * Body of `PATCH /admin/user/{user_id}` (SPEC "User administration"): only fields sent change; an empty
 * `email` clears it. The password policy is checked by the service (422 `auth.password_too_short`).
 */
export const UserPatchBody = z.object({
  email: z
    .union([z.literal(''), z.email().max(EMAIL_MAX_LENGTH)])
    .nullable()
    .optional(),
  firstName: z.string().trim().max(NAME_MAX_LENGTH).optional(),
  lastName: z.string().trim().max(NAME_MAX_LENGTH).optional(),
  password: z.string().optional(),
  isActive: z.boolean().optional(),
  isStaff: z.boolean().optional(),
  isSuperuser: z.boolean().optional(),
});
export type UserPatchBody = z.infer<typeof UserPatchBody>;

/** The stored user columns the mapper reads. */
export interface UserRow {
  id: string;
  username: string;
  email: string | null;
  firstName: string;
  lastName: string;
  isActive: boolean;
  isStaff: boolean;
  isSuperuser: boolean;
  emailVerifiedAt: Date | null;
  lastLoginAt: Date | null;
  createdAt: Date;
}

const iso = (value: Date | null): string | null => (value ? value.toISOString() : null);

/** Stored row → {@link UserOut}; the password hash, lock counters and `password_changed_at` never leave. */
export function toUserOut(row: UserRow): UserOut {
  return {
    id: row.id,
    username: row.username,
    email: row.email,
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
