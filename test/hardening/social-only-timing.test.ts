// SPEC-3 section 7 rule 5 for an account made by a social login: "a login attempt for a user without a usable
// password (invited, social-only) costs a full password hash like any other", so `POST /auth/token` for it answers
// the uniform 401 in the time of an unknown name or a wrong password. Judged as security.test.ts "login timing"
// judges it (each login as a share of its round's mean), in fewer rounds, and by the count of Argon2
// verifications, which no clock disturbs.
import { describeEachDatabase, startTestApp, type TestApp } from '@svc/core/testing';
import { passwordVerifications } from '../../packages/core/src/auth/passwords.js';
import { freePort } from '../../testing/cli-process.js';
import { oidcSettings, socialSignIn, startTestIdp, type TestIdp } from '../../testing/oidc.js';
import { roundShares, timed } from './helpers.js';

const ROUNDS = 15;
const TOLERANCE = 0.2; // every group's typical share of a round within 20 % of every other's

describeEachDatabase('login timing of a social-only account', (database) => {
  let idp: TestIdp;
  let app: TestApp;

  beforeAll(async () => {
    const [started, port] = await Promise.all([startTestIdp(), freePort()]);
    idp = started;
    app = await startTestApp({
      database,
      port,
      settings: {
        public_url: `http://127.0.0.1:${port}`,
        oauth_providers: 'acme',
        oauth_registration_enabled: true,
        // Per-provider settings are named after the provider: not among the declared settings.
        ...oidcSettings('acme', idp),
        // High max attempts: no group locks its account during the rounds.
        login_max_attempts: 1000,
      },
    });
    await idp.register([`${app.url}/api/auth/oauth/acme/callback`]);
    // The social-only account: registered by its first social login (SPEC-3 section 1 rule 4, no usable password).
    idp.accounts.set('social-only', {
      sub: 'social-only',
      email: 'social-only@example.com',
      email_verified: true,
      preferred_username: 'social-only',
    });
    const result = await socialSignIn(app.url, 'acme', idp, 'social-only');
    const exchanged = await app.post('/api/auth/oauth/exchange', { code: result.fragment.svc_code });
    expect(exchanged.status).toBe(200);
    const me = await app.as(exchanged.body.access_token).get('/api/auth/user');
    expect(me.body.data).toMatchObject({ username: 'social-only', hasPassword: false });
    await app.createUser({ username: 'known' });
  }, 60_000);
  afterAll(async () => {
    await app?.close();
    await idp?.close();
  });

  it('answers a password login of a social-only account with the uniform 401 in the time of any other failed login', async () => {
    const groups = {
      socialOnly: { username: 'social-only', password: 'correct-horse-battery' },
      unknown: { username: 'nobody-here', password: 'correct-horse-battery' },
      wrongPassword: { username: 'known', password: 'not-the-password' },
    };
    const names = Object.keys(groups);
    const times: Record<string, number[]> = Object.fromEntries(names.map((name) => [name, []]));
    // Each attempt runs exactly one Argon2 verification, whatever the account.
    for (const [name, form] of Object.entries(groups)) {
      const before = passwordVerifications();
      await app.post('/api/auth/token', undefined, { form }); // also the warm-up of the timed rounds
      expect({ name, verifications: passwordVerifications() - before }).toEqual({ name, verifications: 1 });
    }
    for (let round = 0; round < ROUNDS; round++) {
      // The order turns every round, so no group always follows the same one.
      const entries = Object.entries(groups);
      const turned = [...entries.slice(round % entries.length), ...entries.slice(0, round % entries.length)];
      for (const [name, form] of turned) {
        const { ms, value } = await timed(() => app.post('/api/auth/token', undefined, { form }));
        expect(value.status).toBe(401);
        expect(value.body.detail).toEqual([
          expect.objectContaining({ code: 'auth.invalid_credentials', loc: ['body', 'username'] }),
        ]);
        times[name]!.push(ms);
      }
    }
    // Each login's time as a share of its round's mean (helpers.ts `roundShares`). A social-only login that
    // skipped Argon2 would take a small fraction of the others' share.
    const { spread, line } = roundShares(`social-only login timing [${database.label}]`, times);
    process.stderr.write(line);
    expect(spread).toBeLessThanOrEqual(TOLERANCE);
  }, 60_000);
});
