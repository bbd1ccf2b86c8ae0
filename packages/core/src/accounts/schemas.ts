import { z } from 'zod';
import { PASSWORD_MAX_LENGTH } from '../kernel/user-out.js';
import { TOKEN_MAX_LENGTH } from './constants.js';

/** `POST /auth/password/forgot`. */
export const ForgotBody = z.object({ email: z.string().max(320) });

/** `POST /auth/email/verify`. */
export const VerifyBody = z.object({ token: z.string().min(1).max(TOKEN_MAX_LENGTH) });

/** `POST /auth/password/reset`. */
export const ResetBody = z.object({
  token: z.string().min(1).max(TOKEN_MAX_LENGTH),
  newPassword: z.string().max(PASSWORD_MAX_LENGTH),
});
