import type { ModuleContext, SvcModule } from '../kernel/module.js';
import type { CoreTables } from '../kernel/db/tables.js';
import type { Router } from '../kernel/router.js';
import { createRbacRouter } from './routes.js';
import { createRbacService } from './service.js';
import { createRbacStore } from './store.js';

/**
 * Role-based access control: permissions, groups, their links to users, the `permissions` port
 * (SPEC "Permission and group", "Permissions and groups").
 */
export const rbacModule = {
  name: 'permissions', // router name for disable_core_routers
  setup({ settings, authDb, log, ports, options, tables }: ModuleContext<{ routers?: Router[] }>) {
    const store = createRbacStore(authDb, tables.core as unknown as CoreTables);
    // The sink is looked up at emit time: the events module (set up later) replaces the kernel's no-op.
    const service = createRbacService({ store, events: () => ports.get('events'), log });
    // Provided unconditionally: rbac runs after auth, whose fallback this replaces.
    ports.provide('permissions', { effectivePermissions: (userId) => store.effectivePermissions(userId) });
    const router = createRbacRouter(service, { routers: () => options.routers ?? [], settings });
    return { routers: [router] };
  },
} satisfies SvcModule;
