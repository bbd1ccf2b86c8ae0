import { eq } from 'drizzle-orm';
import jwt from 'jsonwebtoken';
import { encryptPlainMfaSecrets } from '../internal.js';
import {
  describeEachCache,
  describeEachDatabase,
  type TestCache,
  type TestDatabase,
} from '../testing/each.js';
import { startTestApp, TEST_SECRET_KEY, type TestApp, type TestUser } from '../testing/test-app.js';
import {
  awayFromStepBoundary,
  capturingSender,
  challengeRows,
  configRow,
  dbOf,
  enrolTotp,
  eventually,
  failedLoginCount,
  mfaToken,
  passwordLogin,
  totpCode,
} from '../../../../testing/mfa.js';
import { generateTotpSecret } from './totp.js';

const detail = (res: { body: { detail: { code: string; loc: unknown[] }[] } }) => res.body.detail[0]!;

describeEachDatabase('MFA login challenge', (database) => {
  let app: TestApp;
  const sender = capturingSender();
  let counter = 0;
  const newUser = (email = false) => {
    const username = `login${++counter}`;
    return app.createUser({ username, email: email ? `${username}@example.com` : null });
  };

  beforeAll(async () => {
    app = await startTestApp({
      database,
      mfaSender: sender,
      settings: {
        mfa_enabled: true,
        mfa_max_attempts: 3,
        login_max_attempts: 50,
        mfa_send_cooldown_seconds: 0,
      },
    });
  });
  afterAll(() => app.close());

  it('end to end: TOTP enrolment, login through the challenge, a backup code, then disabling MFA', async () => {
    const user = await newUser();
    const before = await app.loginAs(user); // token from before enrolment, used for disable at the end
    const { secret, backupCodes, confirmCode } = await enrolTotp(app, user);

    const login = await passwordLogin(app, user);
    expect(login.status).toBe(200);
    expect(login.body).toEqual({ mfa_required: true, mfa_token: expect.any(String) });
    const claims = jwt.decode(login.body.mfa_token) as Record<string, unknown>;
    expect(claims).toMatchObject({ type: 'mfa', sub: user.id });
    expect((claims.exp as number) - (claims.iat as number)).toBe(10 * 60);
    expect(await challengeRows(app, user.id)).toHaveLength(1);

    // the code used to confirm counts as used (SPEC "MFA enrolment"), and the answer says so, as confirm's does
    const reused = await app.post('/api/mfa/verify', { mfa_token: login.body.mfa_token, code: confirmCode });
    expect(reused.status).toBe(401);
    expect(detail(reused)).toMatchObject({
      code: 'mfa.code_invalid',
      loc: ['body', 'code'],
      msg: 'The code is wrong or was already used.',
      params: { reason: 'used' },
    });
    expect(await failedLoginCount(app, user.id)).toBe(0);

    await awayFromStepBoundary();
    const next = totpCode(secret, 1); // the next step is inside the window and later than the confirm step
    const ok = await app.post('/api/mfa/verify', { mfa_token: login.body.mfa_token, code: next });
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({
      access_token: expect.any(String),
      token_type: 'bearer',
      refresh_token: expect.any(String),
    });
    expect((await app.as(ok.body.access_token).get('/api/mfa/status')).body.data).toEqual({
      enabled: true,
      method: 'totp',
    });
    expect(await challengeRows(app, user.id)).toHaveLength(0);
    expect((await configRow(app, user.id))!.lastTotpStep).toBe(Math.floor(Date.now() / 30_000) + 1);
    // the challenge is gone
    const again = await app.post('/api/mfa/verify', { mfa_token: login.body.mfa_token, code: next });
    expect(again.status).toBe(401);
    expect(detail(again).code).toBe('mfa.challenge_not_found');
    // the same TOTP code on a new challenge: used once only
    const second = await mfaToken(app, user);
    const replay = await app.post('/api/mfa/verify', { mfa_token: second, code: next });
    expect(replay.status).toBe(401);
    expect(detail(replay)).toMatchObject({ code: 'mfa.code_invalid', params: { reason: 'used' } });

    // a backup code works once
    const backup = await app.post('/api/mfa/verify', {
      mfa_token: second,
      code: backupCodes[0]!.toUpperCase(),
    });
    expect(backup.status).toBe(200);
    expect(JSON.parse((await configRow(app, user.id))!.backupCodes)).toHaveLength(7);
    const third = await mfaToken(app, user);
    const backupAgain = await app.post('/api/mfa/verify', { mfa_token: third, code: backupCodes[0] });
    expect(backupAgain.status).toBe(401);
    expect(detail(backupAgain)).toMatchObject({ code: 'mfa.code_invalid', params: { reason: 'used' } });

    // disable: login needs no second step any more
    expect((await before.post('/api/mfa/disable', { password: user.password })).status).toBe(200);
    const plain = await passwordLogin(app, user);
    expect(plain.status).toBe(200);
    expect(plain.body.access_token).toEqual(expect.any(String));
    expect(await challengeRows(app, user.id)).toHaveLength(0);
  });

  // The login reads the MFA state with the user's row (kernel/ports.ts `loginState`), or, when the name is
  // found only in its normal form, looks it up itself (auth/service.ts): both ask for the step exactly while
  // a configuration is active.
  it('asks for the second step only while MFA is active, whichever way the login found the user', async () => {
    const user = await newUser();
    const client = await app.loginAs(user);
    // The name in full-width letters: not stored as written, found by its normal form.
    const fullWidth = {
      username: [...user.username].map((ch) => String.fromCharCode(ch.charCodeAt(0) + 0xfee0)).join(''),
      password: user.password,
    };
    expect((await client.post('/api/mfa/totp/setup')).status).toBe(200);
    for (const as of [user, fullWidth]) {
      const pending = await passwordLogin(app, as);
      expect(pending.status).toBe(200);
      expect(pending.body.access_token).toEqual(expect.any(String));
    }
    expect(await challengeRows(app, user.id)).toHaveLength(0);

    await client.post('/api/mfa/disable', { password: user.password });
    await enrolTotp(app, user);
    for (const as of [user, fullWidth]) {
      const login = await passwordLogin(app, as);
      expect(login.status).toBe(200);
      expect(login.body).toEqual({ mfa_required: true, mfa_token: expect.any(String) });
    }
    expect(await challengeRows(app, user.id)).toHaveLength(2);
  });

  it('regenerated backup codes replace the old set', async () => {
    const user = await newUser();
    const client = await app.loginAs(user);
    const { backupCodes } = await enrolTotp(app, user);
    const fresh = (await client.post('/api/mfa/backup-codes/regenerate', { password: user.password })).body
      .data.backup_codes as string[];
    const token = await mfaToken(app, user);
    const old = await app.post('/api/mfa/verify', { mfa_token: token, code: backupCodes[1] });
    expect(old.status).toBe(401);
    expect((await app.post('/api/mfa/verify', { mfa_token: token, code: fresh[1] })).status).toBe(200);
  });

  it('email and SMS users get a six-digit code through the sender at login', async () => {
    const emailUser = await newUser(true);
    const client = await app.loginAs(emailUser);
    let count = sender.email.length;
    await client.post('/api/mfa/email/setup');
    await eventually(() => sender.email.length === count + 1);
    await client.post('/api/mfa/email/confirm', { code: sender.email.at(-1)!.otpCode });
    count = sender.email.length;
    const token = await mfaToken(app, emailUser);
    await eventually(() => sender.email.length === count + 1);
    const message = sender.email.at(-1)!;
    expect(message).toMatchObject({ userId: emailUser.id, email: emailUser.email, expiresInMinutes: 10 });
    const [challenge] = await challengeRows(app, emailUser.id);
    expect(challenge!.codeHash).toMatch(/^[0-9a-f]{64}$/);
    const wrong = await app.post('/api/mfa/verify', {
      mfa_token: token,
      code: message.otpCode === '000000' ? '000001' : '000000',
    });
    expect(wrong.status).toBe(401);
    expect(detail(wrong).code).toBe('mfa.code_invalid');
    expect((await app.post('/api/mfa/verify', { mfa_token: token, code: message.otpCode })).status).toBe(200);

    const smsUser = await newUser();
    const smsClient = await app.loginAs(smsUser);
    count = sender.sms.length;
    await smsClient.post('/api/mfa/sms/setup', { phone_number: '+15551234567' });
    await eventually(() => sender.sms.length === count + 1);
    await smsClient.post('/api/mfa/sms/confirm', { code: sender.sms.at(-1)!.otpCode });
    const smsToken = await mfaToken(app, smsUser);
    await eventually(() => sender.sms.length === count + 2);
    expect(sender.sms.at(-1)).toMatchObject({ userId: smsUser.id, phoneNumber: '+15551234567' });
    const ok = await app.post('/api/mfa/verify', { mfa_token: smsToken, code: sender.sms.at(-1)!.otpCode });
    expect(ok.status).toBe(200);
  });

  it('a failing sender is only logged: the login challenge still answers', async () => {
    const failing = await startTestApp({
      database,
      settings: { mfa_enabled: true, mfa_send_cooldown_seconds: 0 },
      mfaSender: {
        sendEmailCode: () => Promise.reject(new Error('smtp down')),
        sendSmsCode: () => {
          throw new Error('sms down');
        },
      },
    });
    try {
      const user = await failing.createUser({ username: 'failing', email: 'failing@example.com' });
      const client = await failing.loginAs(user);
      expect((await client.post('/api/mfa/email/setup')).status).toBe(200);
      expect((await client.post('/api/mfa/sms/setup', { phone_number: '+15551234567' })).status).toBe(200);
    } finally {
      await failing.close();
    }
  });

  it('answers 401 mfa.token_invalid for bad, foreign, wrongly typed or expired tokens; mfa.challenge_not_found for unknown challenges', async () => {
    const user = await newUser();
    await enrolTotp(app, user);
    const sign = (claims: object, options: jwt.SignOptions = {}, key = TEST_SECRET_KEY) =>
      jwt.sign(claims, key, { algorithm: 'HS256', expiresIn: 600, subject: user.id, ...options });
    const cases: [string, string][] = [
      ['garbage', 'mfa.token_invalid'],
      [sign({ type: 'mfa', cid: 'x' }, {}, 'another-secret-key-0123456789abcdef'), 'mfa.token_invalid'],
      [sign({ type: 'access', cid: 'x' }), 'mfa.token_invalid'],
      [sign({ type: 'mfa', cid: 'x' }, { algorithm: 'HS512' }), 'mfa.token_invalid'],
      [sign({ type: 'mfa', cid: 'x' }, { expiresIn: -10 }), 'mfa.token_invalid'],
      [sign({ type: 'mfa' }), 'mfa.token_invalid'],
      [sign({ type: 'mfa', cid: 'no-such-challenge' }), 'mfa.challenge_not_found'],
    ];
    for (const [token, code] of cases) {
      const res = await app.post('/api/mfa/verify', { mfa_token: token, code: '123456' });
      expect(res.status).toBe(401);
      expect(detail(res)).toMatchObject({ code, loc: ['body', 'mfa_token'] });
      expect(res.headers.get('www-authenticate')).toBe('Bearer');
    }
    // a real challenge presented with another user's id
    const token = await mfaToken(app, user);
    const claims = jwt.decode(token) as { cid: string };
    const other = await newUser();
    const forged = jwt.sign({ type: 'mfa', cid: claims.cid }, TEST_SECRET_KEY, {
      subject: other.id,
      expiresIn: 60,
    });
    const res = await app.post('/api/mfa/verify', { mfa_token: forged, code: '123456' });
    expect(detail(res).code).toBe('mfa.challenge_not_found');
    // validation
    const missing = await app.post('/api/mfa/verify', { mfa_token: token });
    expect(missing.status).toBe(422);
    expect(detail(missing).loc).toEqual(['body', 'code']);
  });

  it('refuses an expired challenge with 401 mfa.token_invalid and discards it', async () => {
    const user = await newUser();
    await enrolTotp(app, user);
    const token = await mfaToken(app, user);
    const { orm, mfa } = dbOf(app);
    await orm
      .update(mfa.mfaPending)
      .set({ expiresAt: new Date(Date.now() - 1000) })
      .where(eq(mfa.mfaPending.userId, user.id))
      .returning();
    const res = await app.post('/api/mfa/verify', { mfa_token: token, code: '123456' });
    expect(res.status).toBe(401);
    expect(detail(res).code).toBe('mfa.token_invalid');
    expect(await challengeRows(app, user.id)).toHaveLength(0);
  });

  it('discards the challenge when wrong codes reach mfa_max_attempts: 429 without Retry-After', async () => {
    const user = await newUser();
    const { secret } = await enrolTotp(app, user);
    const token = await mfaToken(app, user);
    for (let i = 0; i < 2; i++) {
      const res = await app.post('/api/mfa/verify', { mfa_token: token, code: 'aaaa-aaaa' });
      expect(res.status).toBe(401);
      expect(detail(res).code).toBe('mfa.code_invalid');
    }
    const last = await app.post('/api/mfa/verify', { mfa_token: token, code: 'aaaa-aaaa' });
    expect(last.status).toBe(429);
    expect(detail(last).code).toBe('mfa.too_many_attempts');
    expect(last.headers.get('retry-after')).toBeNull();
    expect(await challengeRows(app, user.id)).toHaveLength(0);
    const after = await app.post('/api/mfa/verify', { mfa_token: token, code: totpCode(secret, 1) });
    expect(after.status).toBe(401);
    expect(detail(after).code).toBe('mfa.challenge_not_found');
  });

  it('counts parallel guesses before checking: never more than mfa_max_attempts on the challenge or the account', async () => {
    const user = await newUser();
    await enrolTotp(app, user);
    const token = await mfaToken(app, user);
    expect(await failedLoginCount(app, user.id)).toBe(0);
    const results = await Promise.all(
      Array.from({ length: 20 }, () => app.post('/api/mfa/verify', { mfa_token: token, code: 'bbbb-bbbb' })),
    );
    const codes = results.map((r) => `${r.status} ${detail(r).code}`);
    expect(codes.filter((c) => c === '401 mfa.code_invalid').length).toBe(2);
    expect(codes.filter((c) => c === '429 mfa.too_many_attempts').length).toBeGreaterThanOrEqual(1);
    expect(
      codes.every((c) =>
        /^(401 mfa\.code_invalid|429 mfa\.too_many_attempts|401 mfa\.challenge_not_found)$/.test(c),
      ),
    ).toBe(true);
    expect(await failedLoginCount(app, user.id)).toBe(3);
    expect(await challengeRows(app, user.id)).toHaveLength(0);
  });

  it('a backup code presented 20 times at once on 20 challenges works exactly once', async () => {
    const user = await newUser();
    const { backupCodes } = await enrolTotp(app, user);
    const tokens: string[] = [];
    for (let i = 0; i < 20; i++) tokens.push(await mfaToken(app, user));
    const results = await Promise.all(
      tokens.map((token) => app.post('/api/mfa/verify', { mfa_token: token, code: backupCodes[2] })),
    );
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
    for (const r of results.filter((x) => x.status !== 200)) {
      expect(r.status).toBe(401);
      expect(detail(r).code).toBe('mfa.code_invalid');
    }
    const left = JSON.parse((await configRow(app, user.id))!.backupCodes) as string[];
    expect(left).toHaveLength(7);
  });

  it('reads a legacy plain-text TOTP secret, and encryptPlainMfaSecrets re-encrypts it', async () => {
    const user = await newUser();
    const secret = generateTotpSecret();
    const { orm, mfa } = dbOf(app);
    await orm
      .insert(mfa.mfaConfig)
      .values({ userId: user.id, method: 'totp', isActive: true, totpSecret: secret, backupCodes: '[]' })
      .returning();
    await awayFromStepBoundary();
    const token = await mfaToken(app, user);
    expect((await app.post('/api/mfa/verify', { mfa_token: token, code: totpCode(secret) })).status).toBe(
      200,
    );

    expect(await encryptPlainMfaSecrets(app.app.runtime)).toEqual({ encrypted: 1 });
    const stored = (await configRow(app, user.id))!.totpSecret!;
    expect(stored).toMatch(/^enc:v1:/);
    expect(stored).not.toContain(secret);
    expect(await encryptPlainMfaSecrets(app.app.runtime)).toEqual({ encrypted: 0 });
    const next = await mfaToken(app, user);
    expect((await app.post('/api/mfa/verify', { mfa_token: next, code: totpCode(secret, 1) })).status).toBe(
      200,
    );
  });
});

