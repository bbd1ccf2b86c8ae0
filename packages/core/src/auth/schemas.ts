import { z } from 'zod';
import { PASSWORD_MAX_LENGTH, UserOut } from '../kernel/user-out.js';
import { USERNAME_MAX_LENGTH, USERNAME_MIN_LENGTH } from '../kernel/identity.js';
import { EMAIL_MAX_LENGTH, NAME_MAX_LENGTH } from './constants.js';

export { UserOut, toUserOut } from '../kernel/user-out.js';

/** `GET /auth/user` and `PATCH /auth/user`: the user with effective permission codenames. */
export const CurrentUserOut = UserOut.extend({
  permissions: z.array(z.string()),
  /** SPEC-3 section 1: false for an account made by a social login (or an invitation not accepted yet). */
  hasPassword: z.boolean(),
  // SPEC-3 §4: present while a superuser impersonates the user.
  impersonatedBy: z.object({ id: z.uuid(), username: z.string() }).optional(),
});
export type CurrentUserOut = z.infer<typeof CurrentUserOut>;

/** `POST /auth/token` form body (OAuth2 password flow; other OAuth2 fields are ignored). */
export const LoginForm = z.object({
  username: z.string(),
  password: z.string().max(PASSWORD_MAX_LENGTH),
});

/** Login, refresh and MFA-verify answer (OAuth2 shape, snake_case). */
export const TokenOut = z.object({
  access_token: z.string(),
  token_type: z.literal('bearer'),
  refresh_token: z.string().optional(),
});

/** `POST /auth/token` when a second step is required (SPEC "Authentication" 5). */
export const MfaRequiredOut = z.object({ mfa_required: z.literal(true), mfa_token: z.string() });

export const LoginOut = z.union([TokenOut, MfaRequiredOut]);

export const RefreshBody = z.object({ refresh_token: z.string().min(1) });

export const LogoutBody = z.object({ refresh_token: z.string().optional() });

const email = z.union([z.literal(''), z.email().max(EMAIL_MAX_LENGTH)]);

/** `POST /auth/register`; privileges sent along are ignored (stripped). */
export const RegisterBody = z.object({
  username: z.string().trim().toLowerCase().min(USERNAME_MIN_LENGTH).max(USERNAME_MAX_LENGTH),
  password: z.string().max(PASSWORD_MAX_LENGTH),
  email: email.nullish(),
  firstName: z.string().max(NAME_MAX_LENGTH).optional(),
  lastName: z.string().max(NAME_MAX_LENGTH).optional(),
});

/** `PATCH /auth/user`: only fields sent change; empty email clears (SPEC "Authentication routes" 3). */
export const UserPatchBody = z.object({
  firstName: z.string().max(NAME_MAX_LENGTH).optional(),
  lastName: z.string().max(NAME_MAX_LENGTH).optional(),
  email: email.nullish(),
  currentPassword: z.string().max(PASSWORD_MAX_LENGTH).optional(),
});

/** `POST /auth/user/password`. */
export const PasswordChangeBody = z.object({
  currentPassword: z.string().max(PASSWORD_MAX_LENGTH),
  newPassword: z.string().max(PASSWORD_MAX_LENGTH),
});
