import type { CoreTables } from '../kernel/db/tables.js';
import type { SvcModule } from '../kernel/module.js';
import { createMfaRouter } from './routes.js';
import { createLoggingSender, type MfaSender } from './sender.js';
import { createMfaService } from './service.js';
import { createMfaStore } from './store.js';
import { mfaTables, type MfaTables } from './tables.js';

/**
 * Multi-factor authentication: TOTP, email and SMS codes, backup codes, the login challenge
 * (SPEC "Multi-factor routes"). Provides the `secondFactor` port; uses `loginGuard` and `rateLimiter`.
 */
export const mfaModule = {
  name: 'mfa', // router name for disable_core_routers
  tables: mfaTables,
  setup({ settings, authDb, cache, log, ports, options, tables }) {
    const store = createMfaStore(
      authDb,
      tables.mfa as unknown as MfaTables,
      tables.core as unknown as CoreTables,
    );
    const sender = (options as { mfaSender?: MfaSender }).mfaSender ?? createLoggingSender(log);
    const service = createMfaService({ settings, cache, store, sender, log, ports });
    ports.provide('secondFactor', service); // auth asks for it during login
    return { routers: [createMfaRouter(service)] };
  },
} satisfies SvcModule;
