import { createServer, type Server } from 'node:http';
import { createSqliteDatabase, startTestApp } from '../testing/index.js';

/**
 * SPEC-3 section 1: `oauth_<name>_issuer` is the OpenID issuer, whose discovery document is at
 * `{issuer}/.well-known/openid-configuration`. OpenID Connect Discovery 1.0 §4.3 wants the document's `issuer`
 * identical to the configured one, so an issuer with a path and a trailing slash (`https://host/tenant/`, as
 * Keycloak realms and Azure AD v2 tenants publish them) must be asked for as written.
 */
describe('an OpenID issuer with a path', () => {
  let server: Server;
  let base = '';
  let file: ReturnType<typeof createSqliteDatabase>;
  beforeAll(async () => {
    file = createSqliteDatabase();
    // A discovery document only: authorize needs nothing more than the authorization endpoint.
    server = createServer((req, res) => {
      const match = /^\/(slash|bare)\/\.well-known\/openid-configuration$/.exec(req.url ?? '');
      if (!match) {
        res.statusCode = 404;
        res.end();
        return;
      }
      const issuer = `${base}/${match[1]}${match[1] === 'slash' ? '/' : ''}`;
      res.setHeader('content-type', 'application/json');
      res.end(
        JSON.stringify({
          issuer,
          authorization_endpoint: `${base}/${match[1]}/auth`,
          token_endpoint: `${base}/${match[1]}/token`,
          jwks_uri: `${base}/${match[1]}/jwks`,
          response_types_supported: ['code'],
          subject_types_supported: ['public'],
          id_token_signing_alg_values_supported: ['RS256'],
        }),
      );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
    await file.drop();
  });

  it.each([
    ['with a trailing slash', 'slash/'],
    ['without one', 'bare'],
  ])('is discovered %s: authorize sends the browser to its authorization endpoint', async (_label, path) => {
    const app = await startTestApp({
      database: { dialect: 'sqlite', label: 'sqlite', url: file.url },
      // Per-provider settings are named after the provider, so they are not in the typed settings.
      settings: {
        oauth_providers: 'corp',
        ...{ oauth_corp_issuer: `${base}/${path}`, oauth_corp_client_id: 'c' },
      },
    });
    try {
      const res = await fetch(`${app.url}/api/auth/oauth/corp/authorize`, { redirect: 'manual' });
      expect(res.status).toBe(302);
      expect(res.headers.get('location')!.startsWith(`${base}/${path.replace(/\/$/, '')}/auth?`)).toBe(true);
    } finally {
      await app.close();
    }
  });
});
