import type { SQL } from 'drizzle-orm';
import type { Settings } from '../kernel/config/schema.js';
import type { Database, Orm } from '../kernel/db/database.js';
import {
  DISABLED_WEBHOOK_OUTBOX,
  type WebhookEvents,
  type WebhookEventType,
  type WebhookOutbox,
} from '../kernel/ports.js';
import { createWebhookStore, type WebhookStore } from './store.js';
import type { WebhookTables } from './tables.js';

/**
 * The `webhooks` port while `webhooks_enabled` (SPEC-3 §3 "an outbox"): the event is written with the
 * caller's transaction, so it commits or rolls back with the change it reports; the workers deliver it later.
 */
export function createWebhookOutbox(
  store: WebhookStore,
  now: () => Date,
  dialect: Database['dialect'],
): WebhookOutbox {
  return {
    enabled: true,
    ...(dialect === 'pg'
      ? {
          recordWith: <K extends WebhookEventType>(
            change: SQL,
            values: Record<string, unknown>,
            type: K,
            data: WebhookEvents[K],
          ) => store.recordWith(change, values, type, data, now()),
        }
      : {}),
    async record<K extends WebhookEventType>(tx: Orm, type: K, data: WebhookEvents[K]): Promise<void> {
      await store.record(tx, type, data, now());
    },
    async recordEach<K extends WebhookEventType>(
      tx: Orm,
      type: K,
      data: readonly WebhookEvents[K][],
    ): Promise<void> {
      await store.recordEach(tx, type, data, now());
    },
  };
}

/**
 * The outbox for a process without the app (`svc users`, `svc webhooks`): the same writes on the auth
 * database, disabled (a no-op) while `webhooks_enabled` is false.
 */
export function createStandaloneWebhookOutbox(
  db: Database,
  settings: Settings,
  tables: WebhookTables,
): WebhookOutbox {
  if (!settings.webhooks_enabled) return DISABLED_WEBHOOK_OUTBOX;
  return createWebhookOutbox(createWebhookStore(db, tables), () => new Date(), db.dialect);
}
