import { z } from 'zod';
import { UserIdParam } from '../kernel/identity.js';
import {
  CODENAME_MAX_LENGTH,
  EXPIRES_IN_DAYS_DEFAULT,
  EXPIRES_IN_DAYS_MAX,
  EXPIRES_IN_DAYS_MIN,
  TOKEN_NAME_MAX_LENGTH,
  TOKEN_PERMISSIONS_MAX,
} from './constants.js';

// SPEC-2 "Personal access tokens": camelCase fields, the limits and defaults of the route table.

/** `POST /auth/tokens`. */
export const TokenCreateBody = z.object({
  name: z.string().trim().min(1).max(TOKEN_NAME_MAX_LENGTH),
  permissions: z
    .array(z.string().min(1).max(CODENAME_MAX_LENGTH))
    .max(TOKEN_PERMISSIONS_MAX)
    .default([])
    .describe('Codenames the caller holds; the token acts with these only (may be empty)'),
  staff: z.boolean().default(false).describe('Only a staff caller may set it'),
  superuser: z.boolean().default(false).describe('Only a superuser caller may set it'),
  expiresInDays: z
    .number()
    .int()
    .min(EXPIRES_IN_DAYS_MIN)
    .max(EXPIRES_IN_DAYS_MAX)
    .nullable()
    .default(EXPIRES_IN_DAYS_DEFAULT)
    .describe('Lifetime in days; null for a token that does not expire'),
});

/** A token in lists (`GET /auth/tokens`, `GET /admin/user/{user_id}/tokens`): never the secret. */
export const TokenOut = z.object({
  id: z.string(),
  name: z.string(),
  prefix: z.string().describe('The first 12 characters of the token, to recognise it'),
  permissions: z.array(z.string()),
  staff: z.boolean(),
  superuser: z.boolean(),
  expiresAt: z.string().nullable().describe('ISO 8601; null: does not expire'),
  createdAt: z.string().describe('ISO 8601'),
  lastUsedAt: z.string().nullable().describe('ISO 8601; written at most once a minute'),
});

/** `POST /auth/tokens` answer: with `token`, shown this once. */
export const TokenCreatedOut = TokenOut.omit({ lastUsedAt: true }).extend({
  token: z
    .string()
    .describe('`svc_pat_` + 43 base64url characters; shown this once, only its digest is kept'),
});

export const TokenListOut = z.array(TokenOut);

export const TokenIdParams = z.object({ token_id: z.string().max(64) });
export const UserIdParams = z.object({ user_id: UserIdParam });
export const UserTokenParams = z.object({ user_id: UserIdParam, token_id: z.string().max(64) });
