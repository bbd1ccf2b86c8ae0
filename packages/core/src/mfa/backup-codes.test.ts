import { generateBackupCodes, normaliseBackupCode } from './backup-codes.js';
import { generateOtpCode, normaliseOtpCode } from './one-time-codes.js';

describe('backup codes', () => {
  it('come as a set of eight distinct xxxx-xxxx codes', () => {
    const codes = generateBackupCodes();
    expect(codes).toHaveLength(8);
    expect(new Set(codes).size).toBe(8);
    for (const code of codes) expect(code).toMatch(/^[a-z2-9]{4}-[a-z2-9]{4}$/);
    expect(generateBackupCodes()).not.toEqual(codes);
  });

  it('normalise case, spaces and the dash; anything else is not a backup code', () => {
    const [code] = generateBackupCodes();
    const plain = code!.replace('-', '');
    expect(normaliseBackupCode(code!)).toBe(plain);
    expect(normaliseBackupCode(` ${code!.toUpperCase()} `)).toBe(plain);
    expect(normaliseBackupCode(plain)).toBe(plain);
    for (const bad of ['123456', 'abcd-efg', 'abcd-efghi', 'abc0-efgh', ''])
      expect(normaliseBackupCode(bad)).toBeNull();
  });
});

describe('email and SMS codes', () => {
  it('are six digits, leading zeros kept', () => {
    for (let i = 0; i < 200; i++) expect(generateOtpCode()).toMatch(/^\d{6}$/);
  });

  it('are recognised with spaces ignored', () => {
    expect(normaliseOtpCode(' 012 345 ')).toBe('012345');
    expect(normaliseOtpCode('12345')).toBeNull();
    expect(normaliseOtpCode('abcd-efgh')).toBeNull();
  });
});
