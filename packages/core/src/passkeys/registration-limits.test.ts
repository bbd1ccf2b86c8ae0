import { eq } from 'drizzle-orm';
import { moveClockAhead, restoreClock } from '../../../../testing/clock.js';
import { dbOf } from '../../../../testing/mfa.js';
import {
  PASSKEY_TEST_ORIGIN,
  PASSKEY_TEST_SETTINGS,
  passkeyLogin,
  registerPasskey,
  SoftAuthenticator,
} from '../../../../testing/webauthn.js';
import { describeEachDatabase, startTestApp, type TestApp, type TestClient } from '../testing/index.js';
import type { PasskeyTables } from './tables.js';

const MINUTE = 60_000;

async function passkeyCount(app: TestApp, userId: string): Promise<number> {
  const k = (app.app.runtime.tables.passkeys as unknown as PasskeyTables).passkey;
  return (await dbOf(app).orm.select({ id: k.id }).from(k).where(eq(k.userId, userId))).length;
}

function expectRefused(res: { status: number; body: any }, status: number, code: string) {
  expect(res.status).toBe(status);
  expect(res.body.detail[0].code).toBe(code);
}

/**
 * SPEC-3 §7 rule 1 at both passkey registration routes: a passkey (whose login skips MFA) is added only by a
 * session whose login is recent, up to `passkeys_max_per_user`.
 */
describeEachDatabase('Passkey registration: recent login and maximum', (database) => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({
      database,
      settings: { ...PASSKEY_TEST_SETTINGS, reauthentication_max_age_minutes: 5, passkeys_max_per_user: 2 },
    });
  });
  afterEach(() => restoreClock());
  afterAll(() => app.close());

  it('refuses both routes with 403 auth.reauthentication_required once the login is older, also after a refresh', async () => {
    const user = await app.createUser({ username: 'pk_stale' });
    const client = await app.loginAs(user);
    const device = new SoftAuthenticator(PASSKEY_TEST_ORIGIN);
    // Options taken while the login is recent are no way around the rule at the second step.
    const started = await client.post('/api/auth/passkeys/register/options');
    expect(started.status).toBe(200);
    moveClockAhead(6 * MINUTE);
    const late = await client.post('/api/auth/passkeys/register', {
      response: device.create(started.body.data),
    });
    expectRefused(late, 403, 'auth.reauthentication_required');
    expect(late.body.detail[0].loc).toEqual(['header', 'Authorization']);
    expectRefused(
      await client.post('/api/auth/passkeys/register/options'),
      403,
      'auth.reauthentication_required',
    );
    // A refresh is not a login: the refreshed session is as old as its login.
    const refreshed = await app.post('/api/auth/refresh-token', { refresh_token: client.refreshToken });
    expect(refreshed.status).toBe(200);
    expectRefused(
      await app.as(refreshed.body.access_token).post('/api/auth/passkeys/register/options'),
      403,
      'auth.reauthentication_required',
    );
    expect(await passkeyCount(app, user.id)).toBe(0);

    // A password login now is recent: registration works again.
    const again = await app.loginAs(user);
    expect((await registerPasskey(again, device)).status).toBe(201);
    expect(await passkeyCount(app, user.id)).toBe(1);
  });

  it('counts a passkey login as a login', async () => {
    const user = await app.createUser({ username: 'pk_login' });
    const device = new SoftAuthenticator(PASSKEY_TEST_ORIGIN);
    expect((await registerPasskey(await app.loginAs(user), device)).status).toBe(201);
    moveClockAhead(10 * MINUTE);
    const login = await passkeyLogin(app, device, { username: 'pk_login' });
    expect(login.status).toBe(200);
    const viaPasskey: TestClient = app.as(login.body.access_token);
    expect((await viaPasskey.post('/api/auth/passkeys/register/options')).status).toBe(200);
  });

  it('answers 409 auth.passkey_limit at passkeys_max_per_user, at the options and at the registration', async () => {
    const user = await app.createUser({ username: 'pk_many' });
    const client = await app.loginAs(user);
    const device = new SoftAuthenticator(PASSKEY_TEST_ORIGIN);
    expect((await registerPasskey(client, device)).status).toBe(201);
    // Two ceremonies started below the limit: the first fills it, the second is refused.
    const a = await client.post('/api/auth/passkeys/register/options');
    const b = await client.post('/api/auth/passkeys/register/options');
    expect([a.status, b.status]).toEqual([200, 200]);
    const other = new SoftAuthenticator(PASSKEY_TEST_ORIGIN);
    const first = await client.post('/api/auth/passkeys/register', { response: device.create(a.body.data) });
    expect(first.status).toBe(201);
    const second = await client.post('/api/auth/passkeys/register', { response: other.create(b.body.data) });
    expectRefused(second, 409, 'auth.passkey_limit');
    expect(second.body.detail[0].params).toEqual({ max: 2 });
    expectRefused(await client.post('/api/auth/passkeys/register/options'), 409, 'auth.passkey_limit');
    expect(await passkeyCount(app, user.id)).toBe(2);

    // A deleted passkey frees its place.
    const list = await client.get('/api/auth/passkeys');
    expect((await client.delete(`/api/auth/passkeys/${list.body.data[0].id}`)).status).toBe(204);
    expect((await registerPasskey(client, other)).status).toBe(201);
    expect(await passkeyCount(app, user.id)).toBe(2);
  });
});
