import { createHmac } from 'node:crypto';
import jwt from 'jsonwebtoken';
import { SettingsSchema } from '../kernel/config/schema.js';
import { TOKEN_TYPES } from './constants.js';
import { createTokenSigner } from './tokens.js';

const SECRET = 'a-secret-key-for-the-signer-test-0123456789';

// SPEC "Tokens (JWT)": the signer writes the compact JWS itself; each token must be the one jsonwebtoken makes
// of the same claims with the same key, for every `algorithm`, and pass the signer's own check.
describe.each(['HS256', 'HS384', 'HS512'] as const)('Token signer (%s)', (algorithm) => {
  const at = new Date('2026-11-25T02:00:00.500Z');
  const signer = createTokenSigner({
    settings: SettingsSchema.parse({ secret_key: SECRET, algorithm }),
    now: () => at,
  });

  it.each([
    [
      'access',
      () => signer.signAccess('0b7c2f2e-5d1f-4c59-9d43-1f1f3e1a2b3c', 'f0e1d2c3-b4a5-4697-8899-aabbccddeeff'),
    ],
    ['access without sid', () => signer.signAccess('0b7c2f2e-5d1f-4c59-9d43-1f1f3e1a2b3c')],
    ['refresh', () => signer.signRefresh('0b7c2f2e-5d1f-4c59-9d43-1f1f3e1a2b3c').token],
    ['mfa', () => signer.signMfa('0b7c2f2e-5d1f-4c59-9d43-1f1f3e1a2b3c', { cid: 'x', pca: null })],
  ])('signs %s tokens as jsonwebtoken does', (_kind, make) => {
    const token = make();
    const claims = jwt.decode(token, { complete: true });
    expect(claims?.header).toEqual({ alg: algorithm, typ: 'JWT' });
    expect(jwt.sign(claims!.payload as object, SECRET, { algorithm })).toBe(token);
    expect(jwt.verify(token, SECRET, { algorithms: [algorithm], clockTimestamp: 1795572000 })).toMatchObject({
      iat: 1795572000,
    });
  });

  it('checks its own tokens, and refuses one signed with another algorithm or key', () => {
    const token = signer.signAccess('0b7c2f2e-5d1f-4c59-9d43-1f1f3e1a2b3c');
    expect(signer.check(token, TOKEN_TYPES.access)).toMatchObject({ ok: true });
    const claims = jwt.decode(token) as object;
    const other = algorithm === 'HS256' ? 'HS512' : 'HS256';
    expect(signer.check(jwt.sign(claims, SECRET, { algorithm: other }), TOKEN_TYPES.access)).toEqual({
      ok: false,
      failure: 'invalid',
    });
    expect(signer.check(jwt.sign(claims, `${SECRET}!`, { algorithm }), TOKEN_TYPES.access)).toEqual({
      ok: false,
      failure: 'invalid',
    });
  });

  it('verifies as jwt.verify does: expiry, not-before, header order, other algorithms, encodings', () => {
    const now = Math.floor(at.getTime() / 1000);
    const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const hash = { HS256: 'sha256', HS384: 'sha384', HS512: 'sha512' }[algorithm];
    const signed = (head: object, claims: object) => {
      const input = `${part(head)}.${part(claims)}`;
      return `${input}.${createHmac(hash, SECRET).update(input).digest('base64url')}`;
    };
    const claims = { sub: 'u', type: 'access', iat: now - 10 };
    const valid = signer.signAccess('u');
    const [h, p, s] = valid.split('.') as [string, string, string];
    const tokens = {
      'expires this second': jwt.sign({ ...claims, exp: now }, SECRET, { algorithm }),
      'expires next second': jwt.sign({ ...claims, exp: now + 1 }, SECRET, { algorithm }),
      'not before the next second': jwt.sign({ ...claims, exp: now + 60, nbf: now + 1 }, SECRET, {
        algorithm,
      }),
      'not before this second': jwt.sign({ ...claims, exp: now + 60, nbf: now }, SECRET, { algorithm }),
      'exp as text': signed({ alg: algorithm, typ: 'JWT' }, { ...claims, exp: String(now + 60) }),
      'header keys reordered': signed({ typ: 'JWT', alg: algorithm }, { ...claims, exp: now + 60 }),
      'header without typ': signed({ alg: algorithm }, { ...claims, exp: now + 60 }),
      'header of another algorithm': signed({ alg: algorithm === 'HS256' ? 'HS384' : 'HS256' }, claims),
      'payload not JSON': `${h}.${Buffer.from('not json').toString('base64url')}.${createHmac(hash, SECRET)
        .update(`${h}.${Buffer.from('not json').toString('base64url')}`)
        .digest('base64url')}`,
      'signature padded': `${h}.${p}.${s}=`,
      'signature cut': `${h}.${p}.${s.slice(0, -1)}`,
      'signature empty': `${h}.${p}.`,
      'four parts': `${h}.${p}.${s}.${s}`,
      'no payload': `${h}..${s}`,
      empty: '',
    };
    const byJsonwebtoken = (token: string) => {
      try {
        return (
          typeof jwt.verify(token, SECRET, { algorithms: [algorithm], clockTimestamp: now }) === 'object'
        );
      } catch {
        return false;
      }
    };
    const accepted = (check: (token: string) => boolean) =>
      Object.entries(tokens)
        .filter(([, token]) => check(token))
        .map(([name]) => name);
    expect(accepted((token) => signer.check(token, TOKEN_TYPES.access).ok)).toEqual(accepted(byJsonwebtoken));
    expect(accepted(byJsonwebtoken)).toEqual([
      'expires next second',
      'not before this second',
      'header keys reordered',
      'header without typ',
    ]);
  });
});
