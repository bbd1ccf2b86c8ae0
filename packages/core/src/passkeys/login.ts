import { hkdfSync, randomUUID } from 'node:crypto';
import type { Settings } from '../kernel/config/schema.js';
import { SvcError } from '../kernel/errors/svc-error.js';
import { usernameLookupKeys, type TokenPair } from '../kernel/identity.js';
import type { ModulePorts } from '../kernel/module.js';
import type { PasskeyFactor } from '../kernel/ports.js';
import type { VerifyAssertion } from './assertion.js';
import type { Challenges } from './challenges.js';
import {
  CEREMONY_TIMEOUT_MS,
  LOGIN_RATE_LIMIT_SCOPE,
  OPTIONS_RATE_LIMIT_SCOPE,
  PASSKEY_COUNT_WEIGHTS,
  PASSKEY_PROFILES,
} from './constants.js';
import { descriptorOf } from './registration.js';
import type { RelyingParty } from './relying-party.js';
import { AuthenticationResponse, type AuthenticationResponseJson } from './schemas.js';
import type { PasskeyStore } from './store.js';
import { webauthn } from './webauthn.js';

const NIL_UUID = '00000000-0000-0000-0000-000000000000';

/** Enough derived bytes for the longest made-up list: a count, and per credential a profile and an id. */
const FAKE_MATERIAL_BYTES =
  1 + PASSKEY_COUNT_WEIGHTS.length * (1 + Math.max(...PASSKEY_PROFILES.map((p) => p.idBytes)));

/** The index a byte (0 to 255) falls on in `weights` (summing to 256). */
function pick(byte: number, weights: readonly number[]): number {
  let bound = 0;
  for (const [index, weight] of weights.entries()) {
    bound += weight;
    if (byte < bound) return index;
  }
  return weights.length - 1;
}

export interface PasskeyLoginDeps {
  settings: Settings;
  rp: RelyingParty;
  store: PasskeyStore;
  challenges: Challenges;
  verifyAssertion: VerifyAssertion;
  ports: ModulePorts<'passkeys', 'loginGuard' | 'tokens', 'rateLimiter'>;
}

/**
 * Passwordless login and the passkey as the MFA step (SPEC-2 "Passkeys"): `POST /auth/passkey/options`,
 * `POST /auth/passkey/token`, `POST /mfa/webauthn/options`, and the `passkeys` port `POST /mfa/verify` calls.
 */
