import {
  PASSKEY_TEST_ORIGIN,
  PASSKEY_TEST_SETTINGS,
  registerPasskey,
  SoftAuthenticator,
} from '../../../../testing/webauthn.js';
import { describeEachDatabase, startTestApp, type LoggedInClient, type TestApp } from '../testing/index.js';

// svc extension of SPEC-3 §6 (docs/passkeys.md "Administration"): a superuser lists and deletes another user's
// passkeys through the API, as the console's user page does.
describeEachDatabase("A user's passkeys for superusers", (database) => {
  let app: TestApp;
  let root: LoggedInClient;
  let alice: LoggedInClient;
  let aliceId: string;
  let bob: LoggedInClient;
  beforeAll(async () => {
    app = await startTestApp({
      database,
      settings: { ...PASSKEY_TEST_SETTINGS, activity_log_enabled: true, activity_log_sync: true },
    });
    root = await app.loginAs(await app.createUser({ username: 'pk_root', isSuperuser: true }));
    const a = await app.createUser({ username: 'pk_alice' });
    aliceId = a.id;
    alice = await app.loginAs(a);
    bob = await app.loginAs(await app.createUser({ username: 'pk_bob' }));
  });
  afterAll(() => app.close());

  it("lists a user's passkeys in the owner's item shape; 404 user.not_found for an unknown user", async () => {
    const device = new SoftAuthenticator(PASSKEY_TEST_ORIGIN);
    expect((await registerPasskey(alice, device, { name: 'Laptop' })).status).toBe(201);
    expect((await registerPasskey(alice, device, { name: 'Phone' })).status).toBe(201);
    const own = await alice.get('/api/auth/passkeys');
    const res = await root.get(`/api/admin/user/${aliceId}/passkeys`);
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual(own.body.data);
    expect(res.body.data.map((p: { name: string }) => p.name)).toEqual(['Laptop', 'Phone']);
    // An upper-cased id names the same user (kernel/identity.ts UserIdParam).
    expect((await root.get(`/api/admin/user/${aliceId.toUpperCase()}/passkeys`)).body.data).toEqual(
      own.body.data,
    );

    for (const id of ['00000000-0000-4000-8000-000000000000', 'not-a-uuid']) {
      const missing = await root.get(`/api/admin/user/${id}/passkeys`);
      expect(missing.status).toBe(404);
      expect(missing.body.detail[0]).toMatchObject({ code: 'user.not_found', loc: ['path', 'user_id'] });
    }
  });

  it("deletes a user's passkey (204, gone for its owner, in the activity log); 404 for one not theirs", async () => {
    const mine = (await registerPasskey(alice, new SoftAuthenticator(PASSKEY_TEST_ORIGIN), { name: 'Key' }))
      .body.data;
    const bobs = (await registerPasskey(bob, new SoftAuthenticator(PASSKEY_TEST_ORIGIN))).body.data;

    const notTheirs = await root.delete(`/api/admin/user/${aliceId}/passkeys/${bobs.id}`);
    expect(notTheirs.status).toBe(404);
    expect(notTheirs.body.detail[0]).toMatchObject({ code: 'auth.passkey_not_found' });
    expect((await bob.get('/api/auth/passkeys')).body.data).toHaveLength(1);
    const notAnId = await root.delete(`/api/admin/user/${aliceId}/passkeys/nope`);
    expect(notAnId.body.detail[0]).toMatchObject({ code: 'auth.passkey_not_found' });
    const noUser = await root.delete(
      `/api/admin/user/00000000-0000-4000-8000-000000000000/passkeys/${mine.id}`,
    );
    expect(noUser.status).toBe(404);
    expect(noUser.body.detail[0]).toMatchObject({ code: 'user.not_found' });

    const res = await root.delete(`/api/admin/user/${aliceId}/passkeys/${mine.id}`);
    expect(res.status).toBe(204);
    const left = (await alice.get('/api/auth/passkeys')).body.data as { id: string }[];
    expect(left.map((p) => p.id)).not.toContain(mine.id);
    expect((await root.delete(`/api/admin/user/${aliceId}/passkeys/${mine.id}`)).status).toBe(404);

    const log = await root.get(`/api/admin/audit/logs?method=DELETE&pageSize=50`);
    expect(log.status).toBe(200);
    const entry = (log.body.data.items as any[]).find(
      (e) => e.path === `/api/admin/user/${aliceId}/passkeys/${mine.id}` && e.statusCode === 204,
    );
    expect(entry).toMatchObject({
      username: 'pk_root',
      description: `deleted passkey ${mine.id} of user ${aliceId}`,
    });
  });

  it('refuses users who are not superusers with 403 access.superuser_required', async () => {
    for (const res of [
      await bob.get(`/api/admin/user/${aliceId}/passkeys`),
      await bob.delete(`/api/admin/user/${aliceId}/passkeys/00000000-0000-4000-8000-000000000000`),
    ]) {
      expect(res.status).toBe(403);
      expect(res.body.detail[0]).toMatchObject({ code: 'access.superuser_required' });
    }
  });
});

describeEachDatabase("A user's passkeys for superusers, with passkeys_enabled false", (database) => {
  let app: TestApp;
  afterAll(() => app.close());

  it('answers 404 request.not_found: the routes are not mounted', async () => {
    app = await startTestApp({ database, settings: { passkeys_enabled: false } });
    const root = await app.loginAs(await app.createUser({ username: 'pk_off_root', isSuperuser: true }));
    const user = await app.createUser({ username: 'pk_off_user' });
    for (const res of [
      await root.get(`/api/admin/user/${user.id}/passkeys`),
      await root.delete(`/api/admin/user/${user.id}/passkeys/00000000-0000-4000-8000-000000000000`),
    ]) {
      expect(res.status).toBe(404);
      expect(res.body.detail[0]).toMatchObject({ code: 'request.not_found' });
    }
  });
});
