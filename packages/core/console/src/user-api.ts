// What one user's page reads from the public API (SPEC-2 "Sessions", "Personal access tokens", SPEC-3 §1, §4)
// and how it tells a route the server has not mounted from a refusal.
import { SvcApiError, type SvcClient } from '@svc/client';
import { call } from './api.js';

export interface Session {
  id: string;
  createdAt: string;
  lastUsedAt: string;
  userAgent: string;
  ip: string;
  current: boolean;
  impersonatedBy?: { id: string; username: string };
}

export interface PersonalToken {
  id: string;
  name: string;
  prefix: string;
  permissions: string[];
  staff: boolean;
  superuser: boolean;
  expiresAt: string | null;
  createdAt: string;
  lastUsedAt: string | null;
}

export interface Identity {
  id: string;
  provider: string;
  email: string | null;
  createdAt: string;
  lastUsedAt: string | null;
}

/** `GET /admin/user/{id}/passkeys`: the items of the owner's `GET /auth/passkeys` (docs/passkeys.md). */
export interface Passkey {
  id: string;
  name: string;
  createdAt: string;
  lastUsedAt: string | null;
}

/** `GET /admin/user/{id}/organizations` (docs/organizations.md). */
export interface UserMembership {
  organization: { id: string; slug: string; name: string };
  role: string;
  joinedAt: string;
}

/** `POST /admin/user/{id}/impersonate` (SPEC-3 §4; not enveloped). */
export interface ImpersonationToken {
  access_token: string;
  token_type: 'bearer';
  expires_in: number;
}

/**
 * Whether an answer says the route itself is not mounted (a feature switched off, or its router disabled): the
 * uniform 404 `request.not_found`, as opposed to a mounted route's own 404 such as `user.not_found`.
 */
export function routeAbsent(error: unknown): boolean {
  return error instanceof SvcApiError && error.status === 404 && error.code === 'request.not_found';
}

/** `call`, answering null instead of failing when the route is not mounted: that section is then hidden. */
export async function optional<T>(
  client: SvcClient,
  path: string,
  query?: Record<string, string | number>,
): Promise<T | null> {
  try {
    return await call<T>(client, 'GET', path, { query });
  } catch (error) {
    if (routeAbsent(error)) return null;
    throw error;
  }
}
