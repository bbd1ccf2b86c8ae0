import { resolveLocale, translator } from '../kernel/i18n/index.js';
import { defineModule } from '../kernel/module.js';
import { createRbacRouter } from './routes.js';
import { createRbacService, groupOut, permissionOut } from './service.js';
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
    const service = createRbacService({
      store,
      events: () => ports.get('events'),
      webhooks: () => ports.get('webhooks'),
      log,
    });
    // Provided unconditionally: auth's fallback (in its onStartup, after every setup) then stays unused.
    ports.provide('permissions', { effectivePermissions: (userId) => store.effectivePermissions(userId) });
    const router = createRbacRouter(service, {
      routes: () => ports.find('routes')?.routes ?? [],
      settings,
    });
    // The export has no request: labels in default_locale, as the admin routes answer without Accept-Language.
    const t = translator(resolveLocale(settings.default_locale));
    return {
      routers: [router],
      // SPEC-2 "Administration and self-service": the export's `groups` and `permissions` ({direct, effective}).
      accountExport: {
        groups: async (userId) => (await store.groupsOfUser(userId)).map((g) => groupOut(g, t)),
        async permissions(userId) {
          const [direct, effective] = await Promise.all([
            store.directPermissionsOfUser(userId),
            store.effectivePermissions(userId),
          ]);
          return { direct: direct.map((p) => permissionOut(p, t)), effective };
        },
      },
    };
  },
});