describeEachDatabase('MFA account lock', (database) => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({
      database,
      settings: { mfa_enabled: true, mfa_max_attempts: 10, login_max_attempts: 3, login_lockout_minutes: 1 },
    });
  });
  afterAll(() => app.close());

  it('counts wrong codes on the account: the attempt that locks it and any later one answer 429 with Retry-After', async () => {
    const user = await app.createUser({ username: 'locky' });
    const { secret } = await enrolTotp(app, user);
    const token = await mfaToken(app, user);
    for (let i = 0; i < 2; i++) {
      const res = await app.post('/api/mfa/verify', { mfa_token: token, code: 'cccc-cccc' });
      expect(res.status).toBe(401);
      expect(detail(res).code).toBe('mfa.code_invalid');
    }
    const locking = await app.post('/api/mfa/verify', { mfa_token: token, code: 'cccc-cccc' });
    expect(locking.status).toBe(429);
    expect(detail(locking).code).toBe('mfa.too_many_attempts');
    expect(Number(locking.headers.get('retry-after'))).toBeGreaterThan(0);
    const correct = await app.post('/api/mfa/verify', { mfa_token: token, code: totpCode(secret, 1) });
    expect(correct.status).toBe(429);
    expect(detail(correct).code).toBe('mfa.too_many_attempts');
    const retry = Number(correct.headers.get('retry-after'));
    expect(retry).toBeGreaterThan(0);
    expect(retry).toBeLessThanOrEqual(60);
  });
});

describeEachDatabase('MFA TOTP step used once', (database: TestDatabase) => {
  describeEachCache('cache', (cache: TestCache) => {
    let app: TestApp;
    let user: TestUser;
    let secret: string;
    beforeAll(async () => {
      app = await startTestApp({ database, cache, settings: { mfa_enabled: true, login_max_attempts: 50 } });
      user = await app.createUser({ username: `steps${cache.kind}` });
      ({ secret } = await enrolTotp(app, user));
    });
    afterAll(() => app.close());

    it('one TOTP code presented 10 times at once on 10 challenges logs in exactly once', async () => {
      const tokens: string[] = [];
      for (let i = 0; i < 10; i++) tokens.push(await mfaToken(app, user));
      await awayFromStepBoundary();
      const code = totpCode(secret, 1);
      const results = await Promise.all(
        tokens.map((t) => app.post('/api/mfa/verify', { mfa_token: t, code })),
      );
      expect(results.filter((r) => r.status === 200)).toHaveLength(1);
      for (const r of results.filter((x) => x.status !== 200))
        expect(detail(r).code).toBe('mfa.code_invalid');
      expect((await configRow(app, user.id))!.lastTotpStep).toBe(Math.floor(Date.now() / 30_000) + 1);
    });
  });
});
