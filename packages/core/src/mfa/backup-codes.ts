import { randomInt } from 'node:crypto';
import { BACKUP_CODES_PER_SET } from './constants.js';

// Lower-case letters and digits without look-alikes (0/o, 1/l/i): 31 symbols, 8 per code ≈ 39.6 bits.
const ALPHABET = 'abcdefghjkmnpqrstuvwxyz23456789';
const HALF = 4;
const NORMALISED = new RegExp(`^[${ALPHABET}]{${HALF * 2}}$`);

/** SPEC "Multi-factor routes" 3: a new set of eight codes shaped `xxxx-xxxx`. */
export function generateBackupCodes(count = BACKUP_CODES_PER_SET): string[] {
  const codes = new Set<string>();
  while (codes.size < count) {
    let raw = '';
    for (let i = 0; i < HALF * 2; i++) raw += ALPHABET[randomInt(ALPHABET.length)];
    codes.add(`${raw.slice(0, HALF)}-${raw.slice(HALF)}`);
  }
  return [...codes];
}

/**
 * The canonical form of something typed as a backup code (case, spaces and the dash ignored), or null when
 * it cannot be one. The hash is taken of this form.
 */
export function normaliseBackupCode(input: string): string | null {
  const value = input.toLowerCase().replace(/[\s-]/g, '');
  return NORMALISED.test(value) ? value : null;
}
