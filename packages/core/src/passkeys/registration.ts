import { randomUUID } from 'node:crypto';
import type { RegistrationResponseJSON } from '@simplewebauthn/server';
import { SvcError } from '../kernel/errors/svc-error.js';
import { isUuid } from '../kernel/identity.js';
import type { AuthUser } from '../kernel/ports.js';
import { transportsOf } from './assertion.js';
import type { Challenges } from './challenges.js';
import { CEREMONY_TIMEOUT_MS, DEFAULT_PASSKEY_NAME, SUPPORTED_ALGORITHMS } from './constants.js';
import { expectedBy, type RelyingParty } from './relying-party.js';
import type { RegistrationResponseJson } from './schemas.js';
import type { PasskeyRow, PasskeyStore } from './store.js';
import { webauthn, webauthnHelpers } from './webauthn.js';

/** A passkey as its owner sees it (`PasskeyOut`). */
export function toPasskeyOut(row: PasskeyRow) {
  return {
    id: row.id,
    name: row.name,
    createdAt: row.createdAt.toISOString(),
    lastUsedAt: row.lastUsedAt ? row.lastUsedAt.toISOString() : null,
    transports: transportsOf(row),
  };
}

/** The descriptor of a stored passkey in `excludeCredentials` / `allowCredentials`. */
export function descriptorOf(row: PasskeyRow): { id: string; transports: string[] } {
  return { id: row.credentialId, transports: transportsOf(row) };
}

/** The challenge a client data JSON answers, or null when it is not one. */
export async function challengeOf(clientDataJSON: string): Promise<string | null> {
  const { decodeClientDataJSON } = await webauthnHelpers();
  try {
    const { challenge } = decodeClientDataJSON(clientDataJSON);
    return typeof challenge === 'string' && /^[A-Za-z0-9_-]{16,128}$/.test(challenge) ? challenge : null;
  } catch {
    return null;
  }
}

export interface RegistrationDeps {
  /** SPEC-3 §7 rule 1: `passkeys_max_per_user`. */
  maxPerUser: number;
  rp: RelyingParty;
  store: PasskeyStore;
  challenges: Challenges;
  now: () => Date;
}

/** Registration and management of the caller's passkeys (SPEC-2 "Passkeys", the `/auth/passkeys` routes). */
export function createRegistration(deps: RegistrationDeps) {
  const { rp, store, challenges, now } = deps;
  const invalid = () => new SvcError('auth.passkey_invalid', { status: 400 });
  const notFound = () => new SvcError('auth.passkey_not_found');
  // SPEC-3 §7 rule 1: at most `passkeys_max_per_user` passkeys, refused at both registration routes.
  const limit = () => new SvcError('auth.passkey_limit', { params: { max: deps.maxPerUser } });
  const remove = async (userId: string, id: string) => {
    if (!isUuid(id) || !(await store.remove(userId, id))) throw notFound();
  };
  /** The stored id of the user a path names, or 404 `user.not_found` (SPEC "Errors": admin lookups). */
  const existingUser = async (userId: string) => {
    // Not a UUID: no such user (PostgreSQL's uuid column would refuse the text itself).
    const user = isUuid(userId) ? await store.user(userId.toLowerCase()) : undefined;
    if (!user) throw new SvcError('user.not_found', { status: 404, loc: ['path', 'user_id'] });
    return user.id;
  };

  return {
    /** Creation options: user verification required, resident key preferred, existing credentials excluded. */
    async options(user: AuthUser) {
      const existing = await store.list(user.id);
      if (existing.length >= deps.maxPerUser) throw limit();
      const displayName = `${user.firstName} ${user.lastName}`.trim() || user.username;
      const { generateRegistrationOptions } = await webauthn();
      const options = await generateRegistrationOptions({
        rpName: rp.name,
        rpID: rp.id,
        userName: user.username,
        // The user handle: the account id (no personal data; WebAuthn "User Handle Contents").
        userID: new TextEncoder().encode(user.id),
        userDisplayName: displayName,
        timeout: CEREMONY_TIMEOUT_MS,
        attestationType: 'none',
        excludeCredentials: existing.map(descriptorOf),
        authenticatorSelection: { residentKey: 'preferred', userVerification: 'required' },
        supportedAlgorithmIDs: SUPPORTED_ALGORITHMS,
      });
      await challenges.putRegistration(user.id, options.challenge);
      return options;
    },

    /** Verifies the attestation against a challenge issued to this user (used up here) and stores the passkey. */
    async register(user: AuthUser, response: RegistrationResponseJson, name: string | undefined) {
      const challenge = await challengeOf(response.response.clientDataJSON);
      if (!challenge || !(await challenges.takeRegistration(user.id, challenge))) throw invalid();
      const { verifyRegistrationResponse } = await webauthn();
      let credential;
      try {
        const result = await verifyRegistrationResponse({
          // Shape checked by the route's schema; the library checks the values (enums, encodings) itself. The
          // schema's strings are not the library's string unions (attachment, transports), hence the cast.
          response: response as unknown as RegistrationResponseJSON,
          ...expectedBy(rp, challenge),
          supportedAlgorithmIDs: SUPPORTED_ALGORITHMS,
        });
        if (!result.verified || !result.registrationInfo.userVerified) throw invalid();
        credential = result.registrationInfo.credential;
      } catch {
        throw invalid();
      }
      const row: PasskeyRow = {
        id: randomUUID(),
        userId: user.id,
        credentialId: credential.id,
        publicKey: Buffer.from(credential.publicKey).toString('base64url'),
        counter: credential.counter,
        transports: JSON.stringify(credential.transports ?? response.response.transports ?? []),
        name: name ?? DEFAULT_PASSKEY_NAME,
        createdAt: now(),
        lastUsedAt: null,
      };
      // Options issued below the limit do not carry past it (several may be pending at once).
      if ((await store.count(user.id)) >= deps.maxPerUser) throw limit();
      // A credential id registered already (by this user or another) is refused, never moved.
      if (!(await store.insert(row))) throw invalid();
      // Counted again with the new row in: of concurrent registrations at the limit, none gets past it.
      if ((await store.count(user.id)) > deps.maxPerUser) {
        await store.remove(user.id, row.id);
        throw limit();
      }
      return toPasskeyOut(row);
    },

    async list(user: AuthUser) {
      return (await store.list(user.id)).map(toPasskeyOut);
    },

    /** A user's passkeys for a superuser (svc extension of SPEC-3 §6, docs/passkeys.md). */
    async listOfUser(userId: string) {
      return (await store.list(await existingUser(userId))).map(toPasskeyOut);
    },

    async rename(user: AuthUser, id: string, name: string) {
      // Not a UUID: no such passkey (PostgreSQL's uuid column would refuse the text itself).
      const row = isUuid(id) ? await store.rename(user.id, id, name) : undefined;
      if (!row) throw notFound();
      return toPasskeyOut(row);
    },

    async remove(user: AuthUser, id: string): Promise<void> {
      await remove(user.id, id);
    },

    /** The owner's delete, done by a superuser: the same rule and effect (svc extension of SPEC-3 §6). */
    async removeOfUser(userId: string, id: string): Promise<void> {
      await remove(await existingUser(userId), id);
    },
  };
}

export type Registration = ReturnType<typeof createRegistration>;
