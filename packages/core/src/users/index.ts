import { defineModule } from '../kernel/module.js';
import { createUsersRouter } from './routes.js';
import { createUserService } from './service.js';
import { createUserStore } from './store.js';

/** User administration for superusers (SPEC "User administration"); router name `users`. */
export const usersModule = defineModule({
  name: 'users',
  requires: ['loginGuard', 'tokens'],
  setup({ settings, authDb, coreTables, ports }) {
    const { user } = coreTables;
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
});
