import { describeEachDatabase } from '../testing/each.js';
import { startTestApp, type TestApp } from '../testing/test-app.js';
import {
  awayFromStepBoundary,
  capturingSender,
  configRow,
  enrolTotp,
  passwordLogin,
  eventually,
  totpCode,
} from '../../../../testing/mfa.js';

const detail = (res: { body: { detail: { code: string; loc: unknown[] }[] } }) => res.body.detail[0]!;

describeEachDatabase('MFA enrolment', (database) => {
  let app: TestApp;
  const sender = capturingSender();
  let counter = 0;
  const fresh = async (email: string | null = null) => {
    const username = `user${++counter}`;
    const user = await app.createUser({ username, email: email === null ? null : `${username}@${email}` });
    return { user, client: await app.loginAs(user) };
  };

  beforeAll(async () => {
    app = await startTestApp({
      database,
      mfaSender: sender,
      settings: { mfa_enabled: true, mfa_send_cooldown_seconds: 0, mfa_max_attempts: 3, app_name: 'Acme' },
    });
  });
  afterAll(() => app.close());

  it('reports no MFA for a new user and needs a token', async () => {
    const { client } = await fresh();
    const res = await client.get('/api/mfa/status');
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({ enabled: false, method: null });
    const anonymous = await app.get('/api/mfa/status');
    expect(anonymous.status).toBe(401);
    expect(detail(anonymous).code).toBe('auth.not_authenticated');
  });

  it('sets up TOTP: secret, otpauth URI with the issuer, eight backup codes; stores only encrypted/hashed values', async () => {
    const { user, client } = await fresh('example.com');
    const res = await client.post('/api/mfa/totp/setup');
    expect(res.status).toBe(200);
    const { secret, otpauth_uri: uri, backup_codes: codes } = res.body.data;
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    expect(uri).toMatch(/^otpauth:\/\/totp\/Acme:/);
    expect(uri).toContain(`secret=${secret}`);
    expect(codes).toHaveLength(8);
    for (const code of codes) expect(code).toMatch(/^[a-z2-9]{4}-[a-z2-9]{4}$/);
    const row = await configRow(app, user.id);
    expect(row).toMatchObject({ method: 'totp', isActive: false, lastTotpStep: null });
    expect(row!.totpSecret).toMatch(/^enc:v1:/);
    expect(row!.totpSecret).not.toContain(secret);
    for (const code of codes) expect(row!.backupCodes).not.toContain(code);
    expect(JSON.parse(row!.backupCodes)).toHaveLength(8);
    // still pending: status says disabled
    expect((await client.get('/api/mfa/status')).body.data).toEqual({ enabled: false, method: null });
  });

  it('confirms TOTP with a real code; a wrong or already used code is 400 mfa.totp_invalid', async () => {
    const { user, client } = await fresh();
    const { secret } = (await client.post('/api/mfa/totp/setup')).body.data;
    const wrong = await client.post('/api/mfa/totp/confirm', {
      code: '000000' === totpCode(secret) ? '111111' : '000000',
    });
    expect(wrong.status).toBe(400);
    expect(detail(wrong)).toMatchObject({ code: 'mfa.totp_invalid', loc: ['body', 'code'] });
    await awayFromStepBoundary();
    const code = totpCode(secret);
    const ok = await client.post('/api/mfa/totp/confirm', { code });
    expect(ok.status).toBe(200);
    expect(ok.body.data).toEqual({ enabled: true, method: 'totp' });
    const row = await configRow(app, user.id);
    expect(row).toMatchObject({ isActive: true });
    expect(row!.lastTotpStep).toBe(Math.floor(Date.now() / 30_000));
    expect((await client.get('/api/mfa/status')).body.data).toEqual({ enabled: true, method: 'totp' });
    // active: confirming again is refused, every setup is 409
    const again = await client.post('/api/mfa/totp/confirm', { code });
    expect(again.status).toBe(409);
    for (const [path, body] of [
      ['/api/mfa/totp/setup', undefined],
      ['/api/mfa/email/setup', undefined],
      ['/api/mfa/sms/setup', { phone_number: '+4915112345678' }],
    ] as const) {
      const res = await client.post(path, body);
      expect(res.status).toBe(409);
      expect(detail(res).code).toBe('mfa.already_enabled');
    }
  });

  it('refuses a TOTP confirm without a setup (400) and a body without a code (422)', async () => {
    const { client } = await fresh();
    const none = await client.post('/api/mfa/totp/confirm', { code: '123456' });
    expect(none.status).toBe(400);
    expect(detail(none).code).toBe('mfa.totp_invalid');
    const bad = await client.post('/api/mfa/totp/confirm', {});
    expect(bad.status).toBe(422);
    expect(detail(bad)).toMatchObject({ code: 'request.validation_error', loc: ['body', 'code'] });
  });

  it('sets up email: sends a code in the background, confirm activates; wrong code is 400', async () => {
    const { user, client } = await fresh('example.com');
    const before = sender.email.length;
    const res = await client.post('/api/mfa/email/setup');
    expect(res.status).toBe(200);
    expect(res.body.data.backup_codes).toHaveLength(8);
    await eventually(() => sender.email.length === before + 1);
    const message = sender.email.at(-1)!;
    expect(message).toMatchObject({ userId: user.id, email: user.email, expiresInMinutes: 10 });
    expect(message.otpCode).toMatch(/^\d{6}$/);
    const row = await configRow(app, user.id);
    expect(row).toMatchObject({ method: 'email', isActive: false });
    expect(row!.pendingCodeHash).toMatch(/^[0-9a-f]{64}$/);
    expect(row!.pendingCodeHash).not.toContain(message.otpCode);
    const wrongCode = message.otpCode === '000000' ? '000001' : '000000';
    const wrong = await client.post('/api/mfa/email/confirm', { code: wrongCode });
    expect(wrong.status).toBe(400);
    expect(detail(wrong)).toMatchObject({ code: 'mfa.email_code_invalid', loc: ['body', 'code'] });
    const ok = await client.post('/api/mfa/email/confirm', { code: message.otpCode });
    expect(ok.status).toBe(200);
    expect(ok.body.data).toEqual({ enabled: true, method: 'email' });
    expect(await configRow(app, user.id)).toMatchObject({ isActive: true, pendingCodeHash: null });
  });

  it('answers 400 mfa.no_email without an address and 400 mfa.no_email_setup with nothing waiting', async () => {
    const { client } = await fresh();
    const noEmail = await client.post('/api/mfa/email/setup');
    expect(noEmail.status).toBe(400);
    expect(detail(noEmail).code).toBe('mfa.no_email');
    const noSetup = await client.post('/api/mfa/email/confirm', { code: '123456' });
    expect(noSetup.status).toBe(400);
    expect(detail(noSetup).code).toBe('mfa.no_email_setup');
    const noSms = await client.post('/api/mfa/sms/confirm', { code: '123456' });
    expect(noSms.status).toBe(400);
    expect(detail(noSms).code).toBe('mfa.no_sms_setup');
  });

  it('discards an enrolment code after mfa_max_attempts wrong confirms', async () => {
    const { client } = await fresh('example.com');
    const before = sender.email.length;
    await client.post('/api/mfa/email/setup');
    await eventually(() => sender.email.length === before + 1);
    const code = sender.email.at(-1)!.otpCode;
    const wrongCode = code === '999999' ? '999998' : '999999';
    for (let i = 0; i < 3; i++) {
      expect((await client.post('/api/mfa/email/confirm', { code: wrongCode })).status).toBe(400);
    }
    const late = await client.post('/api/mfa/email/confirm', { code });
    expect(late.status).toBe(400);
    expect(detail(late).code).toMatch(/^mfa\.(email_code_invalid|no_email_setup)$/);
  });

  it('sets up SMS with an international number only (422 otherwise) and confirms with the sent code', async () => {
    const { user, client } = await fresh();
    for (const phone of ['015112345678', '+0123456789', '+49 151 1234', '+1234', 'abc']) {
      const bad = await client.post('/api/mfa/sms/setup', { phone_number: phone });
      expect(bad.status).toBe(422);
      expect(detail(bad)).toMatchObject({ code: 'request.validation_error', loc: ['body', 'phone_number'] });
    }
    const before = sender.sms.length;
    const res = await client.post('/api/mfa/sms/setup', { phone_number: '+4915112345678' });
    expect(res.status).toBe(200);
    expect(res.body.data.backup_codes).toHaveLength(8);
    await eventually(() => sender.sms.length === before + 1);
    const message = sender.sms.at(-1)!;
    expect(message).toMatchObject({ userId: user.id, phoneNumber: '+4915112345678', expiresInMinutes: 10 });
    const wrong = await client.post('/api/mfa/sms/confirm', {
      code: message.otpCode === '123456' ? '654321' : '123456',
    });
    expect(wrong.status).toBe(400);
    expect(detail(wrong).code).toBe('mfa.sms_code_invalid');
    const ok = await client.post('/api/mfa/sms/confirm', { code: message.otpCode });
    expect(ok.status).toBe(200);
    expect(ok.body.data).toEqual({ enabled: true, method: 'sms' });
    expect(await configRow(app, user.id)).toMatchObject({ phoneNumber: '+4915112345678', isActive: true });
  });

  it('disables MFA with the password only (400 auth.password_incorrect otherwise), removing the configuration', async () => {
    const { user, client } = await fresh(); // a token from before enrolment stays valid
    await enrolTotp(app, user);
    const wrong = await client.post('/api/mfa/disable', { password: 'wrong-password-123' });
    expect(wrong.status).toBe(400);
    expect(detail(wrong)).toMatchObject({ code: 'auth.password_incorrect', loc: ['body', 'password'] });
    expect(await configRow(app, user.id)).toBeDefined();
    const ok = await client.post('/api/mfa/disable', { password: user.password });
    expect(ok.status).toBe(200);
    expect(await configRow(app, user.id)).toBeUndefined();
    expect((await client.get('/api/mfa/status')).body.data).toEqual({ enabled: false, method: null });
  });

  it('regenerates backup codes with the password; without active MFA it is 400 mfa.not_configured', async () => {
    const { user, client } = await fresh();
    const none = await client.post('/api/mfa/backup-codes/regenerate', { password: user.password });
    expect(none.status).toBe(400);
    expect(detail(none).code).toBe('mfa.not_configured');
    await enrolTotp(app, user);
    const before = (await configRow(app, user.id))!.backupCodes;
    const wrong = await client.post('/api/mfa/backup-codes/regenerate', { password: 'nope-nope-nope' });
    expect(wrong.status).toBe(400);
    expect(detail(wrong).code).toBe('auth.password_incorrect');
    const ok = await client.post('/api/mfa/backup-codes/regenerate', { password: user.password });
    expect(ok.status).toBe(200);
    expect(ok.body.data.backup_codes).toHaveLength(8);
    const after = (await configRow(app, user.id))!.backupCodes;
    expect(after).not.toBe(before);
    expect(JSON.parse(after)).toHaveLength(8);
  });
});

