/** SPEC-2 "Passkeys": challenges live 5 minutes and work once. */
export const CHALLENGE_TTL_SECONDS = 300;

/** The ceremony timeout given to the browser: the challenge's lifetime (WebAuthn `timeout`, milliseconds). */
export const CEREMONY_TIMEOUT_MS = CHALLENGE_TTL_SECONDS * 1000;

/** WebAuthn Level 3: a credential id is at most 1023 bytes, 1364 base64url characters. */
export const CREDENTIAL_ID_MAX_LENGTH = 1364;

/** A passkey's name: 1 to 100 characters, like a personal token's (SPEC-2 section 4). */
export const PASSKEY_NAME_MAX_LENGTH = 100;

/** The name of a passkey registered without one. */
export const DEFAULT_PASSKEY_NAME = 'Passkey';

/**
 * Public key algorithms offered at registration (COSE ids): Ed25519, ES256, RS256, what platform authenticators
 * and security keys create.
 */
export const SUPPORTED_ALGORITHMS = [-8, -7, -257];

/**
 * Rate-limit scope of the public options routes (SPEC "Limits": `auth_rate_limit` per client address); the
 * token route counts on the password login's scope, so passkeys add no second login budget.
 */
export const OPTIONS_RATE_LIMIT_SCOPE = 'passkey-options';
export const LOGIN_RATE_LIMIT_SCOPE = 'login';

/** Length of the fake credential ids of an unknown username's options (16 bytes, as platform authenticators). */
export const FAKE_CREDENTIAL_ID_BYTES = 16;