export function createPasskeyLogin(deps: PasskeyLoginDeps) {
  const { settings, rp, store, challenges, verifyAssertion, ports } = deps;
  // SPEC-2 "Passkeys": every failure of the token route is this one 401.
  const invalid = () => new SvcError('auth.passkey_invalid');
  const rateLimit = (ip: string, scope: string) => ports.find('rateLimiter')?.hit(ip, scope);

  /**
   * The allowCredentials of a name without passkeys (unknown, or an account that has none): made up from an
   * HKDF of the secret key and the name, so the same name always gets the same list, and drawn from how real
   * accounts' lists look (count, id lengths, transports: {@link PASSKEY_PROFILES}), so a list says nothing
   * of whether the name exists (SPEC-3 §7 rule 5).
   */
  function fakeCredentials(username: string) {
    const bytes = Buffer.from(
      hkdfSync('sha256', settings.secret_key, '', `passkey-options:${username}`, FAKE_MATERIAL_BYTES),
    );
    let offset = 0;
    const take = (length: number) => bytes.subarray(offset, (offset += length));
    const count = 1 + pick(take(1)[0]!, PASSKEY_COUNT_WEIGHTS);
    return Array.from({ length: count }, () => {
      const profile =
        PASSKEY_PROFILES[
          pick(
            take(1)[0]!,
            PASSKEY_PROFILES.map((p) => p.weight),
          )
        ]!;
      return { id: take(profile.idBytes).toString('base64url'), transports: [...profile.transports] };
    });
  }

  async function requestOptions(allowCredentials?: { id: string; transports: string[] }[]) {
    const { generateAuthenticationOptions } = await webauthn();
    return generateAuthenticationOptions({
      rpID: rp.id,
      userVerification: 'required',
      timeout: CEREMONY_TIMEOUT_MS,
      ...(allowCredentials ? { allowCredentials } : {}),
    });
  }

  const factor: PasskeyFactor = {
    async takeMfaChallenge({ userId, mfaToken, assertion }) {
      const parsed = AuthenticationResponse.safeParse(assertion);
      // Malformed: a wrong answer, counted; the pending challenge stays for a proper one.
      if (!parsed.success) return async () => 'wrong';
      const pending = await challenges.takeMfa(mfaToken);
      if (!pending || pending.userId !== userId) return null;
      return async () => {
        const row = await store.byCredentialId(parsed.data.id);
        if (!row || row.userId !== userId) return 'wrong';
        return verifyAssertion(row, parsed.data, pending.challenge);
      };
    },
  };

  return {
    factor,

    /** Request options; with a username, for that user's passkeys (or a fake list, see {@link fakeCredentials}). */
    async options(username: string | undefined, clientIp: string) {
      await rateLimit(clientIp, OPTIONS_RATE_LIMIT_SCOPE);
      let userId: string | null = null;
      let allow: { id: string; transports: string[] }[] | undefined;
      const name = username?.trim();
      if (name) {
        userId = (await store.userIdByUsername(usernameLookupKeys(name))) ?? null;
        // The same queries for an unknown name (the nil UUID has no passkeys): no timing difference to measure.
        const rows = await store.list(userId ?? NIL_UUID);
        allow = rows.length > 0 ? rows.map(descriptorOf) : fakeCredentials(name.toLowerCase());
      }
      const options = await requestOptions(allow);
      const challengeId = randomUUID();
      // An unknown name's challenge belongs to nobody: no assertion can answer it.
      await challenges.putLogin(challengeId, {
        challenge: options.challenge,
        userId: name ? (userId ?? '') : null,
      });
      return { challengeId, options };
    },

    /**
     * A token pair for a verified assertion with user verification: both factors, no MFA step. The login rules
     * of passwords apply (SPEC-2 "Passkeys"): `auth_rate_limit`, the account lock, inactive users, the `login`
     * event; every failure is the same 401.
     */
    async token(
      challengeId: string,
      response: AuthenticationResponseJson,
      clientIp: string,
    ): Promise<TokenPair> {
      await rateLimit(clientIp, LOGIN_RATE_LIMIT_SCOPE);
      const pending = await challenges.takeLogin(challengeId);
      if (!pending) throw invalid();
      const row = await store.byCredentialId(response.id);
      if (!row || (pending.userId !== null && pending.userId !== row.userId)) throw invalid();
      // A discoverable credential names its account: it must be the passkey's.
      const handle = response.response.userHandle;
      if (handle && handle !== Buffer.from(row.userId).toString('base64url')) throw invalid();
      const user = await store.user(row.userId);
      if (!user?.isActive) throw invalid();
      const guard = ports.get('loginGuard');
      // SPEC "Account login lock": refused while locked; the slot is held until the login completes.
      const admission = await guard.admitAttempt(user.id);
      if (!admission.admitted) throw invalid();
      let settled = false;
      try {
        if ((await verifyAssertion(row, response, pending.challenge)) !== 'ok') throw invalid();
        if (settings.require_verified_email && !user.isSuperuser && !user.emailVerifiedAt) {
          // SPEC-2 "Email verification", as for passwords: told only after the credential was verified.
          throw new SvcError('auth.email_unverified', { loc: ['body', 'response'] });
        }
        settled = true;
        // Issues the pair, resets the failed-login counter, emits `login`; refused when the user was
        // deactivated meanwhile (its own code is the MFA route's: this route answers its uniform 401).
        return await guard.completeLogin(user, undefined, admission, 'passkey').catch((error: unknown) => {
          throw error instanceof SvcError && error.code === 'mfa.challenge_not_found' ? invalid() : error;
        });
      } finally {
        if (!settled) await guard.releaseAttempt(admission).catch(() => undefined);
      }
    },

    /** `POST /mfa/webauthn/options`: request options over the passkeys of the `mfa_token`'s user. */
    async mfaOptions(mfaToken: string, clientIp: string) {
      await rateLimit(clientIp, OPTIONS_RATE_LIMIT_SCOPE);
      const checked = ports.get('tokens').checkMfa(mfaToken);
      if (!checked) throw new SvcError('mfa.token_invalid');
      const rows = await store.list(checked.userId);
      if (rows.length === 0) throw new SvcError('mfa.no_passkey');
      const options = await requestOptions(rows.map(descriptorOf));
      await challenges.putMfa(mfaToken, { challenge: options.challenge, userId: checked.userId });
      return options;
    },
  };
}

export type PasskeyLogin = ReturnType<typeof createPasskeyLogin>;
