import { freePort } from '../../../../testing/cli-process.js';
import {
  oidcSettings,
  socialSignIn,
  startAuthorize,
  startTestIdp,
  type TestIdp,
} from '../../../../testing/oidc.js';
import { useTwoInstances } from '../../../../testing/two-instances.js';

// SPEC-3 section 1 on several hosts: the state and the exchange code live in the shared cache, so a flow started
// on one instance completes on another, and the code works once across them. Two app instances on one
// PostgreSQL database and one Redis stand for two hosts behind one public_url.
describe('social login across two app instances (PostgreSQL + Redis)', () => {
  let idp: TestIdp;
  afterAll(async () => {
    await idp?.close();
  });
  const cluster = useTwoInstances('social login across instances', async () => {
    const [started, port] = await Promise.all([startTestIdp(), freePort()]);
    idp = started;
    const settings = {
      public_url: `http://127.0.0.1:${port}`, // A's address is the public one; B serves the same paths
      oauth_providers: 'acme',
      oauth_registration_enabled: true,
      ...oidcSettings('acme', idp),
    };
    return [{ port, settings }, { settings }];
  });
  if (!cluster) return;
  beforeAll(() => idp.register([`${cluster.a.url}/api/auth/oauth/acme/callback`]));

  it('completes on B a flow started on A, exchanges on A a code issued on B, once', async () => {
    const { a, b } = cluster;
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
