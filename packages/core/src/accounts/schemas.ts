import { z } from 'zod';
import { PASSWORD_MAX_LENGTH, UserOut } from '../kernel/user-out.js';
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
  revokeTokens: z
    .boolean()
    .default(false)
    .describe('Also delete the personal access tokens (SPEC-3 §7 rule 2); every session ends either way'),
});

/** `DELETE /auth/user` (SPEC-2 "Administration and self-service"). */
export const SelfDeleteBody = z.object({
  password: z.string().max(PASSWORD_MAX_LENGTH),
  code: z.string().max(64).optional().describe('A TOTP or backup code; required while MFA is active'),
});

const rows = (what: string) => z.array(z.record(z.string(), z.unknown())).describe(what);

/** `GET /auth/user/export`: the documented keys; a project's modules may add more. */
export const AccountExportOut = z
  .object({
    user: UserOut.extend({ permissions: z.array(z.string()) }).describe('As `GET /auth/user` shows it'),
    settings: z.record(z.string(), z.record(z.string(), z.unknown())).describe('Values by section'),
    groups: rows('The groups of the user, with their permissions'),
    permissions: z.object({
      direct: rows('Permissions given to the user directly'),
      effective: z.array(z.string()).describe('Codenames from groups and direct permissions'),
    }),
    mfa: z.object({ enabled: z.boolean(), method: z.string().nullable() }),
    sessions: rows('The active sessions (logins)'),
    personalTokens: rows('Personal access tokens, without the tokens'),
    passkeys: rows('Passkeys, without their keys'),
    activity: rows('The newest 1,000 activity log entries of the user, newest first'),
    // SPEC-3 §2
    organizations: rows('The organizations the user is a member of, with the role and joinedAt'),
    // SPEC-3 section 1
    identities: rows('The linked sign-in identities (provider, subject, email), without tokens'),
  })
  .catchall(z.unknown());