describeEachDatabase('MFA settings and limits', (database) => {
  let off: TestApp;
  let strict: TestApp;
  let noRouter: TestApp;
  const sender = capturingSender();

  beforeAll(async () => {
    off = await startTestApp({ database, mfaSender: sender, settings: { mfa_enabled: false } });
    strict = await startTestApp({
      database,
      mfaSender: sender,
      settings: {
        mfa_enabled: true,
        mfa_send_cooldown_seconds: 30,
        login_max_attempts: 2,
        login_lockout_minutes: 1,
      },
    });
    noRouter = await startTestApp({ database, settings: { mfa_enabled: true, disable_core_routers: 'mfa' } });
  });
  afterAll(async () => {
    await off.close();
    await strict.close();
    await noRouter.close();
  });

  it('answers 403 mfa.disabled for TOTP and email setup while mfa_enabled is false; SMS setup is not gated', async () => {
    const alice = await off.loginAs(await off.createUser({ username: 'alice', email: 'alice@example.com' }));
    for (const path of ['/api/mfa/totp/setup', '/api/mfa/email/setup']) {
      const res = await alice.post(path);
      expect(res.status).toBe(403);
      expect(detail(res).code).toBe('mfa.disabled');
    }
    const sms = await alice.post('/api/mfa/sms/setup', { phone_number: '+4915112345678' });
    expect(sms.status).toBe(200);
    await eventually(() => sender.sms.length === 1);
    expect((await alice.post('/api/mfa/sms/confirm', { code: sender.sms[0]!.otpCode })).status).toBe(200);
    // MFA is active but mfa_enabled is false: login needs no second step (SPEC "Authentication" 5)
    const login = await passwordLogin(off, alice.user);
    expect(login.status).toBe(200);
    expect(login.body.access_token).toEqual(expect.any(String));
    expect(login.body.mfa_required).toBeUndefined();
  });

  it('spaces email/SMS sends by mfa_send_cooldown_seconds: 429 auth.rate_limited with Retry-After', async () => {
    const bob = await strict.loginAs(await strict.createUser({ username: 'bob', email: 'bob@example.com' }));
    const before = sender.email.length;
    expect((await bob.post('/api/mfa/email/setup')).status).toBe(200);
    const again = await bob.post('/api/mfa/sms/setup', { phone_number: '+4915112345678' });
    expect(again.status).toBe(429);
    expect(detail(again).code).toBe('auth.rate_limited');
    const retry = Number(again.headers.get('retry-after'));
    expect(retry).toBeGreaterThanOrEqual(1);
    expect(retry).toBeLessThanOrEqual(30);
    await eventually(() => sender.email.length === before + 1);
    await new Promise((r) => setTimeout(r, 50));
    expect(sender.email.length).toBe(before + 1);
    expect(sender.sms.length).toBe(1); // none from this app
  });

  it('counts email/SMS setup and the MFA check against auth_rate_limit per client address', async () => {
    const limited = await startTestApp({ database, settings: { mfa_enabled: true, auth_rate_limit: 3 } });
    try {
      const carol = await limited.loginAs(await limited.createUser({ username: 'carol' }));
      const first = await carol.post('/api/mfa/email/setup');
      expect(detail(first).code).toBe('mfa.no_email');
      expect((await carol.post('/api/mfa/sms/setup', { phone_number: '+4915112345678' })).status).toBe(200);
      const check = await limited.post('/api/mfa/verify', { mfa_token: 'x', code: '123456' });
      expect(detail(check).code).toBe('mfa.token_invalid');
      for (const res of [
        await carol.post('/api/mfa/email/setup'),
        await limited.post('/api/mfa/verify', { mfa_token: 'x', code: '123456' }),
      ]) {
        expect(res.status).toBe(429);
        expect(detail(res).code).toBe('auth.rate_limited');
        expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
      }
    } finally {
      await limited.close();
    }
  });

  it('locks the password prompt of disable and regenerate: 429 mfa.too_many_attempts with Retry-After', async () => {
    const dave = await strict.createUser({ username: 'dave' });
    const client = await strict.loginAs(dave);
    for (let i = 0; i < 2; i++) {
      const wrong = await client.post('/api/mfa/disable', { password: 'wrong-password-123' });
      expect(wrong.status).toBe(400);
      expect(detail(wrong).code).toBe('auth.password_incorrect');
    }
    for (const path of ['/api/mfa/disable']) {
      const locked = await client.post(path, { password: dave.password });
      expect(locked.status).toBe(429);
      expect(detail(locked).code).toBe('mfa.too_many_attempts');
      const retry = Number(locked.headers.get('retry-after'));
      expect(retry).toBeGreaterThan(0);
      expect(retry).toBeLessThanOrEqual(60);
    }
  });

  it('removes every MFA route with disable_core_routers=mfa', async () => {
    const erin = await noRouter.loginAs(await noRouter.createUser({ username: 'erin' }));
    for (const [method, path] of [
      ['GET', '/api/mfa/status'],
      ['POST', '/api/mfa/totp/setup'],
      ['POST', '/api/mfa/verify'],
    ] as const) {
      const res = await erin.request(method, path, method === 'POST' ? { body: {} } : {});
      expect(res.status).toBe(404);
    }
  });
});
