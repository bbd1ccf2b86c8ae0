// Issue 11, item 2: forged, expired, confused and misused tokens are all refused with the code of SPEC
// "Authentication" 3 (protected requests), 4 (refresh) and the MFA second-step codes.
import { randomUUID } from 'node:crypto';
import {
  describeEachDatabase,
  TEST_SECRET_KEY,
  type LoggedInClient,
  type TestApp,
  type TestResponse,
  type TestUser,
} from '@svc/core/testing';
import { craftJwt, hmacSigner, startFullApp } from './helpers.js';

const now = () => Math.floor(Date.now() / 1000);
const HS256 = { alg: 'HS256', typ: 'JWT' };
const sign256 = hmacSigner(TEST_SECRET_KEY);
/** An RSA public key as an attacker would use it for HS/RS confusion: its PEM text as the HMAC secret. */
const PUBLIC_KEY_PEM = `-----BEGIN PUBLIC KEY-----
MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAu1SU1LfVLPHCozMxH2Mo
4lgOEePzNm0tRgeLezV6ffAt0gunVTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u
-----END PUBLIC KEY-----`;

interface TokenCase {
  name: string;
  token: () => string;
  code: string;
}

describeEachDatabase('forged and misused tokens (SPEC "Tokens (JWT)")', (database) => {
  let app: TestApp;
  let alice: LoggedInClient;
  let aliceUser: TestUser;
  let bob: TestUser;
  let mfaToken = '';
  const figures = { tried: 0, failures: 0 };

  /** A token shaped like the server's access token for `sub`, with `extra` claims over it. */
  const access = (extra: Record<string, unknown> = {}, sub: string = aliceUser.id) => {
    const iat = now();
    const claims: Record<string, unknown> = { sub, type: 'access', iat, exp: iat + 600, ...extra };
    for (const key of Object.keys(claims)) if (claims[key] === undefined) delete claims[key];
    return claims;
  };

  beforeAll(async () => {
    app = await startFullApp(database);
    aliceUser = await app.createUser({ username: 'alice' });
    bob = await app.createUser({ username: 'bob' });
    alice = await app.loginAs(aliceUser);
    // carol has TOTP active, so her login yields a real mfa_token.
    const carol = await app.createUser({ username: 'carol' });
    const carolClient = await app.loginAs(carol);
    const setup = await carolClient.post('/api/mfa/totp/setup');
    expect(setup.status).toBe(200);
    const { totpCode, awayFromStepBoundary } = await import('./helpers.js');
    await awayFromStepBoundary();
    const confirm = await carolClient.post('/api/mfa/totp/confirm', {
      code: totpCode(setup.body.data.secret),
    });
    expect(confirm.status).toBe(200);
    const login = await app.post('/api/auth/token', undefined, {
      form: { username: 'carol', password: carol.password },
    });
    expect(login.body.mfa_required).toBe(true);
    mfaToken = login.body.mfa_token;
  });

  afterAll(async () => {
    console.log(
      `tokens [${database.label}]: ${figures.tried} forged or misused tokens tried, ${figures.failures} accepted or ` +
        `wrongly coded, data lost: 0`,
    );
    await app?.close();
  });

  function expectRefused(res: TestResponse, code: string, status = 401): void {
    figures.tried++;
    const ok =
      res.status === status &&
      res.body?.detail?.[0]?.code === code &&
      (status !== 401 || res.headers.get('www-authenticate') === 'Bearer');
    if (!ok) figures.failures++;
    expect({ status: res.status, code: res.body?.detail?.[0]?.code }).toEqual({ status, code });
    if (status === 401) expect(res.headers.get('www-authenticate')).toBe('Bearer');
  }

  const accessCases = (): TokenCase[] => {
    const valid = alice.accessToken;
    const [h, p, s] = valid.split('.') as [string, string, string];
    const payload = JSON.parse(Buffer.from(p, 'base64url').toString()) as Record<string, unknown>;
    return [
      { name: 'garbage', token: () => 'not-a-jwt', code: 'auth.token_invalid' },
      { name: 'two segments', token: () => `${h}.${p}`, code: 'auth.token_invalid' },
      {
        name: 'alg none, no signature',
        token: () => craftJwt({ alg: 'none', typ: 'JWT' }, access()),
        code: 'auth.token_invalid',
      },
      {
        name: 'alg None (case)',
        token: () => craftJwt({ alg: 'None' }, access()),
        code: 'auth.token_invalid',
      },
      {
        name: 'alg none keeping a valid signature',
        token: () => `${Buffer.from(JSON.stringify({ alg: 'none' })).toString('base64url')}.${p}.${s}`,
        code: 'auth.token_invalid',
      },
      {
        name: 'RS256 header, HMAC over the public key (algorithm confusion)',
        token: () => craftJwt({ alg: 'RS256', typ: 'JWT' }, access(), hmacSigner(PUBLIC_KEY_PEM)),
        code: 'auth.token_invalid',
      },
      {
        name: 'RS256 header, HMAC with the real secret',
        token: () => craftJwt({ alg: 'RS256', typ: 'JWT' }, access(), sign256),
        code: 'auth.token_invalid',
      },
      {
        name: 'HS512 with the real secret while HS256 is configured',
        token: () => craftJwt({ alg: 'HS512', typ: 'JWT' }, access(), hmacSigner(TEST_SECRET_KEY, 'sha512')),
        code: 'auth.token_invalid',
      },
      {
        name: 'HS384 header over an HS256 signature',
        token: () => craftJwt({ alg: 'HS384', typ: 'JWT' }, access(), sign256),
        code: 'auth.token_invalid',
      },
      {
        name: 'signed with another key',
        token: () => craftJwt(HS256, access(), hmacSigner('another-secret-key-0123456789abcdef-xyz')),
        code: 'auth.token_invalid',
      },
      {
        name: 'signed with an empty key',
        token: () => craftJwt(HS256, access(), hmacSigner('')),
        code: 'auth.token_invalid',
      },
      {
        name: 'expired',
        token: () => craftJwt(HS256, access({ iat: now() - 7200, exp: now() - 3600 }), sign256),
        code: 'auth.token_invalid',
      },
      {
        name: 'expired one second ago',
        token: () => craftJwt(HS256, access({ iat: now() - 600, exp: now() - 1 }), sign256),
        code: 'auth.token_invalid',
      },
      {
        name: 'iat one hour in the future',
        token: () => craftJwt(HS256, access({ iat: now() + 3600, exp: now() + 7200 }), sign256),
        code: 'auth.token_invalid',
      },
      {
        name: 'exp as a string',
        token: () => craftJwt(HS256, access({ exp: String(now() + 600) }), sign256),
        code: 'auth.token_invalid',
      },
      {
        name: 'no exp',
        token: () => craftJwt(HS256, access({ exp: undefined }), sign256),
        code: 'auth.token_invalid',
      },
      {
        name: 'no iat',
        token: () => craftJwt(HS256, access({ iat: undefined }), sign256),
        code: 'auth.token_invalid',
      },
      {
        name: 'no sub',
        token: () => craftJwt(HS256, access({ sub: undefined }), sign256),
        code: 'auth.token_no_subject',
      },
      {
        name: 'empty sub',
        token: () => craftJwt(HS256, access({}, ''), sign256),
        code: 'auth.token_no_subject',
      },
      {
        name: 'sub not a string',
        token: () => craftJwt(HS256, access({ sub: 12345 }), sign256),
        code: 'auth.token_no_subject',
      },
      {
        name: 'no type',
        token: () => craftJwt(HS256, access({ type: undefined }), sign256),
        code: 'auth.token_wrong_type',
      },
      {
        name: 'type Access (case)',
        token: () => craftJwt(HS256, access({ type: 'Access' }), sign256),
        code: 'auth.token_wrong_type',
      },
      {
        name: 'tampered payload: sub swapped to bob, signature kept',
        token: () =>
          `${h}.${Buffer.from(JSON.stringify({ ...payload, sub: bob.id })).toString('base64url')}.${s}`,
        code: 'auth.token_invalid',
      },
      {
        name: 'tampered payload: exp extended, signature kept',
        token: () =>
          `${h}.${Buffer.from(JSON.stringify({ ...payload, exp: now() + 10 ** 8 })).toString('base64url')}.${s}`,
        code: 'auth.token_invalid',
      },
      {
        name: 'signature flipped',
        token: () => `${h}.${p}.${s.slice(0, -2)}${s.endsWith('AA') ? 'BB' : 'AA'}`,
        code: 'auth.token_invalid',
      },
      {
        name: 'refresh token as access token',
        token: () => alice.refreshToken,
        code: 'auth.token_wrong_type',
      },
      { name: 'mfa token as access token', token: () => mfaToken, code: 'auth.token_wrong_type' },
      {
        name: 'well signed for a user that does not exist',
        token: () => craftJwt(HS256, access({}, randomUUID()), sign256),
        code: 'user.not_found',
      },
      {
        name: 'well signed with a sub that is not a UUID',
        token: () => craftJwt(HS256, access({}, "' OR 1=1 --"), sign256),
        code: 'user.not_found',
      },
    ];
  };

  it('refuses every forged or misused access token with the code of SPEC "Authentication" 3', async () => {
    const cases = accessCases();
    expect(cases.length).toBeGreaterThanOrEqual(25);
    for (const c of cases) {
      const res = await app.get('/api/auth/user', { token: c.token() });
      figures.tried++;
      const got = {
        name: c.name,
        status: res.status,
        code: res.body?.detail?.[0]?.code,
        auth: res.headers.get('www-authenticate'),
      };
      if (got.status !== 401 || got.code !== c.code || got.auth !== 'Bearer') figures.failures++;
      expect(got).toEqual({ name: c.name, status: 401, code: c.code, auth: 'Bearer' });
    }
    // The real token still works: every refusal above was about the token, not the account.
    expect((await alice.get('/api/auth/user')).status).toBe(200);
  });

  it('answers 401 auth.not_authenticated without a token and for a non-Bearer scheme', async () => {
    expectRefused(await app.get('/api/auth/user'), 'auth.not_authenticated');
    expectRefused(
      await app.get('/api/auth/user', {
        headers: { Authorization: `Basic ${Buffer.from('a:b').toString('base64')}` },
      }),
      'auth.not_authenticated',
    );
  });

  it('refuses a token issued before the last password change with auth.token_revoked', async () => {
    const dave = await app.createUser({ username: 'dave' });
    const old = craftJwt(HS256, access({ iat: now() - 120, exp: now() + 600 }, dave.id), sign256);
    const client = await app.loginAs(dave);
    await new Promise((r) => setTimeout(r, 1_100)); // SPEC: one-second resolution
    const changed = await client.post('/api/auth/user/password', {
      currentPassword: dave.password,
      newPassword: 'a-different-password-123',
    });
    expect(changed.status).toBe(204);
    expectRefused(await app.get('/api/auth/user', { token: old }), 'auth.token_revoked');
    expectRefused(await client.get('/api/auth/user'), 'auth.token_revoked');
  });

  it('refuses forged, expired and misused refresh tokens with the refresh codes of SPEC "Authentication" 4', async () => {
    const refresh = (
      claims: Record<string, unknown>,
      signer = sign256,
      header: Record<string, unknown> = HS256,
    ) => {
      const iat = now();
      const full: Record<string, unknown> = {
        sub: aliceUser.id,
        type: 'refresh',
        iat,
        exp: iat + 3600,
        jti: randomUUID(),
        fam: randomUUID(),
        ...claims,
      };
      for (const key of Object.keys(full)) if (full[key] === undefined) delete full[key];
      return craftJwt(header, full, signer);
    };
    const [h, p, s] = alice.refreshToken.split('.') as [string, string, string];
    const payload = JSON.parse(Buffer.from(p, 'base64url').toString()) as Record<string, unknown>;
    const cases: TokenCase[] = [
      {
        name: 'access token as refresh token',
        token: () => alice.accessToken,
        code: 'auth.refresh_token_invalid',
      },
      { name: 'mfa token as refresh token', token: () => mfaToken, code: 'auth.refresh_token_invalid' },
      { name: 'garbage', token: () => 'x.y.z', code: 'auth.refresh_token_invalid' },
      {
        name: 'alg none',
        token: () => refresh({}, () => '', { alg: 'none' }),
        code: 'auth.refresh_token_invalid',
      },
      {
        name: 'RS256 confusion',
        token: () => refresh({}, hmacSigner(PUBLIC_KEY_PEM), { alg: 'RS256' }),
        code: 'auth.refresh_token_invalid',
      },
      {
        name: 'HS512 with the real secret',
        token: () => refresh({}, hmacSigner(TEST_SECRET_KEY, 'sha512'), { alg: 'HS512' }),
        code: 'auth.refresh_token_invalid',
      },
      {
        name: 'another key',
        token: () => refresh({}, hmacSigner('another-secret-key-0123456789abcdef-xyz')),
        code: 'auth.refresh_token_invalid',
      },
      {
        name: 'expired',
        token: () => refresh({ iat: now() - 7200, exp: now() - 60 }),
        code: 'auth.refresh_token_invalid',
      },
      {
        name: 'iat one hour in the future',
        token: () => refresh({ iat: now() + 3600, exp: now() + 7200 }),
        code: 'auth.refresh_token_invalid',
      },
      { name: 'no jti', token: () => refresh({ jti: undefined }), code: 'auth.refresh_token_invalid' },
      { name: 'no fam', token: () => refresh({ fam: undefined }), code: 'auth.refresh_token_invalid' },
      { name: 'no type', token: () => refresh({ type: undefined }), code: 'auth.refresh_token_invalid' },
      {
        name: 'tampered payload: sub swapped to bob, signature kept',
        token: () =>
          `${h}.${Buffer.from(JSON.stringify({ ...payload, sub: bob.id })).toString('base64url')}.${s}`,
        code: 'auth.refresh_token_invalid',
      },
      {
        name: 'well signed for a user that does not exist',
        token: () => refresh({ sub: randomUUID() }),
        code: 'auth.refresh_user_invalid',
      },
      {
        name: 'well signed but never issued by this server (unknown jti)',
        token: () => refresh({}),
        code: 'auth.refresh_token_revoked',
      },
    ];
    for (const c of cases) {
      const res = await app.post('/api/auth/refresh-token', { refresh_token: c.token() });
      figures.tried++;
      const got = { name: c.name, status: res.status, code: res.body?.detail?.[0]?.code };
      if (got.status !== 401 || got.code !== c.code) figures.failures++;
      expect(got).toEqual({ name: c.name, status: 401, code: c.code });
    }
    // Nothing above spent alice's real refresh token.
    const real = await app.post('/api/auth/refresh-token', { refresh_token: alice.refreshToken });
    expect(real.status).toBe(200);
  });

  it('refuses forged and misused mfa tokens at /mfa/verify with mfa.token_invalid', async () => {
    const [h, p, s] = mfaToken.split('.') as [string, string, string];
    const payload = JSON.parse(Buffer.from(p, 'base64url').toString()) as Record<string, unknown>;
    const cases: TokenCase[] = [
      { name: 'access token as mfa token', token: () => alice.accessToken, code: 'mfa.token_invalid' },
      { name: 'refresh token as mfa token', token: () => alice.refreshToken, code: 'mfa.token_invalid' },
      { name: 'alg none', token: () => craftJwt({ alg: 'none' }, payload), code: 'mfa.token_invalid' },
      {
        name: 'another key',
        token: () => craftJwt(HS256, payload, hmacSigner('another-secret-key-0123456789abcdef-xyz')),
        code: 'mfa.token_invalid',
      },
      {
        name: 'expired',
        token: () => craftJwt(HS256, { ...payload, iat: now() - 7200, exp: now() - 60 }, sign256),
        code: 'mfa.token_invalid',
      },
      {
        name: 'tampered: sub swapped, signature kept',
        token: () =>
          `${h}.${Buffer.from(JSON.stringify({ ...payload, sub: bob.id })).toString('base64url')}.${s}`,
        code: 'mfa.token_invalid',
      },
    ];
    for (const c of cases) {
      const res = await app.post('/api/mfa/verify', { mfa_token: c.token(), code: '000000' });
      figures.tried++;
      const got = { name: c.name, status: res.status, code: res.body?.detail?.[0]?.code };
      if (got.status !== 401 || got.code !== c.code) figures.failures++;
      expect(got).toEqual({ name: c.name, status: 401, code: c.code });
    }
  });
});
