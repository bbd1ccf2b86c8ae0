import { randomBytes } from 'node:crypto';
import { hash, verify, type Algorithm } from '@node-rs/argon2';
import { ARGON2_MEMORY_COST_KIB, ARGON2_PARALLELISM, ARGON2_TIME_COST } from './constants.js';

// `Algorithm` is a const enum in the binding's typings; swc cannot inline it, so the value is written out.
const ARGON2ID = 2 as Algorithm;

const OPTIONS = {
  algorithm: ARGON2ID,
  memoryCost: ARGON2_MEMORY_COST_KIB,
  timeCost: ARGON2_TIME_COST,
  parallelism: ARGON2_PARALLELISM,
};

/**
 * Hashes a password with Argon2id (SPEC "User"): a PHC string. Runs on the binding's thread pool, never on
 * the event loop.
 * @example const stored = await hashPassword('correct-horse-battery');
 */
export function hashPassword(password: string): Promise<string> {
  return hash(password, OPTIONS);
}

/** Argon2 verifications run in this process (a test proves by it that a refused login paid for one). */
let verifications = 0;

/**
 * How many Argon2 verifications this process has run: SPEC "Authentication routes" 1 and SPEC-3 §7 rule 5
 * want one per login attempt whatever the account, which a test checks by this count rather than a clock.
 */
export function passwordVerifications(): number {
  return verifications;
}

// The rule lives with the other identity rules; re-exported for auth's own modules.
export { isUsableHash } from '../kernel/identity.js';

/** True when `password` matches the PHC string; a malformed stored hash is simply no match. */
export async function verifyPassword(stored: string, password: string): Promise<boolean> {
  try {
    const matches = await verify(stored, password);
    verifications++;
    return matches;
  } catch {
    return false;
  }
}

/**
 * True when a stored hash was made with other parameters than the current ones (SPEC "User": re-hashed
 * transparently on the next successful login).
 */
export function needsRehash(stored: string): boolean {
  const match = /^\$argon2id\$v=19\$m=(\d+),t=(\d+),p=(\d+)\$/.exec(stored);
  if (!match) return true;
  return (
    Number(match[1]) !== ARGON2_MEMORY_COST_KIB ||
    Number(match[2]) !== ARGON2_TIME_COST ||
    Number(match[3]) !== ARGON2_PARALLELISM
  );
}

/**
 * A hash of a random value, computed once at startup and verified for unknown usernames and refused
 * accounts so every login failure costs one Argon2 verification (SPEC "Authentication routes" 1).
 */
export function createDummyHash(): Promise<string> {
  return hashPassword(randomBytes(24).toString('base64url'));
}
