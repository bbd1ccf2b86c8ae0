import { randomUUID } from 'node:crypto';
import type { Settings } from '../kernel/config/schema.js';
import { SvcError } from '../kernel/errors/svc-error.js';
import { isCanonicalUuid } from '../kernel/identity.js';
import { pageOf, type Page } from '../kernel/pagination.js';
import { ALL_EVENTS, ROTATION_OVERLAP_MS, WEBHOOK_EVENT_TYPES } from './constants.js';
import type {
  DeliveryListQuery,
  DeliveryOut,
  WebhookCreateBody,
  WebhookOut,
  WebhookPatchBody,
} from './schemas.js';
import { newSecret } from './signing.js';
import type { DeliveryWithType, EndpointRow, WebhookStore } from './store.js';
import { assertPublicTarget, parseWebhookUrl } from './target.js';

export interface WebhookServiceDeps {
  settings: Settings;
  store: WebhookStore;
  now: () => Date;
}

const iso = (date: Date | null) => (date ? date.toISOString() : null);

export function toWebhookOut(row: EndpointRow): WebhookOut {
  return {
    id: row.id,
    url: row.url,
    events: JSON.parse(row.events) as string[],
    description: row.description,
    enabled: row.enabled,
    createdAt: row.createdAt.toISOString(),
  };
}

export function toDeliveryOut(row: DeliveryWithType): DeliveryOut {
  return {
    id: String(row.id),
    eventId: row.eventId,
    type: row.type,
    status: row.status as DeliveryOut['status'],
    attempts: row.attempts,
    lastStatusCode: row.lastStatusCode,
    lastError: row.lastError,
    nextAttemptAt: row.status === 'pending' ? iso(row.nextAttemptAt) : null,
    createdAt: row.createdAt.toISOString(),
    deliveredAt: iso(row.deliveredAt),
  };
}

const KNOWN = new Set<string>([...WEBHOOK_EVENT_TYPES, ALL_EVENTS]);

/** 422 `webhook.event_unknown` (at the entry) for a type the SPEC does not list; duplicates dropped. */
function checkEvents(events: string[]): string[] {
  events.forEach((event, index) => {
    if (!KNOWN.has(event)) {
      throw new SvcError('webhook.event_unknown', { loc: ['body', 'events', index], params: { event } });
    }
  });
  return [...new Set(events)];
}

/** The admin side of SPEC-3 §3: endpoints, secrets, the test event, deliveries and redelivery. */
export function createWebhookService(deps: WebhookServiceDeps) {
  const { store, settings } = deps;
  const allowPrivate = () => settings.webhooks_allow_private_targets;

  /** SPEC-3 §3 "Errors": the URL's form first (`url_invalid`), then every address it resolves to. */
  async function checkUrl(raw: string): Promise<string> {
    const url = parseWebhookUrl(raw, allowPrivate());
    await assertPublicTarget(url, allowPrivate());
    return url.href;
  }

  async function load(id: string): Promise<EndpointRow> {
    const row = isCanonicalUuid(id) ? await store.findEndpoint(id) : undefined;
    if (!row) throw new SvcError('webhook.not_found');
    return row;
  }

  return {
    async create(body: WebhookCreateBody): Promise<WebhookOut & { secret: string }> {
      const url = await checkUrl(body.url);
      const events = checkEvents(body.events);
      const secret = newSecret();
      const row = await store.createEndpoint({
        id: randomUUID(),
        url,
        events: JSON.stringify(events),
        description: body.description ?? '',
        enabled: body.enabled,
        secret,
        createdAt: deps.now(),
      });
      return { ...toWebhookOut(row), secret };
    },

    async list(): Promise<WebhookOut[]> {
      return (await store.listEndpoints()).map(toWebhookOut);
    },

    async get(id: string): Promise<WebhookOut> {
      return toWebhookOut(await load(id));
    },

    async update(id: string, body: WebhookPatchBody): Promise<WebhookOut> {
      const current = await load(id);
      const changes: Parameters<WebhookStore['updateEndpoint']>[1] = {};
      if (body.url !== undefined && body.url !== current.url) changes.url = await checkUrl(body.url);
      if (body.events !== undefined) changes.events = JSON.stringify(checkEvents(body.events));
      if (body.description !== undefined) changes.description = body.description;
      if (body.enabled !== undefined) changes.enabled = body.enabled;
      if (Object.keys(changes).length === 0) return toWebhookOut(current);
      const row = await store.updateEndpoint(current.id, changes);
      if (!row) throw new SvcError('webhook.not_found');
      return toWebhookOut(row);
    },

    async remove(id: string): Promise<void> {
      if (!isCanonicalUuid(id) || !(await store.deleteEndpoint(id))) throw new SvcError('webhook.not_found');
    },

    /** SPEC-3 §3: a new secret; the previous one also signs for 24 hours (listed second). */
    async rotateSecret(id: string): Promise<{ secret: string }> {
      const current = await load(id);
      const secret = newSecret();
      const expires = new Date(deps.now().getTime() + ROTATION_OVERLAP_MS);
      if (!(await store.rotateSecret(current.id, secret, expires))) throw new SvcError('webhook.not_found');
      return { secret };
    },

    /** SPEC-3 §3: queues `webhook.test` for this endpoint, whatever its `events`. */
    async test(id: string): Promise<void> {
      const current = await load(id);
      await store.recordFor(current.id, 'webhook.test', { webhookId: current.id }, deps.now());
    },

    async deliveries(id: string, query: DeliveryListQuery): Promise<Page<DeliveryOut>> {
      const current = await load(id);
      const { rows, total } = await store.listDeliveries(
        current.id,
        query.status,
        query.pageSize,
        (query.page - 1) * query.pageSize,
      );
      return pageOf(rows.map(toDeliveryOut), total, query);
    },

    /** SPEC-3 §3: a new attempt of the same event (the same `webhook-id`). */
    async redeliver(id: string, deliveryId: string): Promise<void> {
      const current = await load(id);
      const numeric = /^\d{1,15}$/.test(deliveryId) ? Number(deliveryId) : null;
      const delivery = numeric === null ? undefined : await store.findDelivery(current.id, numeric);
      if (!delivery) throw new SvcError('webhook.delivery_not_found');
      await store.redeliver(delivery, deps.now());
    },
  };
}

export type WebhookService = ReturnType<typeof createWebhookService>;
