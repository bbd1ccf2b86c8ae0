import { SettingsSchema } from '../kernel/config/schema.js';
import { allowedRedirectOrigins } from './redirect.js';
import { resolveProviders } from './providers.js';

const settingsOf = (values: Record<string, unknown>) => SettingsSchema.parse(values);

// SPEC-3 section 1: the start refuses a listed provider without a client id, or without an issuer and no
// preset, naming the setting; `http://` only for loopback hosts; a setting outside its range refuses the start.
describe('social login providers at startup', () => {
  it('resolves the presets and a generic issuer', () => {
    const providers = resolveProviders(
      settingsOf({
        oauth_providers: 'google,github,acme',
        oauth_google_client_id: 'g',
        oauth_github_client_id: 'h',
        oauth_acme_client_id: 'a',
        oauth_acme_issuer: 'https://sso.acme.example/',
      }),
      [],
    );
    expect(providers.map((p) => [p.name, p.label, p.kind, p.issuer, p.scopes])).toEqual([
      ['google', 'Google', 'oidc', 'https://accounts.google.com', 'openid email profile'],
      ['github', 'GitHub', 'github', 'https://github.com', 'read:user user:email'],
      ['acme', 'acme', 'oidc', 'https://sso.acme.example', 'openid email profile'],
    ]);
    expect(providers[1]!.github).toEqual({
      authorizationEndpoint: 'https://github.com/login/oauth/authorize',
      tokenEndpoint: 'https://github.com/login/oauth/access_token',
      apiUrl: 'https://api.github.com',
    });
  });

  it.each([
    [{ oauth_providers: 'google' }, /oauth_google_client_id/],
    [{ oauth_providers: 'acme', oauth_acme_client_id: 'a' }, /oauth_acme_issuer/],
    [
      { oauth_providers: 'acme', oauth_acme_client_id: 'a', oauth_acme_issuer: 'http://sso.example' },
      /oauth_acme_issuer.*loopback/,
    ],
    [{ oauth_providers: 'Bad-Name' }, /oauth_providers/],
  ])('refuses %j, naming the setting', (values, message) => {
    expect(() => resolveProviders(settingsOf(values), [])).toThrow(message);
  });

  it('accepts http:// on loopback hosts, and refuses an allowed redirect origin that is no origin', () => {
    const [local] = resolveProviders(
      settingsOf({
        oauth_providers: 'dev',
        oauth_dev_client_id: 'd',
        oauth_dev_issuer: 'http://127.0.0.1:9000',
      }),
      [],
    );
    expect(local!.insecure).toBe(true);
    expect(() => allowedRedirectOrigins('https://app.example', ['https://spa.example/path'])).toThrow(
      /oauth_allowed_redirect_origins/,
    );
    expect([...allowedRedirectOrigins('https://app.example/base', ['https://spa.example'])]).toEqual([
      'https://app.example',
      'https://spa.example',
    ]);
  });
});
