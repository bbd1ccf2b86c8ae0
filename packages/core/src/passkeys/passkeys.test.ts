import {
  PASSKEY_TEST_ORIGIN,
  PASSKEY_TEST_SETTINGS,
  registerPasskey,
  SoftAuthenticator,
} from '../../../../testing/webauthn.js';
import { describeEachDatabase, startTestApp, type LoggedInClient, type TestApp } from '../testing/index.js';

describeEachDatabase('Passkey registration and management', (database) => {
  let app: TestApp;
  let alice: LoggedInClient;
  let bob: LoggedInClient;
  beforeAll(async () => {
    app = await startTestApp({
      database,
      settings: { ...PASSKEY_TEST_SETTINGS, personal_tokens_enabled: true },
    });
    alice = await app.loginAs(await app.createUser({ username: 'alice', firstName: 'Alice', lastName: 'A' }));
    bob = await app.loginAs(await app.createUser({ username: 'bob' }));
  });
  afterAll(() => app.close());

  it('offers creation options from the settings: user verification required, resident key preferred', async () => {
    const res = await alice.post('/api/auth/passkeys/register/options');
    expect(res.status).toBe(200);
    const options = res.body.data;
    expect(options.rp).toEqual({ id: 'example.test', name: 'Example' });
    expect(options.user).toMatchObject({ name: 'alice', displayName: 'Alice A' });
    expect(options.authenticatorSelection).toMatchObject({
      residentKey: 'preferred',
      userVerification: 'required',
    });
    expect(options.attestation).toBe('none');
    expect(options.pubKeyCredParams).toContainEqual({ type: 'public-key', alg: -7 });
    expect(options.challenge).toMatch(/^[\w-]{32,}$/);
  });

  it('registers, lists, renames and deletes a passkey; existing ones are excluded from new options', async () => {
    const device = new SoftAuthenticator(PASSKEY_TEST_ORIGIN);
    const created = await registerPasskey(alice, device, { name: 'Laptop' });
    expect(created.status).toBe(201);
    const passkey = created.body.data;
    expect(passkey).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      name: 'Laptop',
      createdAt: expect.any(String),
      lastUsedAt: null,
      transports: ['hybrid', 'internal'],
    });
    const unnamed = await registerPasskey(alice, device);
    expect(unnamed.status).toBe(201);
    expect(unnamed.body.data.name).toBe('Passkey');

    const next = await alice.post('/api/auth/passkeys/register/options');
    expect(next.body.data.excludeCredentials.map((c: { id: string }) => c.id).sort()).toEqual(
      device.credentials.map((c) => c.id.toString('base64url')).sort(),
    );

    const list = await alice.get('/api/auth/passkeys');
    expect(list.status).toBe(200);
    expect(list.body.data.map((p: { name: string }) => p.name)).toEqual(['Laptop', 'Passkey']);
    expect(JSON.stringify(list.body)).not.toMatch(/publicKey|credentialId|counter/);

    const renamed = await alice.patch(`/api/auth/passkeys/${passkey.id}`, { name: '  Phone  ' });
    expect(renamed.status).toBe(200);
    expect(renamed.body.data).toMatchObject({ id: passkey.id, name: 'Phone' });

    expect((await alice.delete(`/api/auth/passkeys/${passkey.id}`)).status).toBe(204);
    const again = await alice.delete(`/api/auth/passkeys/${passkey.id}`);
    expect(again.status).toBe(404);
    expect(again.body.detail[0]).toMatchObject({ code: 'auth.passkey_not_found', loc: ['path', 'id'] });
    expect((await alice.get('/api/auth/passkeys')).body.data).toHaveLength(1);
  });

  it("answers 404 for another user's passkey and for an id that is not one", async () => {
    const created = await registerPasskey(bob, new SoftAuthenticator(PASSKEY_TEST_ORIGIN));
    const id = created.body.data.id as string;
    for (const res of [
      await alice.patch(`/api/auth/passkeys/${id}`, { name: 'mine' }),
      await alice.delete(`/api/auth/passkeys/${id}`),
      await alice.delete('/api/auth/passkeys/not-a-uuid'),
    ]) {
      expect(res.status).toBe(404);
      expect(res.body.detail[0].code).toBe('auth.passkey_not_found');
    }
    expect((await bob.get('/api/auth/passkeys')).body.data).toHaveLength(1);
  });

  it('refuses a registration challenge used twice', async () => {
    const device = new SoftAuthenticator(PASSKEY_TEST_ORIGIN);
    const started = await alice.post('/api/auth/passkeys/register/options');
    const response = device.create(started.body.data);
    expect((await alice.post('/api/auth/passkeys/register', { response })).status).toBe(201);
    const replay = await alice.post('/api/auth/passkeys/register', { response });
    expect(replay.status).toBe(400);
    expect(replay.body.detail[0]).toMatchObject({ code: 'auth.passkey_invalid', loc: ['body', 'response'] });
  });

  it('refuses a credential registered already, by the same user or another (never moved)', async () => {
    const carol = await app.loginAs(await app.createUser({ username: 'carol' }));
    const started = await carol.post('/api/auth/passkeys/register/options');
    const first = new SoftAuthenticator(PASSKEY_TEST_ORIGIN).create(started.body.data);
    expect((await carol.post('/api/auth/passkeys/register', { response: first })).status).toBe(201);
    const aliceBefore = (await alice.get('/api/auth/passkeys')).body.data.length;
    // With `none` attestation the client data is not signed: the same credential answers a new challenge.
    for (const client of [carol, alice]) {
      const next = await client.post('/api/auth/passkeys/register/options');
      const clientData = {
        type: 'webauthn.create',
        challenge: next.body.data.challenge,
        origin: PASSKEY_TEST_ORIGIN,
      };
      const clientDataJSON = Buffer.from(JSON.stringify(clientData)).toString('base64url');
      const res = await client.post('/api/auth/passkeys/register', {
        response: { ...first, response: { ...first.response, clientDataJSON } },
      });
      expect(res.status).toBe(400);
      expect(res.body.detail[0].code).toBe('auth.passkey_invalid');
    }
    expect((await carol.get('/api/auth/passkeys')).body.data).toHaveLength(1);
    expect((await alice.get('/api/auth/passkeys')).body.data).toHaveLength(aliceBefore);
  });

  it("refuses another user's registration challenge", async () => {
    const started = await bob.post('/api/auth/passkeys/register/options');
    const response = new SoftAuthenticator(PASSKEY_TEST_ORIGIN).create(started.body.data);
    const res = await alice.post('/api/auth/passkeys/register', { response });
    expect(res.status).toBe(400);
    expect(res.body.detail[0].code).toBe('auth.passkey_invalid');
  });

  it('refuses a registration without user verification or from an origin not in webauthn_origins', async () => {
    for (const overrides of [{ userVerified: false }, { origin: 'https://evil.example' }]) {
      const device = new SoftAuthenticator(PASSKEY_TEST_ORIGIN);
      const res = await registerPasskey(bob, device, { overrides });
      expect(res.status).toBe(400);
      expect(res.body.detail[0].code).toBe('auth.passkey_invalid');
    }
    expect((await bob.get('/api/auth/passkeys')).body.data).toHaveLength(1);
  });

  it('answers malformed credentials with 422 or 400, never 500', async () => {
    const bad = await alice.post('/api/auth/passkeys/register', { response: { id: 'x' } });
    expect(bad.status).toBe(422);
    const garbage = await alice.post('/api/auth/passkeys/register', {
      response: {
        id: 'AAAA',
        rawId: 'AAAA',
        type: 'public-key',
        response: { clientDataJSON: 'AAAA', attestationObject: 'AAAA' },
      },
    });
    expect(garbage.status).toBe(400);
    expect(garbage.body.detail[0].code).toBe('auth.passkey_invalid');
  });
  it('refuses personal access tokens on the passkey routes (credential routes, SPEC-2 section 4)', async () => {
    const created = await alice.post('/api/auth/tokens', { name: 'ci' });
    expect(created.status).toBe(201);
    const withToken = app.as(created.body.data.token);
    for (const res of [
      await withToken.get('/api/auth/passkeys'),
      await withToken.post('/api/auth/passkeys/register/options'),
    ]) {
      expect(res.status).toBe(403);
      expect(res.body.detail[0].code).toBe('access.token_not_allowed');
    }
  });

  it('lists the passkeys in the account export without their keys', async () => {
    const owner = await app.loginAs(await app.createUser({ username: 'exporter' }));
    const device = new SoftAuthenticator(PASSKEY_TEST_ORIGIN);
    expect((await registerPasskey(owner, device, { name: 'Laptop' })).status).toBe(201);
    const res = await owner.get('/api/auth/user/export');
    expect(res.status).toBe(200);
    expect(res.body.passkeys).toEqual((await owner.get('/api/auth/passkeys')).body.data);
    expect(res.body.passkeys).toEqual([expect.objectContaining({ name: 'Laptop' })]);
    const credentialId = device.credentials[0]!.id.toString('base64url');
    expect(res.text).not.toContain(credentialId);
    expect(res.text).not.toMatch(/publicKey|public_key/);
  });

  it('documents every passkey route with its request and response schemas in /docs/core', async () => {
    const { paths } = (await app.get('/openapi-core.json')).body;
    const operations: [string, string][] = [
      ['/api/auth/passkeys/register/options', 'post'],
      ['/api/auth/passkeys/register', 'post'],
      ['/api/auth/passkeys/', 'get'],
      ['/api/auth/passkeys/{id}', 'patch'],
      ['/api/auth/passkeys/{id}', 'delete'],
      ['/api/auth/passkey/options', 'post'],
      ['/api/auth/passkey/token', 'post'],
      ['/api/mfa/webauthn/options', 'post'],
    ];
    for (const [path, method] of operations) {
      const operation = paths[path]?.[method];
      expect({ path, method, documented: operation !== undefined }).toEqual({
        path,
        method,
        documented: true,
      });
      if (method === 'post' && !path.endsWith('register/options'))
        expect(operation.requestBody).toBeDefined();
    }
    expect(paths['/api/mfa/verify'].post.requestBody.content['application/json'].schema).toBeDefined();
  });
});

describeEachDatabase('Passkey routes when passkeys_enabled is false', (database) => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ database });
  });
  afterAll(() => app.close());

  it('mounts none of them', async () => {
    const alice = await app.loginAs(await app.createUser({ username: 'alice' }));
    expect((await alice.get('/api/auth/passkeys')).status).toBe(404);
    expect((await app.post('/api/auth/passkey/options', {})).status).toBe(404);
    expect((await app.post('/api/mfa/webauthn/options', { mfa_token: 'x' })).status).toBe(404);
  });
});

describeEachDatabase('Passkey routers in disable_core_routers', (database) => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({
      database,
      settings: { ...PASSKEY_TEST_SETTINGS, disable_core_routers: ['passkey-login'] },
    });
  });
  afterAll(() => app.close());

  it('switches the passkey login off and keeps the management routes', async () => {
    const alice = await app.loginAs(await app.createUser({ username: 'alice' }));
    expect((await alice.get('/api/auth/passkeys')).status).toBe(200);
    expect((await app.post('/api/auth/passkey/options', {})).status).toBe(404);
    expect((await app.post('/api/mfa/webauthn/options', { mfa_token: 'x' })).status).toBe(404);
  });
});
