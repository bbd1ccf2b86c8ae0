import { defineModule } from '../kernel/module.js';
import { createBrowserSessions, createCookieSessionRouter } from './cookie-sessions.js';
import { createImpersonation, createImpersonationRouter } from './impersonation.js';
import { createDummyHash, isUsableHash } from './passwords.js';
import { createAuthRouter } from './routes.js';
import { createSessionAdminRouter, createSessionRouter } from './session-routes.js';
import { createSessionStore } from './session-store.js';
import { createSessionService } from './sessions.js';
import { authTables } from './tables.js';
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
  tables: authTables,
  // `permissions`: only the fallback below, when no other module provides it.
  provides: ['authenticator', 'tokens', 'loginGuard', 'rateLimiter', 'permissions', 'browserSessions'],
  uses: ['secondFactor', 'permissions', 'accounts', 'personalTokenRevoker', 'organizations', 'activity'],
  async setup({ settings, authDb, cache, log, ports, coreTables, tables }) {
    const now = () => new Date();
    const store = createAuthStore(authDb, coreTables, tables.session);
    // SPEC-2 "Sessions": one per login, ended by the routes below, logout, a password change or deactivation.
    const sessionStore = createSessionStore(authDb, coreTables, tables.session);
    const sessions = createSessionService({
      settings,
      sessions: sessionStore,
      userExists: async (userId) => (await store.userById(userId)) !== undefined,
      usernameOf: async (userId) => (await store.userById(userId))?.username ?? null,
      ports,
      now,
    });
    // Both built once: the signing KeyObject and the dummy hash of uniform login timing.
    const signer = createTokenSigner({ settings, now });
    const service = await createAuthService({
      settings,
      store,
      sessions,
      signer,
      cache,
      log,
      ports,
      now,
      dummyHash: await createDummyHash(),
    });
    // SPEC-3 §4: impersonation sessions; their end when the superuser loses the power goes through `tokens`.
    const impersonation = createImpersonation({
      settings,
      store,
      sessions: sessionStore,
      signer,
      ports,
      now,
    });
    ports.provide('authenticator', service.authenticator);
    ports.provide('tokens', { ...service.tokens, endImpersonationsBy: impersonation.endBy });
    ports.provide('loginGuard', service.loginGuard);
    ports.provide('rateLimiter', { hit: service.rateLimit });
    // SPEC-3 §5: the cookie answer of every token-issuing route, and the cookie routes while enabled.
    const browserSessions = createBrowserSessions({ settings, service });
    ports.provide('browserSessions', browserSessions.port);
    return {
      routers: [
        createAuthRouter(service, impersonation),
        createSessionRouter(sessions),
        createSessionAdminRouter(sessions),
        ...(settings.cookie_sessions_enabled
          ? [createCookieSessionRouter(settings, service, browserSessions, impersonation)]
          : []),
        ...(settings.impersonation_enabled ? [createImpersonationRouter(impersonation)] : []),
      ],
      // SPEC-2 "Administration and self-service": the export's `user`, as `GET /auth/user` shows it.
      accountExport: {
        async user(userId) {
          const row = await service.profile(userId);
          return {
            ...toUserOut(row),
            permissions: row.permissions,
            hasPassword: isUsableHash(row.passwordHash),
          };
        },
        // SPEC-2 "Administration and self-service": the export's `sessions`, as `GET /auth/sessions` lists them.
        sessions: (userId) => sessions.list(userId),
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
