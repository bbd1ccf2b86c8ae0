import { defineModule, moduleOptions } from '../kernel/module.js';
import { createWebhookOutbox } from './outbox.js';
import { createWebhookRouter } from './routes.js';
import { createWebhookService } from './service.js';
import { createWebhookStore } from './store.js';
import { webhookTables } from './tables.js';
import { createWebhookWorker } from './worker.js';

/** `createApp` options of the webhooks module. */
export interface WebhookOptions {
  /**
   * TLS options of every delivery attempt, e.g. `{ ca }` to trust a receiver's private certificate authority
   * (tests, internal receivers). @default none: the system's certificate authorities
   */
  webhookTls?: { ca?: string | Buffer };
}

/**
 * Webhooks (SPEC-3 §3; docs/webhooks.md): with `webhooks_enabled`, the `/admin/webhooks` routes, the outbox
 * behind the `webhooks` port (other modules record events in their own transactions) and a delivery worker in
 * this process. The tables exist either way (one schema for migrations).
 */
export const webhooksModule = defineModule({
  name: 'webhooks',
  tables: webhookTables,
  options: moduleOptions<WebhookOptions>('webhookTls'),
  provides: ['webhooks'],
  setup({ settings, authDb, log, ports, tables, options }) {
    if (!settings.webhooks_enabled) return {};
    const now = () => new Date();
    const store = createWebhookStore(authDb, tables);
    ports.provide('webhooks', createWebhookOutbox(store, now, authDb.dialect));
    const service = createWebhookService({ settings, store, now });
    const worker = createWebhookWorker({
      settings,
      store,
      log: log.child('webhooks'),
      now,
      ...(options.webhookTls ? { tls: options.webhookTls } : {}),
    });
    return {
      routers: [createWebhookRouter(service)],
      onStartup: () => worker.start(),
      onShutdown: () => worker.stop(),
    };
  },
});
