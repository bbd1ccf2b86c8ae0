import { describeEachCache, describeEachDatabase } from '../testing/each.js';
import { startTestApp, type TestApp } from '../testing/test-app.js';
import {
  awayFromStepBoundary,
  enrolTotp,
  failedLoginCount,
  mfaToken,
  passwordLogin,
  totpCode,
} from '../../../../testing/mfa.js';

const verify = (app: TestApp, token: string, code: string) =>
  app.post('/api/mfa/verify', { mfa_token: token, code });

// SPEC "Account login lock": wrong MFA codes count on the account "after login_max_attempts wrong codes in
// total". A correct password is not a completed login: it must not clear them, or a known password lets a
// client guess second factors without end.
describeEachDatabase('Second-factor codes on the account lock', (database) => {
  describeEachCache('with each cache', (cache) => {
    let app: TestApp;
    let counter = 0;
    const newUser = () => app.createUser({ username: `lock-${cache.kind}-${++counter}` });
    beforeAll(async () => {
      app = await startTestApp({
        database,
        cache,
        settings: { mfa_enabled: true, mfa_max_attempts: 5, login_max_attempts: 5, login_lockout_minutes: 1 },
      });
    });
    afterAll(() => app.close());

    it('one wrong code on each of five challenges locks the account: the right password does not clear them', async () => {
      const user = await newUser();
      const { secret } = await enrolTotp(app, user);
      const wrong = totpCode(secret, 20); // ten minutes ahead: outside the acceptance window
      const answers: number[] = [];
      for (let i = 0; i < 5; i += 1)
        answers.push((await verify(app, await mfaToken(app, user), wrong)).status);
      expect(answers).toEqual([401, 401, 401, 401, 429]);
      // Locked: the right password is refused like any other login.
      const res = await passwordLogin(app, user);
      expect(res.status).toBe(401);
      expect(res.body.detail[0].code).toBe('auth.invalid_credentials');
    });

    it('wrong codes add up across challenges until a second factor succeeds, which resets the counter', async () => {
      const user = await newUser();
      const { secret } = await enrolTotp(app, user);
      for (let i = 0; i < 4; i += 1) {
        expect((await verify(app, await mfaToken(app, user), totpCode(secret, 20))).status).toBe(401);
      }
      expect(await failedLoginCount(app, user.id)).toBe(4);
      await awayFromStepBoundary();
      // The next step: the current one was used to confirm the enrolment.
      const ok = await verify(app, await mfaToken(app, user), totpCode(secret, 1));
      expect(ok.status).toBe(200);
      expect(await failedLoginCount(app, user.id)).toBe(0);
    });

    it('20 parallel presentations of one valid backup code on 20 challenges: one login, 19 refusals, no lock', async () => {
      const user = await newUser();
      const { backupCodes } = await enrolTotp(app, user);
      const tokens: string[] = [];
      for (let i = 0; i < 20; i += 1) tokens.push(await mfaToken(app, user));
      const results = await Promise.all(tokens.map((t) => verify(app, t, backupCodes[0]!)));
      const statuses = results.map((r) => r.status).sort();
      expect(statuses.filter((s) => s === 200)).toHaveLength(1);
      expect(statuses.filter((s) => s === 401)).toHaveLength(19);
      for (const r of results.filter((x) => x.status === 401))
        expect(r.body.detail[0].code).toBe('mfa.code_invalid');
      // The owner of the code is not locked out by their own double-submit.
      expect(await failedLoginCount(app, user.id)).toBe(0);
      expect((await passwordLogin(app, user)).body.mfa_required).toBe(true);
    });
  });
});

// SPEC "Authentication" 8: a password change ends what was started with the old password, the pending
// second step included.
describeEachDatabase('A pending second step and a password change', (database) => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ database, settings: { mfa_enabled: true, login_max_attempts: 50 } });
  });
  afterAll(() => app.close());

  it('an mfa_token issued before an admin password change no longer completes the login', async () => {
    const admin = await app.loginAs(await app.createUser({ username: 'root', isSuperuser: true }));
    const user = await app.createUser({ username: 'pending' });
    const { secret } = await enrolTotp(app, user);
    const token = await mfaToken(app, user);
    expect(
      (await admin.patch(`/api/admin/user/${user.id}`, { password: 'a-brand-new-password-3' })).status,
    ).toBe(200);
    await awayFromStepBoundary();
    const res = await verify(app, token, totpCode(secret, 1));
    expect(res.status).toBe(401);
    expect(res.body.detail[0].code).toBe('mfa.challenge_not_found');
    // A challenge started after the change works.
    const fresh = await mfaToken(app, { username: user.username, password: 'a-brand-new-password-3' });
    expect((await verify(app, fresh, totpCode(secret, 1))).status).toBe(200);
  });
});
