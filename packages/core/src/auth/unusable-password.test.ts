import { describeEachDatabase, startTestApp, type LoggedInClient, type TestApp } from '../testing/index.js';
import { passwordVerifications } from './passwords.js';

/**
 * SPEC-3 §7 rule 5: a login attempt for a user without a usable password (an invitation not accepted yet)
 * costs a full password hash like any other, so its answer time does not tell a pending invitation apart.
 * Proved by the count of Argon2 verifications that ran, not by a clock.
 */
describeEachDatabase('Login of an account without a usable password', (database) => {
  let app: TestApp;
  let admin: LoggedInClient;

  beforeAll(async () => {
    app = await startTestApp({ database });
    admin = await app.loginAs(await app.createUser({ username: 'nopw_root', isSuperuser: true }));
  });
  afterAll(() => app.close());

  /** The login's answer and how many Argon2 verifications it ran. */
  async function attempt(username: string, password = 'some-guessed-passphrase') {
    const before = passwordVerifications();
    const res = await app.post('/api/auth/token', undefined, { form: { username, password } });
    return { res, verifications: passwordVerifications() - before };
  }

  it('verifies one Argon2 hash for a pending invitation, as for an unknown name and a wrong password', async () => {
    const invited = await admin.post('/api/admin/user/invite', {
      email: 'pending@example.com',
      username: 'nopw_pending',
    });
    expect(invited.status).toBe(201);
    await app.createUser({ username: 'nopw_known' });
    await app.createUser({ username: 'nopw_inactive', isActive: false });
    for (const username of ['nopw_pending', 'nopw_nobody', 'nopw_known', 'nopw_inactive']) {
      const { res, verifications } = await attempt(username);
      expect(res.status).toBe(401);
      expect(res.body.detail[0]).toMatchObject({
        code: 'auth.invalid_credentials',
        loc: ['body', 'username'],
      });
      expect({ username, verifications }).toEqual({ username, verifications: 1 });
    }
    // An inactive pending invitation too.
    expect((await admin.patch(`/api/admin/user/${invited.body.data.id}`, { isActive: false })).status).toBe(
      200,
    );
    expect((await attempt('nopw_pending')).verifications).toBe(1);
  });
});
