import { Secret, TOTP } from 'otpauth';
import {
  DEFAULT_TOTP_ISSUER,
  OTP_DIGITS,
  TOTP_PERIOD_SECONDS,
  TOTP_SECRET_BYTES,
  TOTP_WINDOW,
} from './constants.js';

/** A fresh random TOTP secret, base32 (what authenticator apps take). */
export function generateTotpSecret(): string {
  return new Secret({ size: TOTP_SECRET_BYTES }).base32;
}

/** SPEC "Configuration": issuer is `mfa_totp_issuer`, else `app_name`, else the service name. */
export function totpIssuer(settings: { mfa_totp_issuer: string; app_name: string }): string {
  return settings.mfa_totp_issuer || settings.app_name || DEFAULT_TOTP_ISSUER;
}

function totpOf(secret: string, issuer = DEFAULT_TOTP_ISSUER, label = 'user'): TOTP {
  return new TOTP({
    issuer,
    label,
    secret: Secret.fromBase32(secret),
    algorithm: 'SHA1',
    digits: OTP_DIGITS,
    period: TOTP_PERIOD_SECONDS,
  });
}

/** The `otpauth://totp/…` URI of the QR code shown at setup. */
export function totpUri(secret: string, issuer: string, label: string): string {
  return totpOf(secret, issuer, label).toString();
}

/** The 30-second step (counter) of a time. */
export function totpStep(now: Date): number {
  return Math.floor(now.getTime() / 1000 / TOTP_PERIOD_SECONDS);
}

/**
 * The step a code belongs to when it is valid within one step of `now`, else null. The caller records the
 * step so that the code works once (SPEC "Multi-factor routes" 4).
 */
export function matchTotpStep(secret: string, code: string, now: Date): number | null {
  if (!new RegExp(`^\\d{${OTP_DIGITS}}$`).test(code)) return null;
  let delta: number | null;
  try {
    delta = totpOf(secret).validate({ token: code, timestamp: now.getTime(), window: TOTP_WINDOW });
  } catch {
    return null; // an unreadable stored secret never validates
  }
  return delta === null ? null : totpStep(now) + delta;
}

/** The code of a secret at a time (tests and tools). */
export function totpCodeAt(secret: string, at: Date): string {
  return totpOf(secret).generate({ timestamp: at.getTime() });
}
