import { issueTokensWith } from '../kernel/browser-session.js';
import { defineModule, moduleOptions } from '../kernel/module.js';
import { createFlowStore } from './flow-store.js';
import { createLinkingRules } from './linking.js';
import { resolveProviders, type SocialLoginOptions } from './providers.js';
import { createAdminIdentitiesRouter, createIdentitiesRouter, createOAuthRouter } from './routes.js';
import { createSocialLoginService, toIdentityOut } from './service.js';
import { createSocialLoginStore } from './store.js';
import { socialLoginTables } from './tables.js';

export type { OAuthProfile, OAuthProviderDefinition, SocialLoginOptions } from './providers.js';

/**
 * Social login (SPEC-3 section 1, docs/social-login.md): sign-in with OpenID Connect providers (presets `google`,
 * `gitlab`, any issuer) and GitHub, providers added in code, and identity linking by one set of rules. Its table
 * and routes exist whatever the settings; with no provider enabled the list is empty and every provider unknown.
 */
export const socialLoginModule = defineModule({
  name: 'social-login',
  tables: socialLoginTables,
  options: moduleOptions<SocialLoginOptions>('oauthProviders'),
  requires: ['loginGuard'],
  uses: ['secondFactor', 'rateLimiter', 'browserSessions', 'webhooks', 'activity'],
  setup({ settings, authDb, cache, log, ports, tables, coreTables, options }) {
    const store = createSocialLoginStore(authDb, settings, tables, coreTables);
    // SPEC-3 section 1: the export lists the user's identities (no tokens are stored).
    const accountExport = {
      identities: async (userId: string) => (await store.list(userId)).map(toIdentityOut),
    };
    // Startup refuses a listed provider without a client id or an issuer, naming the setting.
    const providers = resolveProviders(settings, options.oauthProviders ?? []);
    const now = () => new Date();
    const linking = createLinkingRules({
      settings,
      store,
      events: () => ports.get('events'),
      webhooks: () => ports.get('webhooks'),
      activity: () => ports.find('activity'),
      now,
    });
    const service = createSocialLoginService({
      settings,
      providers,
      store,
      flows: createFlowStore(cache),
      linking,
      log,
      ports,
      now,
    });
    return {
      routers: [
        createOAuthRouter(service, issueTokensWith(ports)),
        createIdentitiesRouter(service),
        createAdminIdentitiesRouter(service, store),
      ],
      accountExport,
    };
  },
});
