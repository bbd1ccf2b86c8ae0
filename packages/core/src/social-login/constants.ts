/** SPEC-3 section 1: the state of an authorization lives 10 minutes and works once. */
export const STATE_TTL_SECONDS = 10 * 60;
/** SPEC-3 section 1: the `#svc_code` of a login lives 60 seconds and works once. */
export const EXCHANGE_CODE_TTL_SECONDS = 60;
/** SPEC-3 section 1: an ID token's `iat` may lie at most 5 minutes in the future. */
export const MAX_IAT_FUTURE_SECONDS = 5 * 60;
/** SPEC-3 section 1: the default scopes of an OpenID provider. */
export const DEFAULT_SCOPES = 'openid email profile';
/**
 * The cookie binding a flow to the browser that started it (SPEC-3 section 1: HttpOnly, SameSite=Lax, set on the
 * authorize and link answers). Lax: the provider's redirect back is a top-level GET, which carries it.
 */
export const BINDING_COOKIE = 'svc_oauth_binding';
/** How long a request to a provider (discovery, keys, token, GitHub API) may take before it counts as unreachable. */
export const PROVIDER_TIMEOUT_MS = 10_000;
/** The rate-limit scope of the exchange (SPEC-3 section 1: it counts against `auth_rate_limit` like a login). */
export const EXCHANGE_RATE_LIMIT_SCOPE = 'login';
/** The marker stored as the password hash of an account made by a social login: no password matches it. */
export const NO_PASSWORD_HASH = '!social';
/** Longest provider email kept (the user table's limit). */
export const EMAIL_MAX_LENGTH = 320;
/** Longest provider name (the settings' `oauth_<name>_*` names and the path segment). */
export const PROVIDER_NAME_MAX_LENGTH = 64;
