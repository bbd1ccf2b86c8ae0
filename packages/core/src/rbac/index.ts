import { defineModule, moduleOptions } from '../kernel/module.js';
import type { Router } from '../kernel/router.js';
import { createRbacRouter } from './routes.js';
import { createRbacService } from './service.js';
import { createRbacStore } from './store.js';

/** What the rbac module reads of the `createApp` options. */
export interface RbacOptions {
  /** The project's routers (their permission codenames appear in the applications listing). @default [] */
  routers?: Router[];
}

/**
 * Role-based access control: permissions, groups, their links to users, the `permissions` port
 * (SPEC "Permission and group", "Permissions and groups").
 */
export const rbacModule = defineModule({
  name: 'permissions', // router name for disable_core_routers
  options: moduleOptions<RbacOptions>('routers'),
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
