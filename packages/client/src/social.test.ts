import { createSqliteDatabase, startTestApp, type TestApp } from '@svc/core/testing';
import { freePort } from '../../../testing/cli-process.js';
import { bindingCookie, startTestIdp, type TestIdp } from '../../../testing/oidc.js';
import { createClient, memoryStorage, SvcApiError } from './index.js';

// docs/social-login.md "The frontend" against a real server and a real OpenID provider: the providers, the
// redirect, the fragment the callback comes back with, the exchange and the identities. The client is the
// same on every database: one SQLite app.
describe('@svc/client social login', () => {
  let idp: TestIdp;
  let app: TestApp;
  let db: ReturnType<typeof createSqliteDatabase>;

  beforeAll(async () => {
    idp = await startTestIdp();
    db = createSqliteDatabase();
    const port = await freePort();
    app = await startTestApp({
      database: { dialect: 'sqlite', label: 'sqlite', url: db.url },
      port,
      settings: {
        public_url: `http://127.0.0.1:${port}`,
        oauth_providers: 'acme',
        oauth_registration_enabled: true,
        ...{
          oauth_acme_label: 'Acme',
          oauth_acme_issuer: idp.issuer,
          oauth_acme_client_id: idp.clientId,
          oauth_acme_client_secret: idp.clientSecret,
        },
      },
    });
    await idp.register([`${app.url}/api/auth/oauth/acme/callback`]);
  }, 60_000);
  afterAll(async () => {
    await app?.close();
    await idp?.close();
    await db?.drop();
  });

  /** What a browser does between `signInWith` and the page it comes back to: the callback's location. */
  async function browse(url: string, sub: string): Promise<string> {
    const authorize = await fetch(url, { redirect: 'manual' });
    const callback = await idp.signIn(authorize.headers.get('location')!, sub);
    const back = await fetch(callback, { headers: { cookie: bindingCookie(authorize) }, redirect: 'manual' });
    return back.headers.get('location')!;
  }

  it('lists the providers, signs in through the provider and the exchange, and lists the identities', async () => {
    const client = createClient({ baseUrl: app.url, storage: memoryStorage() });
    expect(await client.oauthProviders()).toEqual([{ name: 'acme', label: 'Acme' }]);
    const url = client.signInWith('acme', { redirectTo: '/signed-in' });
    expect(url).toBe(`${app.url}/api/auth/oauth/acme/authorize?redirect_to=%2Fsigned-in`);
    idp.accounts.set('client-user', {
      sub: 'client-user',
      email: 'client@example.com',
      email_verified: true,
    });
    const back = await browse(url, 'client-user');
    expect(back.startsWith(`${app.url}/signed-in#svc_code=`)).toBe(true);
    expect(await client.completeSignIn(back)).toEqual({ status: 'signed-in' });
    expect((await client.user()).email).toBe('client@example.com');
    expect(await client.identities()).toEqual([expect.objectContaining({ provider: 'acme' })]);
    // A link starts at the provider (the browser would go there and come back with #svc_linked).
    expect(new URL(await client.link('acme')).origin).toBe(idp.issuer);
    expect(await client.completeSignIn(`${app.url}/#svc_linked=acme`)).toEqual({
      status: 'linked',
      provider: 'acme',
    });
    expect(await client.completeSignIn(`${app.url}/plain`)).toBeNull();
  });

  it('throws the code of #svc_error, and of a used code', async () => {
    const client = createClient({ baseUrl: app.url, storage: memoryStorage() });
    const error = await client
      .completeSignIn(`${app.url}/#svc_error=auth.oauth_account_exists`)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SvcApiError);
    expect((error as SvcApiError).code).toBe('auth.oauth_account_exists');
    idp.accounts.set('twice', { sub: 'twice' });
    const back = await browse(client.signInWith('acme'), 'twice');
    await client.completeSignIn(back);
    const used = await client.completeSignIn(back).catch((e: unknown) => e);
    expect((used as SvcApiError).code).toBe('auth.oauth_code_invalid');
  });
});
