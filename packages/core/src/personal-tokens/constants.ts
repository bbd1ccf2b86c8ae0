// SPEC-2 "Personal access tokens": the form, limits and defaults of a token.

/** Random bytes of a token: 32, written as 43 base64url characters after the prefix. */
export const TOKEN_RANDOM_BYTES = 32;
/** Length of the whole token: `svc_pat_` (8) + 43. */
export const TOKEN_LENGTH = 8 + 43;
/** The shown `prefix`: the token's first 12 characters, kept to recognise it in lists. */
export const TOKEN_PREFIX_LENGTH = 12;
/** `name`: 1 to 100 characters. */
export const TOKEN_NAME_MAX_LENGTH = 100;
/** `expiresInDays`: 1 to 3650, or null for none; default 90. */
export const EXPIRES_IN_DAYS_MIN = 1;
export const EXPIRES_IN_DAYS_MAX = 3650;
export const EXPIRES_IN_DAYS_DEFAULT = 90;
/** `lastUsedAt` is written at most once a minute per token. */
export const LAST_USED_INTERVAL_MS = 60_000;
/** Codenames one token may carry (the SPEC sets no bound; a request body is not a place for thousands). */
export const TOKEN_PERMISSIONS_MAX = 200;
/** Longest codename (the permission table's `codename` column). */
export const CODENAME_MAX_LENGTH = 150;
/**
 * The rate-limit window an invalid token counts on: the login's ("counted by `auth_rate_limit`'s per-address
 * window like a failed login"), so guesses at tokens and at passwords share one budget per address.
 */
export const RATE_LIMIT_SCOPE = 'login';
/** Addresses remembered as over the limit in this process (answered 429 without a lookup). */
export const BLOCKED_ADDRESSES_MAX = 10_000;
