/** SPEC "Limits": TOTP step. */
export const TOTP_PERIOD_SECONDS = 30;
/** Digits of a TOTP code and of an email/SMS code (SPEC "MFA login challenge": six-digit code). */
export const OTP_DIGITS = 6;
/**
 * Steps accepted either side of the current one (clock drift of the authenticator app). A used step is
 * recorded for longer than the window it can be presented in (SPEC "Multi-factor routes" 4).
 */
export const TOTP_WINDOW = 1;
/** How long a used TOTP step stays in the cache: the whole acceptance window plus a margin. */
export const TOTP_USED_STEP_TTL_SECONDS = TOTP_PERIOD_SECONDS * (2 * TOTP_WINDOW + 2);
/** SPEC "Limits": backup codes per set. */
export const BACKUP_CODES_PER_SET = 8;
/** Length of the TOTP secret in bytes (160 bits, RFC 4226 recommendation; 32 base32 characters). */
export const TOTP_SECRET_BYTES = 20;
/** SPEC "MFA configuration": the TOTP secret column is 255 characters wide. */
export const TOTP_SECRET_COLUMN_LENGTH = 255;
/** SPEC "Limits": phone-number format is international (leading `+`, E.164: at most 15 digits). */
export const PHONE_NUMBER_PATTERN = /^\+[1-9]\d{6,14}$/;
/** Fallback of the TOTP issuer (SPEC "Configuration": `mfa_totp_issuer` > `app_name` > the service name). */
export const DEFAULT_TOTP_ISSUER = 'svc';
/** Rate-limit scope of the MFA check and email/SMS setup (SPEC "Limits": per-address rate limit). */
export const MFA_RATE_LIMIT_SCOPE = 'mfa';
/** Compare-and-swap retries when concurrent requests change a user's backup-code list. */
export const BACKUP_CODE_CAS_RETRIES = 16;
/**
 * How long a consumed backup code is remembered, so that a double-submit of it is refused as a replay and not
 * counted on the account as a wrong guess (SPEC "Account login lock"): the default challenge lifetime.
 */
export const BACKUP_CODE_REPLAY_TTL_SECONDS = 600;
