/** SPEC "User": Argon2id, memory 19 MiB (19456 KiB), 2 iterations, parallelism 1, PHC string. */
export const ARGON2_MEMORY_COST_KIB = 19_456;
/** SPEC "User": 2 iterations. */
export const ARGON2_TIME_COST = 2;
/** SPEC "User": parallelism 1. */
export const ARGON2_PARALLELISM = 1;

/** Column width of `email` (core table). */
export const EMAIL_MAX_LENGTH = 320;
/** Column width of `first_name` / `last_name` (core table). */
export const NAME_MAX_LENGTH = 150;

/** SPEC "Tokens (JWT)": the `type` claim of each token kind. */
export const TOKEN_TYPES = { access: 'access', refresh: 'refresh', mfa: 'mfa' } as const;
export type TokenType = (typeof TOKEN_TYPES)[keyof typeof TOKEN_TYPES];

/** Cache key prefix of the per-address rate limit (SPEC "Limits": per-address rate limit). */
export const RATE_LIMIT_KEY_PREFIX = 'auth:rate';

/** Clock skew tolerated on a token's `iat` (docs/security.md "Tokens": a token issued in the future is refused as invalid). */
export const IAT_FUTURE_LEEWAY_SECONDS = 60;

/**
 * Longest wait of a credential check for a slot on the account's counter while other checks are in flight
 * (docs/security.md "Concurrent logins"): well above the time of a few queued Argon2 verifications.
 */
export const LOGIN_ADMISSION_WAIT_MS = 10_000;
/** How often a waiting check looks again for slots freed by other processes (its own process wakes it). */
export const LOGIN_ADMISSION_POLL_MS = 50;
/**
 * A lock younger than this may still be lifted by a right password that was in flight when it was set (the
 * lock counted its slot), so a check meeting it waits instead of being refused at once.
 */
export const PROVISIONAL_LOCK_MS = 2_000;

/** SPEC-2 "Sessions": the user agent of a session is kept to at most 255 characters. */
export const SESSION_USER_AGENT_MAX_LENGTH = 255;
/** Column width of a session's client address (an IPv6 address with a zone index fits). */
export const SESSION_IP_MAX_LENGTH = 64;
/**
 * A session row is purged this long after its last use plus `refresh_token_expire_days` (every refresh
 * token of it has expired by then; the margin covers clocks of other hosts), never earlier: a revoked row
 * must outlive its refresh tokens so that none of them can bring it back (auth/tables.ts).
 */
export const SESSION_PURGE_MARGIN_MS = 86_400_000;
