import { randomBytes } from 'node:crypto';
import { freePort } from '../../../../testing/cli-process.js';
import { socialSignIn, startAuthorize, startTestIdp, type TestIdp } from '../../../../testing/oidc.js';
import {
  createPostgresDatabase,
  reportSkipped,
  startTestApp,
  TEST_POSTGRES_URL,
  TEST_REDIS_URL,
  type TestApp,
  type TestCache,
  type TestDatabase,
} from '../testing/index.js';

// SPEC-3 section 1 on several hosts: the state and the exchange code live in the shared cache, so a flow started
// on one instance completes on another, and the code works once across them. Two app instances on one
// PostgreSQL database and one Redis stand for two hosts behind one public_url.
describe('social login across two app instances (PostgreSQL + Redis)', () => {
  if (!TEST_POSTGRES_URL || !TEST_REDIS_URL) {
    reportSkipped(
      'social login across instances',
      'SVC_TEST_POSTGRES_URL and SVC_TEST_REDIS_URL are both needed',
    );
    return;
  }
  let created: { url: string; drop(): Promise<void> };
  let idp: TestIdp;
  let a: TestApp;
  let b: TestApp;

  beforeAll(async () => {
    [created, idp] = await Promise.all([createPostgresDatabase(), startTestIdp()]);
    const database: TestDatabase = { dialect: 'pg', label: 'postgres', url: created.url };
    const cache: TestCache = {
      kind: 'redis',
      url: TEST_REDIS_URL,
      prefix: `svctest:${randomBytes(5).toString('hex')}:`,
    };
    const port = await freePort();
    const settings = {
      public_url: `http://127.0.0.1:${port}`, // A's address is the public one; B serves the same paths
      oauth_providers: 'acme',
      oauth_registration_enabled: true,
      ...{
        oauth_acme_issuer: idp.issuer,
        oauth_acme_client_id: idp.clientId,
        oauth_acme_client_secret: idp.clientSecret,
      },
    };
    a = await startTestApp({ database, cache, port, settings });
    b = await startTestApp({ database, cache, settings });
    await idp.register([`${a.url}/api/auth/oauth/acme/callback`]);
  }, 60_000);
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await idp?.close();
    await created?.drop();
  }, 30_000);

  it('completes on B a flow started on A, exchanges on A a code issued on B, once', async () => {
    idp.accounts.set('traveller', { sub: 'traveller', email: 'traveller@example.com', email_verified: true });
    const result = await socialSignIn(a.url, 'acme', idp, 'traveller', {
      callbackAppUrl: b.url,
      redirectTo: '/in',
    });
    expect(result.target).toBe(`${a.url}/in`);
    expect(result.fragment.svc_code).toBeDefined();
    const [onA, onB] = await Promise.all([
      a.post('/api/auth/oauth/exchange', { code: result.fragment.svc_code }),
      b.post('/api/auth/oauth/exchange', { code: result.fragment.svc_code }),
    ]);
    expect([onA.status, onB.status].sort()).toEqual([200, 400]);
    // A state is used once across the instances: the callback served by B is refused when replayed on A.
    const start = await startAuthorize(a.url, 'acme');
    const callback = new URL(await idp.signIn(start.authorizationUrl, 'traveller'));
    const served = await fetch(`${b.url}${callback.pathname}${callback.search}`, {
      headers: { cookie: start.cookie },
      redirect: 'manual',
    });
    expect(served.headers.get('location')).toMatch(/#svc_code=/);
    const replayed = await fetch(callback, { headers: { cookie: start.cookie }, redirect: 'manual' });
    expect(replayed.headers.get('location')).toBe(`${a.url}/#svc_error=auth.oauth_state_invalid`);
  });
});
