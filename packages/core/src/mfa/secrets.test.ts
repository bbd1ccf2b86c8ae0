import {
  decryptSecret,
  deriveMfaKeys,
  encryptSecret,
  ENCRYPTED_SECRET_PREFIX,
  hashCode,
  hashesEqual,
  isEncryptedSecret,
} from './secrets.js';
import { TOTP_SECRET_COLUMN_LENGTH } from './constants.js';
import { generateTotpSecret } from './totp.js';

const SECRET_KEY = 'k'.repeat(40);

describe('MFA secrets', () => {
  const keys = deriveMfaKeys({ mfa_encryption_key: '', secret_key: SECRET_KEY });

  it('encrypts a TOTP secret to a prefixed value that fits the 255-character column and decrypts it', () => {
    const secret = generateTotpSecret();
    const stored = encryptSecret(secret, keys.encryption);
    expect(stored.startsWith(ENCRYPTED_SECRET_PREFIX)).toBe(true);
    expect(stored).not.toContain(secret);
    expect(stored.length).toBeLessThanOrEqual(TOTP_SECRET_COLUMN_LENGTH);
    expect(isEncryptedSecret(stored)).toBe(true);
    expect(decryptSecret(stored, keys.encryption)).toBe(secret);
    // a fresh IV each time
    expect(encryptSecret(secret, keys.encryption)).not.toBe(stored);
  });

  it('reads a legacy plain-text secret as it is', () => {
    expect(isEncryptedSecret('JBSWY3DPEHPK3PXP')).toBe(false);
    expect(decryptSecret('JBSWY3DPEHPK3PXP', keys.encryption)).toBe('JBSWY3DPEHPK3PXP');
  });

  it('uses mfa_encryption_key when set, so another key cannot decrypt (and tampering is detected)', () => {
    const own = deriveMfaKeys({ mfa_encryption_key: 'm'.repeat(40), secret_key: SECRET_KEY });
    expect(own.encryption.equals(keys.encryption)).toBe(false);
    const stored = encryptSecret('JBSWY3DPEHPK3PXP', own.encryption);
    expect(decryptSecret(stored, own.encryption)).toBe('JBSWY3DPEHPK3PXP');
    expect(decryptSecret(stored, keys.encryption)).toBeNull();
    const body = Buffer.from(stored.slice(ENCRYPTED_SECRET_PREFIX.length), 'base64');
    body[body.length - 1]! ^= 1;
    expect(decryptSecret(`${ENCRYPTED_SECRET_PREFIX}${body.toString('base64')}`, own.encryption)).toBeNull();
    expect(decryptSecret(`${ENCRYPTED_SECRET_PREFIX}short`, own.encryption)).toBeNull();
  });

  it('derives the same keys from the same material (secrets survive a restart)', () => {
    const again = deriveMfaKeys({ mfa_encryption_key: '', secret_key: SECRET_KEY });
    expect(again.encryption.equals(keys.encryption)).toBe(true);
    expect(again.codeHash.equals(keys.codeHash)).toBe(true);
    expect(keys.codeHash.equals(keys.encryption)).toBe(false);
  });

  it('hashes codes with the key and the purpose, comparing in constant time', () => {
    const a = hashCode(keys.codeHash, 'login:1', '123456');
    expect(a).toMatch(/^[0-9a-f]{64}$/);
    expect(hashesEqual(a, hashCode(keys.codeHash, 'login:1', '123456'))).toBe(true);
    expect(hashesEqual(a, hashCode(keys.codeHash, 'login:2', '123456'))).toBe(false);
    expect(hashesEqual(a, hashCode(keys.codeHash, 'login:1', '123457'))).toBe(false);
    expect(hashesEqual(a, '')).toBe(false);
  });
});
