import { defineModule } from '../kernel/module.js';
import { createDummyHash } from './passwords.js';
import { createAuthRouter } from './routes.js';
import { toUserOut } from './schemas.js';
import { createAuthService } from './service.js';
import { createAuthStore } from './store.js';
import { createTokenSigner } from './tokens.js';

/**
 * The auth feature: login, tokens, refresh rotation, lockout, registration, own profile and password
 * (SPEC "Authentication routes"). Provides the `authenticator`, `tokens`, `loginGuard` and `rateLimiter`
 * ports, and a `permissions` fallback when no other module provides one.
 */
export const authModule = defineModule({
  name: 'auth',
  // `permissions`: only the fallback below, when no other module provides it.
  provides: ['authenticator', 'tokens', 'loginGuard', 'rateLimiter', 'permissions'],
  uses: ['secondFactor', 'permissions', 'accounts'],
  async setup({ settings, authDb, cache, log, ports, coreTables }) {
    const now = () => new Date();
    const store = createAuthStore(authDb, coreTables);
    // Both built once: the signing KeyObject and the dummy hash of uniform login timing.
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
      // SPEC-2 "Administration and self-service": the export's `user`, as `GET /auth/user` shows it.
      accountExport: {
        async user(userId) {
          const row = await service.profile(userId);
          return { ...toUserOut(row), permissions: row.permissions };
        },
      },
      onStartup() {
        // Every module is set up by now: the rbac module's resolver wins; this same-query fallback serves
        // when it is absent.
        if (!ports.find('permissions')) {
          ports.provide('permissions', { effectivePermissions: (userId) => store.permissionsOf(userId) });
        }
      },
    };
  },
});
