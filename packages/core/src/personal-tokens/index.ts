import { defineModule } from '../kernel/module.js';
import { createPersonalTokenAdminRouter, createPersonalTokenRouter } from './routes.js';
import { createPersonalTokenService } from './service.js';
import { createPersonalTokenStore } from './store.js';
import { personalTokenTables } from './tables.js';

/**
 * Personal access tokens (SPEC-2 "Personal access tokens"; docs/sessions-and-tokens.md): with
 * `personal_tokens_enabled`, the `/auth/tokens` routes, their administration, and the `personalTokens` port the
 * kernel guard resolves `svc_pat_` bearers through. The table exists either way (one schema for migrations).
 */
export const personalTokensModule = defineModule({
  name: 'personal-tokens',
  tables: personalTokenTables,
  provides: ['personalTokens', 'personalTokenRevoker'],
  uses: ['rateLimiter', 'permissions'],
  setup({ settings, authDb, log, ports, tables, coreTables }) {
    const store = createPersonalTokenStore(authDb, tables, coreTables);
    const service = createPersonalTokenService({
      settings,
      store,
      log,
      now: () => new Date(),
      rateLimiter: () => ports.find('rateLimiter'),
      permissions: () => ports.find('permissions'),
    });
    // SPEC-2 "Administration and self-service": the export lists the tokens without secrets, also while
    // the feature is switched off (the rows are still stored).
    const accountExport = { personalTokens: (userId: string) => service.list(userId) };
    // SPEC-3 §7 rule 2: a revocation that includes tokens deletes the stored rows, enabled or not.
    ports.provide('personalTokenRevoker', { deleteAll: (userId) => service.deleteAllOf(userId) });
    if (!settings.personal_tokens_enabled) return { accountExport };
    ports.provide('personalTokens', { authenticate: (token, ip) => service.authenticate(token, ip) });
    return {
      routers: [createPersonalTokenRouter(service), createPersonalTokenAdminRouter(service)],
      accountExport,
    };
  },
});
