import { UserIdParam } from '../kernel/identity.js';
import { PASSWORD_MAX_LENGTH } from '../kernel/user-out.js';
import { z } from 'zod';
import { PHONE_NUMBER_PATTERN } from './constants.js';

// SPEC "Multi-factor routes": field names are snake_case.

const Code = z.string().trim().min(1).max(64);

/** SPEC-2 "Passkeys": `webauthn` (an assertion) in place of `code`; exactly one of the two. */
export const MfaVerifyBody = z
  .object({
    mfa_token: z.string().min(1).max(4096),
    code: Code.optional(),
    webauthn: z
      .record(z.string(), z.unknown())
      .optional()
      .describe(
        'A passkey assertion in place of code: the JSON of navigator.credentials.get() with the options of ' +
          'POST /mfa/webauthn/options',
      ),
  })
  .refine((body) => (body.code === undefined) !== (body.webauthn === undefined), {
    message: 'Give either code or webauthn',
    path: ['code'],
  });

export const TokenPairOut = z.object({
  access_token: z.string(),
  token_type: z.literal('bearer'),
  refresh_token: z.string(),
});

export const MfaStatusOut = z.object({
  enabled: z.boolean(),
  method: z.enum(['totp', 'email', 'sms']).nullable(),
});

export const TotpSetupOut = z.object({
  secret: z.string(),
  otpauth_uri: z.string(),
  backup_codes: z.array(z.string()),
});

export const MfaCodeBody = z.object({ code: Code });

export const BackupCodesOut = z.object({ backup_codes: z.array(z.string()) });

/** SPEC "Limits": international phone number (leading `+`); anything else is a 422 validation error. */
export const SmsSetupBody = z.object({
  phone_number: z.string().regex(PHONE_NUMBER_PATTERN, 'Use the international form, e.g. +4915112345678'),
});

export const MfaPasswordBody = z.object({ password: z.string().min(1).max(PASSWORD_MAX_LENGTH) });

/** `DELETE /admin/user/{user_id}/mfa`. */
export const UserIdParams = z.object({ user_id: UserIdParam });
