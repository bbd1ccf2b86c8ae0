import type { Orm } from '../kernel/db/database.js';
import type { WebhookEvents, WebhookEventType, WebhookOutbox } from '../kernel/ports.js';
import type { WebhookStore } from './store.js';

/**
 * The `webhooks` port while `webhooks_enabled` (SPEC-3 §3 "an outbox"): the event is written with the
 * caller's transaction, so it commits or rolls back with the change it reports; the workers deliver it later.
 */
export function createWebhookOutbox(store: WebhookStore, now: () => Date): WebhookOutbox {
  return {
    enabled: true,
    async record<K extends WebhookEventType>(tx: Orm, type: K, data: WebhookEvents[K]): Promise<void> {
      await store.record(tx, type, data, now());
    },
  };
}
