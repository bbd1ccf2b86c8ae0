import type { Settings } from '../kernel/config/schema.js';
import type { Database } from '../kernel/db/database.js';
import { coreTables } from '../kernel/db/tables.js';
import { DISABLED_WEBHOOK_OUTBOX, type EventSink, type WebhookOutbox } from '../kernel/ports.js';
import { createOrganizationService, type OrganizationRoles } from './service.js';
import { createOrganizationStore } from './store.js';
import { organizationTables } from './tables.js';

/**
 * Organizations for the command line (`svc orgs`): the same store and rules as the routes, acting as a
 * superuser would. No mails leave a CLI process, and live events only through `events` when given (the shared
 * cache's bus); the webhook events of SPEC-3 §3 do, through `webhooks` (the standalone outbox, stored in each
 * change's transaction).
 */
export function createOrganizationManager(options: {
  db: Database;
  settings: Settings;
  roles?: OrganizationRoles;
  /** @default the disabled outbox: no webhook events */
  webhooks?: WebhookOutbox;
  /**
   * Live events (`svc users delete`: the standalone sink on the shared cache's bus, events/standalone.ts).
   * @default none: a command without a bus has no channel to the hosts' sockets
   */
  events?: EventSink;
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
    events: () => options.events ?? { emit() {}, emitCustom() {}, userChanged() {} },
    mail: () => undefined,
    webhooks: () => options.webhooks ?? DISABLED_WEBHOOK_OUTBOX,
    userLocale: async () => settings.default_locale,
    now: () => new Date(),
  });
  return { store, service };
}

export type OrganizationManager = ReturnType<typeof createOrganizationManager>;
