import type { Settings } from '../kernel/config/schema.js';
import { ConfigError } from '../kernel/config/load.js';

/** Who the passkeys are for (SPEC-2 "Passkeys"): never taken from request headers. */
export interface RelyingParty {
  /** The relying-party id: a domain the origins belong to. */
  id: string;
  /** Shown by authenticators. */
  name: string;
  /** Origins accepted in client data. */
  origins: string[];
}

/**
 * The relying party from the settings: `webauthn_rp_id` (default: the host of `public_url`),
 * `webauthn_rp_name` (default: `app_name`), `webauthn_origins` (default: the origin of `public_url`).
 * `public_url` itself defaults to the server's own address (SPEC-2 "Mail and links").
 */
export function relyingParty(settings: Settings): RelyingParty {
  const base = new URL(settings.public_url || `http://${settings.host}:${settings.port}`);
  const origins = settings.webauthn_origins.length > 0 ? settings.webauthn_origins : [base.origin];
  return {
    id: settings.webauthn_rp_id || base.hostname,
    name: settings.webauthn_rp_name || settings.app_name,
    origins: origins.map((origin) => normaliseOrigin(origin)),
  };
}

/**
 * What a registration or an assertion is verified against (SPEC-2 "Passkeys"): the challenge this server
 * issued, the origins and rp id of the settings (never of the request), and user verification required.
 */
export function expectedBy(rp: RelyingParty, challenge: string) {
  return {
    expectedChallenge: challenge,
    expectedOrigin: rp.origins,
    expectedRPID: rp.id,
    requireUserVerification: true,
  };
}

/** A web origin as browsers write it in client data (`https://host[:port]`, no path, no trailing slash). */
function normaliseOrigin(origin: string): string {
  // Non-web origins (Android apps: `android:apk-key-hash:...`) are compared as written.
  if (!/^https?:/i.test(origin)) return origin;
  try {
    return new URL(origin).origin;
  } catch {
    throw new ConfigError(`webauthn_origins: '${origin}' is not an origin (https://host[:port])`);
  }
}
