import type { AuthenticationResponseJSON } from '@simplewebauthn/server';
import type { Logger } from '../kernel/log/logger.js';
import { expectedBy, type RelyingParty } from './relying-party.js';
import type { AuthenticationResponseJson } from './schemas.js';
import type { PasskeyRow, PasskeyStore } from './store.js';
import { webauthn } from './webauthn.js';

export interface AssertionDeps {
  rp: RelyingParty;
  store: PasskeyStore;
  log: Logger;
  now: () => Date;
}

/** The transports stored with a passkey (a JSON array), tolerating a damaged value. */
export function transportsOf(row: Pick<PasskeyRow, 'transports'>): string[] {
  try {
    const value: unknown = JSON.parse(row.transports);
    return Array.isArray(value) ? value.filter((t): t is string => typeof t === 'string') : [];
  } catch {
    return [];
  }
}

/**
 * Verifies an assertion of one stored passkey against `challenge` (WebAuthn "Verifying an Authentication
 * Assertion"): origin and rp id from the settings only, user verification required (SPEC-2 "Passkeys"), and
 * the signature counter. A counter that does not grow (unless the authenticator keeps none: both 0) refuses
 * the assertion and logs a warning: two copies of the credential exist. On success the counter and
 * `lastUsedAt` are stored, conditionally, so of two assertions with the same counter only one passes.
 */
export function createAssertionCheck(deps: AssertionDeps) {
  const { rp, store, log, now } = deps;
  return async function verifyAssertion(
    row: PasskeyRow,
    response: AuthenticationResponseJson,
    challenge: string,
  ): Promise<'ok' | 'wrong'> {
    const { verifyAuthenticationResponse } = await webauthn();
    let counter: number;
    try {
      const result = await verifyAuthenticationResponse({
        // Shape checked by the route's schema; the library checks the values (enums, encodings) itself. The
        // schema's strings are not the library's string unions (attachment, extensions), hence the cast.
        response: response as unknown as AuthenticationResponseJSON,
        ...expectedBy(rp, challenge),
        // The counter is compared below (the library would refuse without a log line to tell why).
        credential: {
          id: row.credentialId,
          publicKey: Buffer.from(row.publicKey, 'base64url'),
          counter: 0,
          transports: transportsOf(row),
        },
      });
      if (!result.verified || !result.authenticationInfo.userVerified) return 'wrong';
      counter = result.authenticationInfo.newCounter;
    } catch {
      // A malformed, forged or foreign (origin, rp id, type) assertion: the library says why in its message,
      // which may quote client data; it is not logged.
      return 'wrong';
    }
    const grows = counter > row.counter || (counter === 0 && row.counter === 0);
    if (!grows || !(await store.recordUse(row.id, counter, now()))) {
      log.warn('passkey assertion refused: its signature counter did not grow (a cloned authenticator?)', {
        user_id: row.userId,
        passkey_id: row.id,
        stored_counter: row.counter,
        presented_counter: counter,
      });
      return 'wrong';
    }
    return 'ok';
  };
}

export type VerifyAssertion = ReturnType<typeof createAssertionCheck>;
