import { z } from 'zod';
import { PASSWORD_MAX_LENGTH } from '../kernel/user-out.js';
import { TOKEN_MAX_LENGTH } from './constants.js';

/** `POST /auth/password/forgot`. */
export const ForgotBody = z.object({ email: z.string().max(320) });

/** `POST /admin/user/invite` (SPEC-2 "Invitations"). */
export const InviteBody = z.object({
  email: z.email().max(320),
  username: z.string().max(150).optional(),
  firstName: z.string().max(150).optional(),
  lastName: z.string().max(150).optional(),
  isStaff: z.boolean().optional(),
  groupIds: z
    .array(z.number().int().min(1).max(2_147_483_647))
    .max(1000)
    .transform((ids) => [...new Set(ids)])
    .optional(),
});

/** `POST /auth/invitation/accept`. */
export const AcceptBody = z.object({
  token: z.string().min(1).max(TOKEN_MAX_LENGTH),
  password: z.string().max(PASSWORD_MAX_LENGTH),
});

/** `POST /auth/email/verify`. */
export const VerifyBody = z.object({ token: z.string().min(1).max(TOKEN_MAX_LENGTH) });

/** `POST /auth/password/reset`. */
export const ResetBody = z.object({
  token: z.string().min(1).max(TOKEN_MAX_LENGTH),
  newPassword: z.string().max(PASSWORD_MAX_LENGTH),
});
