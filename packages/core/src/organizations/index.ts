import { isMissingTableError } from '../kernel/errors/format.js';
import { resolveLocale } from '../kernel/i18n/index.js';
import { defineModule, moduleOptions } from '../kernel/module.js';
import { createJoinPage } from './pages.js';
import {
  createOrganizationAdminRouter,
  createOrganizationRouter,
  createUserOrganizationsAdminRouter,
} from './routes.js';
import { createOrganizationService, type OrganizationRoles } from './service.js';
import { createOrganizationStore } from './store.js';
import { organizationTables } from './tables.js';

/** The `createApp` options of the organizations module (SPEC-3 §2). */
export interface OrganizationsOptions {
  /**
   * The project's organization roles and the permission codenames each grants, e.g.
   * `{ billing: ['invoices.read'], member: ['projects.read'] }`. A role holds exactly what is listed for it;
   * `owner` holds every listed codename. @default {}
   */
  organizationRoles?: OrganizationRoles;
}

/**
 * Organizations (SPEC-3 §2; docs/organizations.md): with `organizations_enabled`, the `/organizations` and
 * `/admin/organizations` routes, the join page, and the `organizations` port through which the kernel guard
 * reads a caller's membership in its one query and account deletion checks the last-owner rule. The tables
 * exist either way (one schema for migrations).
 */
export const organizationsModule = defineModule({
  name: 'organizations',
  tables: organizationTables,
  options: moduleOptions<OrganizationsOptions>('organizationRoles'),
  provides: ['organizations'],
  uses: ['mail', 'userSettings', 'loginGuard', 'webhooks'],
  setup({ settings, authDb, log, ports, tables, coreTables, options }) {
    const store = createOrganizationStore(authDb, tables, coreTables);
    const service = createOrganizationService({
      settings,
      store,
      roles: options.organizationRoles ?? {},
      events: () => ports.get('events'),
      mail: () => ports.find('mail'),
      // SPEC-3 §3: organization events go into the outbox in the transaction of their change.
      webhooks: () => ports.get('webhooks'),
      async userLocale(userId) {
        const chosen = await ports
          .find('userSettings')
          ?.get(userId, 'preferences.locale')
          .catch(() => null);
        return resolveLocale(typeof chosen === 'string' && chosen ? chosen : settings.default_locale);
      },
      now: () => new Date(),
    });
    // SPEC-3 §2: the export lists the memberships, also while the feature is switched off.
    const accountExport = { organizations: (userId: string) => service.exportOf(userId) };
    // Memberships outlive a switch-off; deleting their last owner would still strand the other members.
    const assertUserRemovable = (userId: string, loc: (string | number)[]) =>
      service.assertUserRemovable(userId, loc);
    ports.provide('organizations', {
      membershipColumn: store.membershipColumn(coreTables.user.id),
      parseMembership: (value) => service.parseMembership(value),
      membership: (userId, organizationId) => store.membership(userId, organizationId),
      permissionsOf: (role) => service.permissionsOf(role),
      assertUserRemovable,
      endInvitationsOf: (userId) => service.endInvitationsOf(userId),
      beforeUserDeleted: (tx, userId) => service.beforeUserDeleted(tx, userId),
    });
    // The member counts' triggers (store.ts): whenever the tables exist, enabled or not, so counts stay right
    // through memberships changed while the routes are off. A schema without the tables (not migrated yet)
    // only warns: the routes would fail on it anyway.
    const onStartup = async () => {
      try {
        await store.ensureMemberCount();
      } catch (error) {
        if (!isMissingTableError(error)) throw error;
        log.warn('organization tables missing: run svc migrations upgrade', {});
      }
    };
    if (!settings.organizations_enabled) return { accountExport, onStartup };
    const pages = settings.account_pages_enabled
      ? [createJoinPage({ settings, service, store, loginGuard: () => ports.find('loginGuard')! })]
      : [];
    return {
      routers: [
        createOrganizationRouter(service),
        createOrganizationAdminRouter(service),
        createUserOrganizationsAdminRouter(service),
      ],
      pages,
      accountExport,
      onStartup,
    };
  },
});

export { createOrganizationService, type OrganizationRoles } from './service.js';
