import jwt from 'jsonwebtoken';
import { describeEachDatabase } from '../testing/each.js';
import { startTestApp, TEST_SECRET_KEY, type TestApp } from '../testing/test-app.js';
import { capturingSender, enrolTotp, mfaToken } from '../../../../testing/mfa.js';

// The mfa_token is issued and checked by auth's token service (the `tokens` port), so it follows the rules of
// every token of SPEC "Tokens (JWT)" and "Authentication" 3, not rules of its own.
describeEachDatabase('MFA token', (database) => {
  let app: TestApp;
  let counter = 0;

  beforeAll(async () => {
    app = await startTestApp({
      database,
      mfaSender: capturingSender(),
      settings: { mfa_enabled: true, mfa_otp_expire_minutes: 7, login_max_attempts: 50 },
    });
  });
  afterAll(() => app.close());

  it('is valid mfa_otp_expire_minutes and carries the challenge and the password-change claims', async () => {
    const user = await app.createUser({ username: `token${++counter}` });
    await enrolTotp(app, user);
    const claims = jwt.decode(await mfaToken(app, user)) as Record<string, unknown>;
    expect(claims).toMatchObject({ type: 'mfa', sub: user.id, cid: expect.any(String), pwc: null });
    expect((claims.exp as number) - (claims.iat as number)).toBe(7 * 60);
  });

  it('refuses a token issued in the future with 401 mfa.token_invalid, like every other token', async () => {
    const user = await app.createUser({ username: `token${++counter}` });
    await enrolTotp(app, user);
    const {
      iat: _iat,
      exp: _exp,
      ...claims
    } = jwt.decode(await mfaToken(app, user)) as Record<string, unknown>;
    const later = Math.floor(Date.now() / 1000) + 3600;
    const future = jwt.sign({ ...claims, iat: later, exp: later + 600 }, TEST_SECRET_KEY, {
      algorithm: 'HS256',
    });
    const res = await app.post('/api/mfa/verify', { mfa_token: future, code: '123456' });
    expect(res.status).toBe(401);
    expect(res.body.detail[0]).toMatchObject({ code: 'mfa.token_invalid', loc: ['body', 'mfa_token'] });
  });
});
