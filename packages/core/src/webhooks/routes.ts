import { defineRouter, type Router } from '../kernel/router.js';
import {
  DeliveryListQuery,
  DeliveryPage,
  DeliveryParams,
  SecretOut,
  WebhookCreateBody,
  WebhookCreatedOut,
  WebhookIdParams,
  WebhookListOut,
  WebhookOut,
  WebhookPatchBody,
} from './schemas.js';
import type { WebhookService } from './service.js';

/**
 * `/admin/webhooks` (SPEC-3 §3; router name `webhooks`). Superusers only; SPEC-3 §7 rule 3: a personal access
 * token is refused on every webhook route, reading or writing (403 `access.token_not_allowed`).
 */
export function createWebhookRouter(service: WebhookService): Router {
  const hooks = defineRouter({
    prefix: '/admin/webhooks',
    name: 'webhooks',
    tags: ['webhooks'],
    requireSuperuser: true,
    allowPersonalToken: false,
  });
  hooks.post(
    '/',
    {
      summary: 'Create a webhook endpoint',
      description:
        'The secret (`whsec_…`) is in this answer only. 422 `webhook.url_invalid` (not an absolute https:// URL), ' +
        '`webhook.url_forbidden` (a private, loopback, link-local or unique-local target), ' +
        '`webhook.event_unknown` (`params.event`).',
      body: WebhookCreateBody,
      response: WebhookCreatedOut,
      status: 201,
      logAs: 'created a webhook endpoint',
    },
    (ctx) => service.create(ctx.body),
  );
  hooks.get('/', { summary: 'Every webhook endpoint (without secrets)', response: WebhookListOut }, () =>
    service.list(),
  );
  hooks.get(
    '/:webhook_id',
    {
      summary: 'A webhook endpoint',
      description: '404 `webhook.not_found`.',
      params: WebhookIdParams,
      response: WebhookOut,
    },
    (ctx) => service.get(ctx.params.webhook_id),
  );
  hooks.patch(
    '/:webhook_id',
    {
      summary: 'Change a webhook endpoint',
      description:
        'Disabling ends its pending deliveries as failed (enabling again does not resume them). The errors of ' +
        'creation, and 404 `webhook.not_found`.',
      params: WebhookIdParams,
      body: WebhookPatchBody,
      response: WebhookOut,
      logAs: 'changed webhook endpoint {webhook_id}',
    },
    (ctx) => service.update(ctx.params.webhook_id, ctx.body),
  );
  hooks.delete(
    '/:webhook_id',
    {
      summary: 'Delete a webhook endpoint',
      description: 'Its pending deliveries end with it. 404 `webhook.not_found`.',
      params: WebhookIdParams,
      status: 204,
      logAs: 'deleted webhook endpoint {webhook_id}',
    },
    (ctx) => service.remove(ctx.params.webhook_id),
  );
  hooks.post(
    '/:webhook_id/rotate-secret',
    {
      summary: 'Rotate the signing secret',
      description: 'The previous secret also signs for 24 hours (its signature listed second).',
      params: WebhookIdParams,
      response: SecretOut,
      logAs: 'rotated the secret of webhook endpoint {webhook_id}',
    },
    (ctx) => service.rotateSecret(ctx.params.webhook_id),
  );
  hooks.post(
    '/:webhook_id/test',
    {
      summary: 'Send a test event',
      description: 'Queues a `webhook.test` event for this endpoint, whatever its `events`.',
      params: WebhookIdParams,
      status: 202,
      logAs: 'sent a test event to webhook endpoint {webhook_id}',
    },
    (ctx) => service.test(ctx.params.webhook_id),
  );
  hooks.get(
    '/:webhook_id/deliveries',
    {
      summary: "A webhook endpoint's deliveries",
      description: 'Newest first; `status` filters. 404 `webhook.not_found`.',
      params: WebhookIdParams,
      query: DeliveryListQuery,
      response: DeliveryPage,
    },
    (ctx) => service.deliveries(ctx.params.webhook_id, ctx.query),
  );
  hooks.post(
    '/:webhook_id/deliveries/:delivery_id/redeliver',
    {
      summary: 'Deliver an event again',
      description:
        'A new attempt of the same event (the same `webhook-id`). 404 `webhook.delivery_not_found`.',
      params: DeliveryParams,
      status: 202,
      logAs: 'redelivered delivery {delivery_id} of webhook endpoint {webhook_id}',
    },
    (ctx) => service.redeliver(ctx.params.webhook_id, ctx.params.delivery_id),
  );
  return hooks;
}
