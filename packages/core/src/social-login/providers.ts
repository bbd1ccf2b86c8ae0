import { isIP } from 'node:net';
import type { Settings } from '../kernel/config/schema.js';
import { ConfigError } from '../kernel/config/load.js';
import { DEFAULT_SCOPES } from './constants.js';

/** What a provider says of the person who signed in (SPEC-3 section 1: `profile(tokens)` returns it). */
export interface OAuthProfile {
  /** The provider's stable id of the person (with the issuer, the identity). */
  subject: string;
  email: string | null;
  /** True only when the provider says it verified the address. */
  emailVerified: boolean;
  username?: string;
  firstName?: string;
  lastName?: string;
}

/**
 * A provider added in code: `createApp({ oauthProviders: [...] })` (SPEC-3 section 1). Enabled by being passed;
 * its client id and secret come from `oauth_<name>_client_id` / `oauth_<name>_client_secret`.
 * @example
 * { name: 'acme', issuer: 'https://sso.acme.test', authorizationEndpoint: 'https://sso.acme.test/authorize',
 *   tokenEndpoint: 'https://sso.acme.test/token',
 *   profile: async ({ accessToken }) => ({ subject: '42', email: 'a@acme.test', emailVerified: true }) }
 */
export interface OAuthProviderDefinition {
  name: string;
  /** Text of the sign-in button. @default the name */
  label?: string;
  /** The identity's issuer (stored with the subject). */
  issuer: string;
  authorizationEndpoint: string;
  tokenEndpoint: string;
  /** @default 'openid email profile' */
  scopes?: string;
  /**
   * Who signed in, from the tokens of the code exchange. `idToken` is passed as the token endpoint returned it:
   * a provider in code has no discovery document, hence no keys to check it with, so read the profile from an
   * API with the access token (as the `github` preset does) or verify the ID token yourself.
   */
  profile(tokens: { accessToken: string; idToken?: string }): Promise<OAuthProfile>;
}

/** The `createApp` option of the social-login module. */
export interface SocialLoginOptions {
  /** Providers added in code (SPEC-3 section 1); see {@link OAuthProviderDefinition}. @default [] */
  oauthProviders?: OAuthProviderDefinition[];
}

/** How a provider is spoken to: OpenID Connect by discovery, GitHub's OAuth 2.0, or a provider in code. */
export type ProviderKind = 'oidc' | 'github' | 'code';

/** A provider as the module uses it: settings and presets resolved, checked at startup. */
export interface ResolvedProvider {
  name: string;
  label: string;
  kind: ProviderKind;
  /** The issuer identities are stored with: as configured, without a trailing `/`. */
  issuer: string;
  /**
   * OpenID: the issuer exactly as configured, for discovery. The document's `issuer` must equal it (OpenID
   * Connect Discovery 1.0 §4.3), and an issuer with a path may end in `/` (`https://host/realms/x/`).
   */
  discoveryIssuer?: string;
  scopes: string;
  clientId: string;
  clientSecret: string;
  /** GitHub: the authorization, token and API endpoints. */
  github?: { authorizationEndpoint: string; tokenEndpoint: string; apiUrl: string };
  definition?: OAuthProviderDefinition;
  /** `http://` on a loopback host (development and tests): allowed only there. */
  insecure: boolean;
}

/** SPEC-3 section 1: the presets. */
const PRESETS: Record<string, { kind: 'oidc' | 'github'; issuer: string; label: string; scopes?: string }> = {
  google: { kind: 'oidc', issuer: 'https://accounts.google.com', label: 'Google' },
  gitlab: { kind: 'oidc', issuer: 'https://gitlab.com', label: 'GitLab' },
  // GitHub is OAuth 2.0 without OpenID: the email comes from its API (`user:email`).
  github: { kind: 'github', issuer: 'https://github.com', label: 'GitHub', scopes: 'read:user user:email' },
};

/** A provider name as it appears in setting names and the path: lower-case letters, digits, underscores. */
const PROVIDER_NAME = /^[a-z][a-z0-9_]{0,63}$/;

function setting(settings: Settings, name: string): string {
  const value = (settings as Record<string, unknown>)[name];
  return value === undefined || value === null ? '' : String(value).trim();
}

