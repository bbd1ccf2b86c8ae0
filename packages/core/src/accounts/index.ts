import { issueTokensWith } from '../kernel/browser-session.js';
import { defineModule } from '../kernel/module.js';
import { createAccountPages } from './pages.js';
import { createAccountsRouter } from './routes.js';
import { createSelfService } from './self-service.js';
import { createAccountService } from './service.js';
import { createAccountStore } from './store.js';
import { accountTables } from './tables.js';

/**
 * Account lifecycle (SPEC-2 "One-time account tokens", "Routes"): password reset and email verification by
 * mail. Router name `accounts`; uses `loginGuard` to set the password and `mail` to send links; provides the
 * `accounts` port auth and users send a verification link through when an address is added or changed.
 */
export const accountsModule = defineModule({
  name: 'accounts',
  tables: accountTables,
  provides: ['accounts'],
  requires: ['loginGuard', 'mail'],
  uses: [
    'rateLimiter',
    'userSettings',
    'accountExport',
    'accountRemoval',
    'secondFactor',
    'personalTokenRevoker',
    'browserSessions',
  ],
  setup({ settings, authDb, cache, log, ports, tables, coreTables }) {
    const store = createAccountStore(authDb, tables, coreTables);
    const service = createAccountService({ settings, store, cache, log, ports, now: () => new Date() });
    ports.provide('accounts', { sendVerification: service.sendVerification, endLinks: service.endLinks });
    const self = createSelfService({ settings, ports });
    return {
      routers: createAccountsRouter(service, self, issueTokensWith(ports)),
      pages: createAccountPages(service, settings),
    };
  },
});
