import type { CoreTables } from '../kernel/db/tables.js';
import type { SvcModule } from '../kernel/module.js';
import { createUsersRouter } from './routes.js';
import { createUserService } from './service.js';
import { createUserStore } from './store.js';

/** User administration for superusers (SPEC "User administration"); router name `users`. */
export const usersModule = {
  name: 'users',
  setup({ settings, authDb, tables, ports }) {
    const { user } = tables.core as unknown as CoreTables;
    const service = createUserService({
      settings,
      store: createUserStore(authDb, user),
      user,
      hashPassword: (password) => ports.get('loginGuard').hashPassword(password),
      tokens: () => ports.get('tokens'),
      events: () => ports.get('events'),
      now: () => new Date(),
    });
    return { routers: [createUsersRouter(service)] };
  },
} satisfies SvcModule;
