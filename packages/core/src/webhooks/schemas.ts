import { z } from 'zod';
import { PaginationQuery, pageSchema } from '../kernel/pagination.js';
import { DESCRIPTION_MAX_LENGTH, URL_MAX_LENGTH } from './constants.js';

// SPEC-3 §3: camelCase fields of the webhook routes. The URL and the event types are checked by the service,
// so that their own codes (`webhook.url_invalid`, `webhook.event_unknown`) answer, not a validation error.

const Events = z.array(z.string().max(64)).min(1).max(64).describe('Event types, or `["*"]` for every type');

/** `POST /admin/webhooks`. */
export const WebhookCreateBody = z.object({
  url: z.string().max(URL_MAX_LENGTH).describe('Absolute https:// URL'),
  events: Events,
  description: z.string().max(DESCRIPTION_MAX_LENGTH).optional(),
  enabled: z.boolean().default(true),
});
export type WebhookCreateBody = z.infer<typeof WebhookCreateBody>;

/** `PATCH /admin/webhooks/{webhook_id}`. */
export const WebhookPatchBody = z.object({
  url: z.string().max(URL_MAX_LENGTH).optional(),
  events: Events.optional(),
  description: z.string().max(DESCRIPTION_MAX_LENGTH).optional(),
  enabled: z.boolean().optional(),
});
export type WebhookPatchBody = z.infer<typeof WebhookPatchBody>;

/** An endpoint without its secret. */
export const WebhookOut = z.object({
  id: z.string(),
  url: z.string(),
  events: z.array(z.string()),
  description: z.string(),
  enabled: z.boolean(),
  createdAt: z.string().describe('ISO 8601'),
});
export type WebhookOut = z.infer<typeof WebhookOut>;

/** `POST /admin/webhooks` answer: with the secret, shown this once. */
export const WebhookCreatedOut = WebhookOut.extend({
  secret: z.string().describe('`whsec_` + base64 of 32 random bytes; shown this once'),
});

export const WebhookListOut = z.array(WebhookOut);
export const SecretOut = z.object({ secret: z.string() });

export const WebhookIdParams = z.object({ webhook_id: z.string().max(64) });
export const DeliveryParams = z.object({
  webhook_id: z.string().max(64),
  delivery_id: z.string().max(20),
});

export const DeliveryListQuery = PaginationQuery.pick({ page: true, pageSize: true }).extend({
  status: z.enum(['pending', 'succeeded', 'failed']).optional(),
});
export type DeliveryListQuery = z.infer<typeof DeliveryListQuery>;

export const DeliveryOut = z.object({
  id: z.string(),
  eventId: z.string().describe('The `webhook-id` of every attempt'),
  type: z.string(),
  status: z.enum(['pending', 'succeeded', 'failed']),
  attempts: z.number().int(),
  lastStatusCode: z.number().int().nullable(),
  lastError: z.string().nullable(),
  nextAttemptAt: z.string().nullable().describe('ISO 8601; null once finished'),
  createdAt: z.string(),
  deliveredAt: z.string().nullable(),
});
export type DeliveryOut = z.infer<typeof DeliveryOut>;
export const DeliveryPage = pageSchema(DeliveryOut);
