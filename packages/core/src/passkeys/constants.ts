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

/**
 * What the passkeys of real accounts look like in request options, for the made-up lists of names without
 * passkeys (SPEC-3 §7 rule 5: indistinguishable from a known name's in count, id lengths and transports):
 * the credential id length and transports each common kind of authenticator reports, with how often it is
 * met (weights out of 256). Synced platform passkeys (Google Password Manager 16 bytes, iCloud Keychain 20)
 * lead, then Windows Hello and password managers (32), then security keys (64, USB and NFC).
 */
export const PASSKEY_PROFILES = [
  { idBytes: 16, transports: ['hybrid', 'internal'], weight: 96 },
  { idBytes: 20, transports: ['hybrid', 'internal'], weight: 80 },
  { idBytes: 32, transports: ['internal'], weight: 32 },
  { idBytes: 32, transports: ['hybrid', 'internal'], weight: 16 },
  { idBytes: 64, transports: ['nfc', 'usb'], weight: 24 },
  { idBytes: 48, transports: ['usb'], weight: 8 },
] as const;

/**
 * How many passkeys an account with passkeys has, as weights out of 256 for 1, 2, 3 and 4: most have one,
 * some a second device, few more.
 */
export const PASSKEY_COUNT_WEIGHTS = [168, 56, 24, 8] as const;
