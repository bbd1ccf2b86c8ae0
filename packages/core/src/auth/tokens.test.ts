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
});