/** Loopback hosts, where `http://` is accepted (SPEC-3 section 1). */
function isLoopback(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '');
  if (host === 'localhost') return true;
  if (isIP(host) === 4) return host.startsWith('127.');
  return host === '::1';
}

/** The URL of `value`, refused (naming `name`) unless https, or http on a loopback host. */
function checkedUrl(value: string, name: string): { url: URL; insecure: boolean } {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError(`${name}: '${value}' is not a URL`);
  }
  if (url.protocol === 'https:') return { url, insecure: false };
  if (url.protocol === 'http:' && isLoopback(url.hostname)) return { url, insecure: true };
  throw new ConfigError(`${name}: '${value}' must be an https:// URL (http:// only for loopback hosts)`);
}

/**
 * The enabled providers: the names of `oauth_providers` (presets or issuers from the settings) and those added
 * in code. Refuses the start, naming the setting, for a listed provider without a client id, or without an
 * issuer and no preset (SPEC-3 section 1).
 */
export function resolveProviders(
  settings: Settings,
  inCode: readonly OAuthProviderDefinition[],
): ResolvedProvider[] {
  const resolved: ResolvedProvider[] = [];
  const names = new Set<string>();
  const add = (provider: ResolvedProvider) => {
    if (names.has(provider.name))
      throw new ConfigError(`oauth_providers: '${provider.name}' is listed twice`);
    names.add(provider.name);
    resolved.push(provider);
  };
  const credentials = (name: string) => {
    const clientId = setting(settings, `oauth_${name}_client_id`);
    if (clientId === '')
      throw new ConfigError(`oauth_${name}_client_id is not set: provider '${name}' needs its client id`);
    return { clientId, clientSecret: setting(settings, `oauth_${name}_client_secret`) };
  };
  for (const definition of inCode) {
    if (!PROVIDER_NAME.test(definition.name))
      throw new ConfigError(`oauthProviders: '${definition.name}' is not a provider name (a-z, 0-9, _)`);
    const { insecure } = checkedUrl(definition.authorizationEndpoint, `oauthProviders ${definition.name}`);
    checkedUrl(definition.tokenEndpoint, `oauthProviders ${definition.name}`);
    add({
      name: definition.name,
      label: definition.label ?? definition.name,
      kind: 'code',
      issuer: definition.issuer,
      scopes: definition.scopes ?? DEFAULT_SCOPES,
      ...credentials(definition.name),
      definition,
      insecure,
    });
  }
  for (const raw of settings.oauth_providers) {
    const name = raw.toLowerCase();
    if (names.has(name) && inCode.some((p) => p.name === name)) continue; // configured in code
    if (!PROVIDER_NAME.test(name))
      throw new ConfigError(`oauth_providers: '${raw}' is not a provider name (a-z, 0-9, _)`);
    const preset = PRESETS[name];
    const issuerSetting = `oauth_${name}_issuer`;
    const issuerValue = setting(settings, issuerSetting) || preset?.issuer || '';
    if (issuerValue === '')
      throw new ConfigError(
        `${issuerSetting} is not set: provider '${name}' has no preset and needs its issuer`,
      );
    const { insecure } = checkedUrl(issuerValue, issuerSetting);
    const issuer = issuerValue.replace(/\/+$/, '');
    const kind = preset?.kind ?? 'oidc';
    add({
      name,
      label: setting(settings, `oauth_${name}_label`) || preset?.label || name,
      kind,
      issuer,
      ...(kind === 'oidc' ? { discoveryIssuer: issuerValue } : {}),
      scopes: setting(settings, `oauth_${name}_scopes`) || preset?.scopes || DEFAULT_SCOPES,
      ...credentials(name),
      insecure,
      ...(kind === 'github' ? { github: githubEndpoints(issuer) } : {}),
    });
  }
  return resolved;
}

/**
 * GitHub's endpoints: github.com's, or those of a GitHub Enterprise Server named by `oauth_github_issuer`
 * (`{issuer}/login/oauth/...` and its API at `{issuer}/api/v3`).
 */
function githubEndpoints(issuer: string) {
  const base = issuer.replace(/\/+$/, '');
  return {
    authorizationEndpoint: `${base}/login/oauth/authorize`,
    tokenEndpoint: `${base}/login/oauth/access_token`,
    apiUrl: base === 'https://github.com' ? 'https://api.github.com' : `${base}/api/v3`,
  };
}
