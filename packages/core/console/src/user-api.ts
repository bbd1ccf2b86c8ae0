// What one user's page reads from the public API (SPEC-2 "Sessions", "Personal access tokens", SPEC-3 §1, §4)
// and how it learns which of those routes the server has mounted.
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

/** The nil UUID: no user has it, so a probe on it changes nothing. */
const NOBODY = '00000000-0000-0000-0000-000000000000';

export interface WriteFeatures {
  /** `DELETE /admin/user/{id}/mfa` is mounted (`mfa_enabled`). */
  mfa: boolean;
  /** `POST /admin/user/{id}/impersonate` is mounted (`impersonation_enabled`). */
  impersonation: boolean;
}

let writeFeatures: Promise<WriteFeatures> | undefined;

async function mounted(client: SvcClient, method: 'POST' | 'DELETE', path: string, body?: unknown) {
  try {
    await call(client, method, path, { body });
    return true;
  } catch (error) {
    return !routeAbsent(error);
  }
}

/**
 * The write-only routes of a user's page, asked once per page load. Each probe is refused before it can do
 * anything: the MFA reset names no existing user (404 `user.not_found` when mounted) and the impersonation
 * sends no reason (422 when mounted); an absent route answers 404 `request.not_found`.
 */
export function probeWriteFeatures(client: SvcClient): Promise<WriteFeatures> {
  writeFeatures ??= Promise.all([
    mounted(client, 'DELETE', `/admin/user/${NOBODY}/mfa`),
    mounted(client, 'POST', `/admin/user/${NOBODY}/impersonate`, {}),
  ]).then(([mfa, impersonation]) => ({ mfa, impersonation }));
  return writeFeatures;
}
