import type { Settings } from '../kernel/config/schema.js';
import type { Database } from '../kernel/db/database.js';
import { coreTables } from '../kernel/db/tables.js';
import { DISABLED_WEBHOOK_OUTBOX, type WebhookOutbox } from '../kernel/ports.js';
import { createOrganizationService, type OrganizationRoles } from './service.js';
import { createOrganizationStore } from './store.js';
import { organizationTables } from './tables.js';

/**
 * Organizations for the command line (`svc orgs`): the same store and rules as the routes, acting as a
 * superuser would. No events or mails leave a CLI process (no event bus, no app running); the webhook events
 * of SPEC-3 §3 do, through `webhooks` (the standalone outbox, stored in each change's transaction).
 */
export function createOrganizationManager(options: {
  db: Database;
  settings: Settings;
  roles?: OrganizationRoles;
  /** @default the disabled outbox: no webhook events */
  webhooks?: WebhookOutbox;
}) {
  const { db, settings } = options;
  const store = createOrganizationStore(
    db,
    organizationTables(settings, db.dialect),
    coreTables(settings, db.dialect),
  );
  const service = createOrganizationService({
    settings,
    store,
    roles: options.roles ?? {},
    events: () => ({ emit() {}, emitCustom() {}, userChanged() {} }),
    mail: () => undefined,
    webhooks: () => options.webhooks ?? DISABLED_WEBHOOK_OUTBOX,
    userLocale: async () => settings.default_locale,
    now: () => new Date(),
  });
  return { store, service };
}

export type OrganizationManager = ReturnType<typeof createOrganizationManager>;
