import { createHash } from 'node:crypto';
import type { Cache, CacheWriteOptions } from '../kernel/cache/cache.js';
import { CHALLENGE_TTL_SECONDS } from './constants.js';

/** A WebAuthn challenge waiting for its answer, and the user it was issued for (null: any, or nobody). */
export interface PendingChallenge {
  challenge: string;
  userId: string | null;
}

/**
 * SPEC-3 §7 rule 6: a pending challenge is never evicted to make room. Those of a signed-in user or of a login
 * past its password are bounded by the users; a passkey login's is created anonymously, so the cache holds a
 * bounded number of them and refuses a new one (503 `cache.unavailable`) rather than dropping a pending one.
 */
const SIGNED_IN: CacheWriteOptions = { keep: 'security' };
const ANONYMOUS: CacheWriteOptions = { keep: 'anonymous' };

/**
 * Pending challenges in the shared cache (SPEC-2 "Passkeys": 5 minutes, once): `take` reads and deletes in
 * one atomic step (a Redis GETDEL across hosts), so of two requests with the same challenge one gets it.
 */
export function createChallenges(cache: Cache) {
  const key = (kind: 'register' | 'login' | 'mfa', id: string) => `passkeys:${kind}:${id}`;
  return {
    /** Registration: keyed by user and challenge (several tabs may register at once). */
    async putRegistration(userId: string, challenge: string): Promise<void> {
      await cache.set(key('register', `${userId}:${challenge}`), 1, CHALLENGE_TTL_SECONDS, SIGNED_IN);
    },
    async takeRegistration(userId: string, challenge: string): Promise<boolean> {
      return (await cache.take(key('register', `${userId}:${challenge}`))) !== undefined;
    },
    /** Passkey login: keyed by the `challengeId` the client sends back. */
    async putLogin(challengeId: string, pending: PendingChallenge): Promise<void> {
      await cache.set(key('login', challengeId), pending, CHALLENGE_TTL_SECONDS, ANONYMOUS);
    },
    takeLogin: (challengeId: string) => cache.take<PendingChallenge>(key('login', challengeId)),
    /** The MFA step: keyed by a digest of the `mfa_token` (the token itself is a credential: not a key). */
    async putMfa(mfaToken: string, pending: PendingChallenge): Promise<void> {
      await cache.set(key('mfa', digest(mfaToken)), pending, CHALLENGE_TTL_SECONDS, SIGNED_IN);
    },
    takeMfa: (mfaToken: string) => cache.take<PendingChallenge>(key('mfa', digest(mfaToken))),
  };
}

export type Challenges = ReturnType<typeof createChallenges>;

function digest(value: string): string {
  return createHash('sha256').update(value).digest('base64url');
}
