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
 * The deliveries a worker of this process takes as they are stored (worker.ts): `lease` before the statement
 * (undefined when it has no room), then `handOff` once for that lease, with what was stored under it.
 */
export interface DeliveryHandOff {
  lease(): { claim: string; until: Date } | undefined;
  handOff(deliveries: readonly number[]): void;
}

/**
 * The `webhooks` port while `webhooks_enabled` (SPEC-3 §3 "an outbox"): the event is written with the
 * caller's transaction, so it commits or rolls back with the change it reports; the workers deliver it later.
 * On PostgreSQL a change written with its event in one statement (`recordWith`) stores its deliveries leased to
 * `handOff`'s worker, which attempts them at once without claiming them (docs/performance.md "Webhooks").
 */
export function createWebhookOutbox(
  store: WebhookStore,
  now: () => Date,
  dialect: Database['dialect'],
  handOff?: DeliveryHandOff,
): WebhookOutbox {
  return {
    enabled: true,
    ...(dialect === 'pg'
      ? {
          async recordWith<K extends WebhookEventType>(
            change: SQL,
            values: Record<string, unknown>,
            type: K,
            data: WebhookEvents[K],
          ) {
            const lease = handOff?.lease();
            let deliveries: readonly number[] = [];
            try {
              const stored = await store.recordWith(change, values, type, data, now(), lease);
              deliveries = stored.deliveries;
              return stored.rows;
            } finally {
              // Also when the statement failed (nothing stored): the lease's room is given back.
              if (lease) handOff!.handOff(deliveries);
            }
          },
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
