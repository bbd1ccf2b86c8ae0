import { z } from 'zod';
import { UserIdParam } from '../kernel/identity.js';
import { PASSWORD_MAX_LENGTH, UserOut } from '../kernel/user-out.js';
import { PaginationQuery, pageSchema } from '../kernel/pagination.js';
import { EMAIL_MAX_LENGTH, NAME_MAX_LENGTH } from './constants.js';

export { UserOut, toUserOut } from '../kernel/user-out.js';

/** `data` of `GET /admin/user` (SPEC "Pagination contract"). */
export const UserPage = pageSchema(UserOut);

/** Query of `GET /admin/user`: the pagination parameters; `search` matches username, email, first and last name. */
export const UserListQuery = PaginationQuery;
export type UserListQuery = z.infer<typeof UserListQuery>;

/** Path of the single-user routes: the id in its stored letter case (kernel/identity.ts). */
export const UserIdParams = z.object({ user_id: UserIdParam });

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
  password: z.string().max(PASSWORD_MAX_LENGTH).optional(),
  isActive: z.boolean().optional(),
  isStaff: z.boolean().optional(),
  isSuperuser: z.boolean().optional(),
});
export type UserPatchBody = z.infer<typeof UserPatchBody>;
