import {
  createCipheriv,
  createDecipheriv,
  createHmac,
  hkdfSync,
  randomBytes,
  timingSafeEqual,
} from 'node:crypto';

/** Prefix of an encrypted TOTP secret; anything else in the column is a legacy plain-text secret. */
export const ENCRYPTED_SECRET_PREFIX = 'enc:v1:';

const IV_BYTES = 12;
const TAG_BYTES = 16;
// Fixed HKDF salt and infos: the keys depend only on the configured key material (SPEC "MFA configuration").
const HKDF_SALT = 'svc.mfa.v1';
const ENCRYPTION_INFO = 'totp-secret-encryption';
const CODE_HASH_INFO = 'mfa-code-hash';

/** The keys MFA derives from `mfa_encryption_key`, else `secret_key`. */
export interface MfaKeys {
  /** AES-256-GCM key of stored TOTP secrets. */
  encryption: Buffer;
  /** HMAC-SHA256 key of stored backup codes and email/SMS codes. */
  codeHash: Buffer;
}

/**
 * Derives the MFA keys (HKDF-SHA256). SPEC "MFA configuration": key from `mfa_encryption_key`, or from
 * `secret_key` when that is empty (SPEC "Startup rules" 2: changing it makes stored secrets unreadable).
 * @example const keys = deriveMfaKeys({ mfa_encryption_key: '', secret_key: settings.secret_key });
 */
export function deriveMfaKeys(settings: { mfa_encryption_key: string; secret_key: string }): MfaKeys {
  const material = settings.mfa_encryption_key || settings.secret_key;
  const derive = (info: string) => Buffer.from(hkdfSync('sha256', material, HKDF_SALT, info, 32));
  return { encryption: derive(ENCRYPTION_INFO), codeHash: derive(CODE_HASH_INFO) };
}

/** Encrypts a TOTP secret for the database: `enc:v1:<base64 of iv | tag | ciphertext>` (fits 255 characters). */
export function encryptSecret(plain: string, key: Buffer): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const ciphertext = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
  const packed = Buffer.concat([iv, cipher.getAuthTag(), ciphertext]);
  return `${ENCRYPTED_SECRET_PREFIX}${packed.toString('base64')}`;
}

/** Whether a stored value is encrypted (otherwise a legacy plain-text secret). */
export function isEncryptedSecret(stored: string): boolean {
  return stored.startsWith(ENCRYPTED_SECRET_PREFIX);
}

/**
 * The plain TOTP secret of a stored value. Legacy plain-text values are returned as they are (SPEC "MFA
 * configuration": they keep working until re-encrypted); null when the value cannot be decrypted with this key.
 */
export function decryptSecret(stored: string, key: Buffer): string | null {
  if (!isEncryptedSecret(stored)) return stored;
  try {
    const packed = Buffer.from(stored.slice(ENCRYPTED_SECRET_PREFIX.length), 'base64');
    if (packed.length <= IV_BYTES + TAG_BYTES) return null;
    const decipher = createDecipheriv('aes-256-gcm', key, packed.subarray(0, IV_BYTES));
    decipher.setAuthTag(packed.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
    return Buffer.concat([decipher.update(packed.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString(
      'utf8',
    );
  } catch {
    return null;
  }
}

/**
 * Keyed hash of a one-time value (backup code, email/SMS code) bound to its purpose, so a stolen table reveals
 * no usable code and a hash of one purpose cannot stand in for another.
 */
export function hashCode(key: Buffer, purpose: string, value: string): string {
  return createHmac('sha256', key).update(`${purpose}\0${value}`).digest('hex');
}

/** Constant-time comparison of two hex hashes. */
export function hashesEqual(a: string, b: string): boolean {
  const x = Buffer.from(a, 'hex');
  const y = Buffer.from(b, 'hex');
  return x.length === y.length && x.length > 0 && timingSafeEqual(x, y);
}
