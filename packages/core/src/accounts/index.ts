import { defineModule } from '../kernel/module.js';
import { createAccountsRouter } from './routes.js';
import { createAccountService } from './service.js';
import { createAccountStore } from './store.js';
import { accountTables } from './tables.js';

/**
 * Account lifecycle (SPEC-2 "One-time account tokens", "Routes"): password reset by mail. Router name
 * `accounts`; uses `loginGuard` to set the password and `mail` to send the link.
 */
export const accountsModule = defineModule({
  name: 'accounts',
  tables: accountTables,
  requires: ['loginGuard', 'mail'],
  uses: ['rateLimiter', 'userSettings'],
  setup({ settings, authDb, cache, log, ports, tables, coreTables }) {
    const store = createAccountStore(authDb, tables, coreTables);
    const service = createAccountService({ settings, store, cache, log, ports, now: () => new Date() });
    return { routers: [createAccountsRouter(service)] };
  },
});
