/** SPEC-2 "One-time account tokens": 32 random bytes, base64url (43 characters). */
export const TOKEN_BYTES = 32;
/** Longest token accepted in a request body (a 32-byte base64url token is 43 characters). */
export const TOKEN_MAX_LENGTH = 128;
/** The `auth_rate_limit` scope of `POST /auth/password/forgot`. */
export const FORGOT_RATE_LIMIT_SCOPE = 'password-forgot';
/**
 * The password hash of an invited user who has not accepted yet: not a hash, so no password verifies
 * against it (a login before accepting gets the uniform 401), and what marks the invitation as pending.
 */
export const INVITED_PASSWORD_HASH = '!invited';
/**
 * The top-level keys of `GET /auth/user/export` (SPEC-2 "Administration and self-service"), in this order;
 * a key no module provides is exported as `[]`, so the shape stays the same whatever modules run.
 */
export const ACCOUNT_EXPORT_KEYS = [
  'user',
  'settings',
  'groups',
  'permissions',
  'mfa',
  'sessions',
  'personalTokens',
  'passkeys',
  'activity',
  // SPEC-3 §2 organizations: the user's memberships.
  'organizations',
  // SPEC-3 section 1: the user's sign-in identities (no provider tokens are stored).
  'identities',
] as const;
