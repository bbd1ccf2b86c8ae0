import { defineModule } from '../kernel/module.js';
import { createUsersRouter } from './routes.js';
import { createUserService } from './service.js';
import { createUserStore } from './store.js';

/** User administration for superusers (SPEC "User administration"); router name `users`. */
export const usersModule = defineModule({
  name: 'users',
  provides: ['accountRemoval'],
  requires: ['loginGuard', 'tokens'],
  uses: ['accounts', 'organizations'],
  setup({ settings, authDb, coreTables, ports, log }) {
    const { user } = coreTables;
    const store = createUserStore(authDb, user, log, {
      concurrently: !settings.auto_create_auth_schema,
    });
    const service = createUserService({
      settings,
      store,
      user,
      hashPassword: (password) => ports.get('loginGuard').hashPassword(password),
      tokens: () => ports.get('tokens'),
      events: () => ports.get('events'),
      webhooks: () => ports.get('webhooks'),
      accounts: () => ports.find('accounts'),
      organizations: () => ports.find('organizations'),
      now: () => new Date(),
    });
    ports.provide('accountRemoval', {
      deleteAccount: service.deleteAccount,
      assertRemovable: service.assertRemovable,
    });
    return {
      routers: [createUsersRouter(service)],
      // docs/performance.md "Large tables": the text index of `search`, and the read worker stopped at the end.
      onStartup: async () => void (await store.ensureTextIndex()),
      onShutdown: () => store.close(),
    };
  },
});
