import type { CoreTables } from '../kernel/db/tables.js';
import type { SvcModule } from '../kernel/module.js';
import { createDummyHash } from './passwords.js';
import { createAuthRouter } from './routes.js';
import { createAuthService } from './service.js';
import { createAuthStore } from './store.js';
import { createTokenSigner } from './tokens.js';

/**
 * The auth feature: login, tokens, refresh rotation, lockout, registration, own profile and password
 * (SPEC "Authentication routes"). Provides the `authenticator`, `tokens`, `loginGuard` and `rateLimiter`
 * ports, and a `permissions` fallback when no other module provides one.
 */
export const authModule = {
  name: 'auth',
  async setup({ settings, authDb, cache, log, ports, tables }) {
    const now = () => new Date();
    const store = createAuthStore(authDb, tables.core as unknown as CoreTables);
    // Both built ONCE: the signing KeyObject (issue 12) and the dummy hash of uniform login timing.
    const signer = createTokenSigner({ settings, now });
    const service = await createAuthService({
      settings,
      store,
      signer,
      cache,
      log,
      ports,
      now,
      dummyHash: await createDummyHash(),
    });
    ports.provide('authenticator', service.authenticator);
    ports.provide('tokens', service.tokens);
    ports.provide('loginGuard', service.loginGuard);
    ports.provide('rateLimiter', { hit: service.rateLimit });
    return {
      routers: [createAuthRouter(service)],
      onStartup() {
        // rbac sets up after auth and provides the real resolver; this same-query fallback serves when the
        // rbac module is absent.
        if (!ports.find('permissions')) {
          ports.provide('permissions', { effectivePermissions: (userId) => store.permissionsOf(userId) });
        }
      },
    };
  },
} satisfies SvcModule;
