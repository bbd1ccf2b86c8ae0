import { z } from 'zod';
import { UserIdParam } from '../kernel/identity.js';
import { PROVIDER_NAME_MAX_LENGTH } from './constants.js';

export const ProviderParams = z.object({ provider: z.string().max(PROVIDER_NAME_MAX_LENGTH) });

export const AuthorizeQuery = z.object({
  redirect_to: z.string().max(2048).optional().describe('A relative path, or a URL on an allowed origin'),
});

export const LinkBody = z.object({ redirectTo: z.string().max(2048).optional() });

export const LinkOut = z.object({ authorizationUrl: z.string() });

export const ProviderOut = z.object({ name: z.string(), label: z.string() });
export const ProviderListOut = z.array(ProviderOut);

export const ExchangeBody = z.object({ code: z.string().max(256) });

export const ExchangeOut = z.union([
  z.object({ access_token: z.string(), token_type: z.literal('bearer'), refresh_token: z.string() }),
  z.object({ mfa_required: z.literal(true), mfa_token: z.string() }),
]);

export const IdentityOut = z.object({
  id: z.string(),
  provider: z.string(),
  email: z.string().nullable(),
  createdAt: z.string().describe('ISO 8601'),
  lastUsedAt: z.string().nullable().describe('ISO 8601'),
});
export const IdentityListOut = z.array(IdentityOut);

export const IdentityParams = z.object({ identity_id: z.string().max(64) });
export const AdminIdentityParams = z.object({ user_id: UserIdParam, identity_id: z.string().max(64) });
export const AdminUserParams = z.object({ user_id: UserIdParam });
