import { randomInt } from 'node:crypto';
import { OTP_DIGITS } from './constants.js';

/** A six-digit email/SMS code (SPEC "MFA login challenge"), uniformly random, leading zeros kept. */
export function generateOtpCode(): string {
  return String(randomInt(10 ** OTP_DIGITS)).padStart(OTP_DIGITS, '0');
}

/** Whether input has the shape of a six-digit code (spaces ignored); returns the digits or null. */
export function normaliseOtpCode(input: string): string | null {
  const value = input.replace(/\s/g, '');
  return new RegExp(`^\\d{${OTP_DIGITS}}$`).test(value) ? value : null;
}
