import { randomUUID } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { dbOf } from '../../../../testing/mfa.js';
import {
  PASSKEY_TEST_ORIGIN,
  PASSKEY_TEST_SETTINGS,
  registerPasskey,
  SoftAuthenticator,
} from '../../../../testing/webauthn.js';
import { describeEachDatabase, startTestApp, type LoggedInClient, type TestApp } from '../testing/index.js';

// SPEC-3 section 1: an account without a password keeps at least one way to log in (a passkey or an identity);
// `DELETE /auth/identities/{id}` refuses the last one with 400 `auth.last_login_method`, and so does the
// deletion of a passkey (docs/passkeys.md). Both take the same per-user lock (the user's row, in the
// transaction of the check and the deletion), so a passkey deletion and an unlink sent together never both
// pass the check: one of the two ways stays.

const ROUNDS = 20;

describeEachDatabase('The last way to log in: passkeys and identities', (database) => {
  let app: TestApp;
  let root: LoggedInClient;
  let counter = 0;

  /**
   * A user without a usable password (as a social registration leaves one), with one identity and one
   * passkey: the client of a login made before the password went, and the two ids.
   */
  async function passwordless(): Promise<{ client: LoggedInClient; passkeyId: string; identityId: string }> {
    const created = await app.createUser({ username: `llm_user${++counter}` });
    const client = await app.loginAs(created);
    const passkey = await registerPasskey(client, new SoftAuthenticator(PASSKEY_TEST_ORIGIN));
    expect(passkey.status).toBe(201);
    const { orm, core } = dbOf(app);
    await orm.update(core.user).set({ passwordHash: '!social' }).where(eq(core.user.id, created.id));
    // The identity table of the social-login module (its routes are mounted whatever the settings).
    const { userIdentity } = (app.app.runtime.tables as any)['social-login'];
    const identityId = randomUUID();
    await orm.insert(userIdentity).values({
      id: identityId,
      userId: created.id,
      provider: 'acme',
      issuer: 'https://idp.example.test',
      subject: `subject-${counter}`,
      email: null,
    });
    return { client, passkeyId: passkey.body.data.id as string, identityId };
  }

  const ways = async (client: LoggedInClient) => ({
    passkeys: (await client.get('/api/auth/passkeys')).body.data.length as number,
    identities: (await client.get('/api/auth/identities')).body.data.length as number,
  });

  beforeAll(async () => {
    app = await startTestApp({ database, settings: { ...PASSKEY_TEST_SETTINGS } });
    root = await app.loginAs(await app.createUser({ username: 'llm_root', isSuperuser: true }));
  });
  afterAll(() => app.close());

  it('refuses to delete the last passkey of an account without password or identity (400, loc path id)', async () => {
    const { client, passkeyId, identityId } = await passwordless();
    expect((await client.delete(`/api/auth/identities/${identityId}`)).status).toBe(204);
    const res = await client.delete(`/api/auth/passkeys/${passkeyId}`);
    expect(res.status).toBe(400);
    expect(res.body.detail[0]).toMatchObject({ code: 'auth.last_login_method', loc: ['path', 'id'] });
    const byAdmin = await root.delete(`/api/admin/user/${client.user.id}/passkeys/${passkeyId}`);
    expect(byAdmin.status).toBe(400);
    expect(byAdmin.body.detail[0]).toMatchObject({ code: 'auth.last_login_method', loc: ['path', 'id'] });
    expect(await ways(client)).toEqual({ passkeys: 1, identities: 0 });
  });

  it('deletes a passkey while an identity remains, and any passkey of an account with a password', async () => {
    const { client, passkeyId } = await passwordless();
    expect((await client.delete(`/api/auth/passkeys/${passkeyId}`)).status).toBe(204);
    expect(await ways(client)).toEqual({ passkeys: 0, identities: 1 });
    const withPassword = await app.loginAs(await app.createUser({ username: 'llm_password' }));
    const registered = await registerPasskey(withPassword, new SoftAuthenticator(PASSKEY_TEST_ORIGIN));
    expect((await withPassword.delete(`/api/auth/passkeys/${registered.body.data.id}`)).status).toBe(204);
  });

  it(`of a passkey deletion and an unlink sent together, never both succeed (${ROUNDS} rounds)`, async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const { client, passkeyId, identityId } = await passwordless();
      const results = await Promise.all([
        round % 2 === 0
          ? client.delete(`/api/auth/passkeys/${passkeyId}`)
          : root.delete(`/api/admin/user/${client.user.id}/passkeys/${passkeyId}`),
        client.delete(`/api/auth/identities/${identityId}`),
      ]);
      const outcomes = results.map((r) => (r.status === 204 ? 204 : `${r.status} ${r.body.detail[0].code}`));
      expect(outcomes.filter((o) => o === 204)).toHaveLength(1);
      expect(outcomes.filter((o) => o === '400 auth.last_login_method')).toHaveLength(1);
      const left = await ways(client);
      expect(left.passkeys + left.identities).toBe(1);
    }
  });
});
