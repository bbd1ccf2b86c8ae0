import { Secret, TOTP } from 'otpauth';
import { generateTotpSecret, matchTotpStep, totpCodeAt, totpIssuer, totpStep, totpUri } from './totp.js';

describe('TOTP helpers', () => {
  const secret = generateTotpSecret();
  const reference = new TOTP({ secret: Secret.fromBase32(secret), digits: 6, period: 30, algorithm: 'SHA1' });
  const t0 = new Date('2030-01-01T00:00:10Z'); // 10 s into a step

  it('generates a 160-bit base32 secret, different each time', () => {
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    expect(generateTotpSecret()).not.toBe(secret);
  });

  it('matches a code of the current step and returns that step', () => {
    const code = reference.generate({ timestamp: t0.getTime() });
    expect(totpCodeAt(secret, t0)).toBe(code);
    expect(matchTotpStep(secret, code, t0)).toBe(totpStep(t0));
    expect(totpStep(t0)).toBe(Math.floor(t0.getTime() / 30_000));
  });

  it('accepts one step of drift either side, reporting the step the code belongs to', () => {
    const previous = new Date(t0.getTime() - 30_000);
    const next = new Date(t0.getTime() + 30_000);
    expect(matchTotpStep(secret, totpCodeAt(secret, previous), t0)).toBe(totpStep(t0) - 1);
    expect(matchTotpStep(secret, totpCodeAt(secret, next), t0)).toBe(totpStep(t0) + 1);
  });

  it('refuses codes two steps away, wrong codes and malformed input', () => {
    const old = totpCodeAt(secret, new Date(t0.getTime() - 60_000));
    const current = totpCodeAt(secret, t0);
    const candidates = [old, '12345', '1234567', 'abcdef', ''];
    // a wrong six-digit code: the current one with its last digit changed
    candidates.push(current.slice(0, 5) + String((Number(current[5]) + 1) % 10));
    for (const code of candidates) {
      if (code === current) continue;
      expect(matchTotpStep(secret, code, t0)).toBeNull();
    }
  });

  it('never validates against an unreadable secret', () => {
    expect(matchTotpStep('not base32 !!', '123456', t0)).toBeNull();
  });

  it('builds the otpauth URI with the issuer: mfa_totp_issuer, else app_name, else svc', () => {
    expect(totpIssuer({ mfa_totp_issuer: 'Acme', app_name: 'App' })).toBe('Acme');
    expect(totpIssuer({ mfa_totp_issuer: '', app_name: 'App' })).toBe('App');
    expect(totpIssuer({ mfa_totp_issuer: '', app_name: '' })).toBe('svc');
    const uri = totpUri(secret, 'Acme', 'alice@example.com');
    expect(uri).toMatch(/^otpauth:\/\/totp\//);
    expect(uri).toContain(`secret=${secret}`);
    expect(uri).toContain('issuer=Acme');
    expect(uri).toContain('period=30');
    expect(uri).toContain('digits=6');
  });
});
