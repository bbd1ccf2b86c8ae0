import { defineModule } from '../kernel/module.js';
import { createRbacRouter } from './routes.js';
import { createRbacService } from './service.js';
import { createRbacStore } from './store.js';

/**
 * Role-based access control: permissions, groups, their links to users, the `permissions` port
 * (SPEC "Permission and group", "Permissions and groups").
 */
export const rbacModule = defineModule({
  name: 'permissions', // router name for disable_core_routers
  provides: ['permissions'],
  // The applications listing reads the route table the kernel compiles once every module is set up.
  uses: ['routes'],
  setup({ settings, authDb, log, ports, coreTables }) {
    const store = createRbacStore(authDb, coreTables);
    // The sink is looked up at emit time: the events module (set up later) replaces the kernel's no-op.
    const service = createRbacService({ store, events: () => ports.get('events'), log });
    // Provided unconditionally: auth's fallback (in its onStartup, after every setup) then stays unused.
    ports.provide('permissions', { effectivePermissions: (userId) => store.effectivePermissions(userId) });
    const router = createRbacRouter(service, {
      routes: () => ports.find('routes')?.routes ?? [],
      settings,
    });
    return { routers: [router] };
  },
});
