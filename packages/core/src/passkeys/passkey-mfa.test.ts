import { challengeRows, enrolTotp, failedLoginCount, mfaToken } from '../../../../testing/mfa.js';
import {
  PASSKEY_TEST_ORIGIN,
  PASSKEY_TEST_SETTINGS,
  registerPasskey,
  SoftAuthenticator,
} from '../../../../testing/webauthn.js';
import { describeEachDatabase, startTestApp, type TestApp, type TestUser } from '../testing/index.js';

describeEachDatabase('Passkey as the MFA step', (database) => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ database, settings: { ...PASSKEY_TEST_SETTINGS, mfa_enabled: true } });
  });
  afterAll(() => app.close());

  /** A user with TOTP active and one passkey. */
  async function mfaUserWithPasskey(
    username: string,
  ): Promise<{ user: TestUser; device: SoftAuthenticator }> {
    const user = await app.createUser({ username });
    const device = new SoftAuthenticator(PASSKEY_TEST_ORIGIN);
    await registerPasskey(await app.loginAs(user), device);
    await enrolTotp(app, user);
    return { user, device };
  }

  it('completes a password login with a passkey assertion in place of the code', async () => {
    const { user, device } = await mfaUserWithPasskey('alice');
    const token = await mfaToken(app, user);
    const options = await app.post('/api/mfa/webauthn/options', { mfa_token: token });
    expect(options.status).toBe(200);
    expect(options.body.data.userVerification).toBe('required');
    expect(options.body.data.allowCredentials).toHaveLength(1);
    const webauthn = device.get(options.body.data);
    const res = await app.post('/api/mfa/verify', { mfa_token: token, webauthn });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ token_type: 'bearer', access_token: expect.any(String) });
    expect(await challengeRows(app, user.id)).toHaveLength(0);
    // Used: the same assertion cannot complete a second login.
    const again = await mfaToken(app, user);
    const replay = await app.post('/api/mfa/verify', { mfa_token: again, webauthn });
    expect(replay.status).toBe(401);
    expect(replay.body.detail[0]).toMatchObject({ code: 'mfa.code_invalid', loc: ['body', 'webauthn'] });
  });

  it('lets exactly one of many parallel presentations of one assertion in; the others are not guesses', async () => {
    const { user, device } = await mfaUserWithPasskey('parallel');
    const token = await mfaToken(app, user);
    const options = await app.post('/api/mfa/webauthn/options', { mfa_token: token });
    const webauthn = device.get(options.body.data);
    const before = await failedLoginCount(app, user.id);
    // More presentations than mfa_max_attempts (5): a double-submit must not use up the challenge.
    const answers = await Promise.all(
      Array.from({ length: 8 }, () => app.post('/api/mfa/verify', { mfa_token: token, webauthn })),
    );
    const statuses = answers.map((res) => res.status).sort();
    expect(statuses).toEqual([200, 401, 401, 401, 401, 401, 401, 401]);
    // A loser is refused as a replay, or, once the winner completed the login, finds no challenge.
    for (const res of answers.filter((r) => r.status === 401)) {
      expect([
        { code: 'mfa.code_invalid', loc: ['body', 'webauthn'] },
        { code: 'mfa.challenge_not_found', loc: ['body', 'mfa_token'] },
      ]).toContainEqual({ code: res.body.detail[0].code, loc: res.body.detail[0].loc });
    }
    expect(answers.find((r) => r.status === 200)!.body.access_token).toEqual(expect.any(String));
    expect(await failedLoginCount(app, user.id)).toBe(before);
    expect(await challengeRows(app, user.id)).toHaveLength(0);
  });

  it('refuses an assertion without user verification, counted like a wrong code', async () => {
    const { user, device } = await mfaUserWithPasskey('bob');
    const token = await mfaToken(app, user);
    const options = await app.post('/api/mfa/webauthn/options', { mfa_token: token });
    const before = await failedLoginCount(app, user.id);
    const res = await app.post('/api/mfa/verify', {
      mfa_token: token,
      webauthn: device.get(options.body.data, { userVerified: false }),
    });
    expect(res.status).toBe(401);
    expect(res.body.detail[0].code).toBe('mfa.code_invalid');
    expect(await failedLoginCount(app, user.id)).toBe(before + 1);
    // The challenge was used by the refused assertion: new options are needed.
    const fresh = await app.post('/api/mfa/webauthn/options', { mfa_token: token });
    const ok = await app.post('/api/mfa/verify', { mfa_token: token, webauthn: device.get(fresh.body.data) });
    expect(ok.status).toBe(200);
  });

  it("refuses options for another mfa_token's challenge and another user's passkey", async () => {
    const { user: carol, device: carolDevice } = await mfaUserWithPasskey('carol');
    const { user: dave } = await mfaUserWithPasskey('dave');
    const carolToken = await mfaToken(app, carol);
    const daveToken = await mfaToken(app, dave);
    const options = await app.post('/api/mfa/webauthn/options', { mfa_token: carolToken });
    const webauthn = carolDevice.get(options.body.data);
    expect((await app.post('/api/mfa/verify', { mfa_token: daveToken, webauthn })).status).toBe(401);
    await app.post('/api/mfa/webauthn/options', { mfa_token: daveToken });
    const foreign = await app.post('/api/mfa/verify', {
      mfa_token: daveToken,
      webauthn: carolDevice.get(options.body.data),
    });
    expect(foreign.status).toBe(401);
    expect(foreign.body.detail[0].code).toBe('mfa.code_invalid');
  });

  it('answers 400 mfa.no_passkey without passkeys and 401 mfa.token_invalid for a bad token', async () => {
    const user = await app.createUser({ username: 'erin' });
    await enrolTotp(app, user);
    const none = await app.post('/api/mfa/webauthn/options', { mfa_token: await mfaToken(app, user) });
    expect(none.status).toBe(400);
    expect(none.body.detail[0]).toMatchObject({ code: 'mfa.no_passkey', loc: ['body', 'mfa_token'] });
    const bad = await app.post('/api/mfa/webauthn/options', { mfa_token: 'not-a-token' });
    expect(bad.status).toBe(401);
    expect(bad.body.detail[0].code).toBe('mfa.token_invalid');
  });

  it('takes either code or webauthn, not both or neither (422)', async () => {
    const { user, device } = await mfaUserWithPasskey('frank');
    const token = await mfaToken(app, user);
    const options = await app.post('/api/mfa/webauthn/options', { mfa_token: token });
    const webauthn = device.get(options.body.data);
    expect((await app.post('/api/mfa/verify', { mfa_token: token, code: '123456', webauthn })).status).toBe(
      422,
    );
    expect((await app.post('/api/mfa/verify', { mfa_token: token })).status).toBe(422);
  });
});
