// The console's calls to the public API (SPEC-3 §6: every action goes through it, so the activity log records
// it with the acting superuser). In cookie mode `client.fetch` sends the session cookie and the CSRF header.
import { SvcApiError, type SvcClient, type SvcErrorItem } from '@svc/client';

/** Paths below the API's base (`/api`), as the console and @svc/client assume it. */
export const API = '/api';

export type Query = Record<string, string | number | boolean | undefined | null>;

/** `?a=1&b=x` of the non-empty entries of `query`, or ''. */
export function queryString(query: Query = {}): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query))
    if (value !== undefined && value !== null && value !== '') params.set(key, String(value));
  const text = params.toString();
  return text ? `?${text}` : '';
}

/**
 * Calls the API and returns the enveloped `data` (or the bare body), undefined for 204; an error answer
 * rejects with the server's {@link SvcApiError}, whose message the page shows as is.
 */
export async function call<T>(
  client: SvcClient,
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE',
  path: string,
  options: { query?: Query; body?: unknown } = {},
): Promise<T> {
  const response = await client.fetch(`${API}${path}${queryString(options.query)}`, {
    method,
    headers: options.body === undefined ? {} : { 'Content-Type': 'application/json' },
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
  });
  if (response.status === 204) return undefined as T;
  const body = (await response.json().catch(() => null)) as {
    data?: unknown;
    success?: boolean;
    detail?: SvcErrorItem[];
  } | null;
  if (!response.ok) {
    const retryAfter = Number(response.headers.get('retry-after')) || undefined;
    throw new SvcApiError(response.status, Array.isArray(body?.detail) ? body.detail : [], retryAfter);
  }
  if (body && typeof body === 'object' && 'success' in body && 'data' in body) return body.data as T;
  return body as T;
}

/** A page of `GET /admin/user` and `GET /admin/audit/logs` (SPEC "Pagination"). */
export interface Paged<T> {
  items: T[];
  total: number;
  page: number;
  pageSize: number;
  pages: number;
}

export interface AdminUser {
  id: string;
  username: string;
  email: string | null;
  firstName: string;
  lastName: string;
  isActive: boolean;
  isStaff: boolean;
  isSuperuser: boolean;
  createdAt: string;
  lastLoginAt: string | null;
}

export interface Permission {
  id: number;
  codename: string;
  description: string;
}

export interface Group {
  id: number;
  name: string;
  description: string;
  permissionIds: number[];
  permissions: Permission[];
}

export interface ActivityEntry {
  id: number;
  timestamp: string;
  userId: string | null;
  username: string | null;
  method: string;
  path: string;
  statusCode: number;
  durationMs: number;
}

/** The message to show for a refusal: the server's own (in the browser's language), else the error's. */
export function messageOf(error: unknown): string {
  if (error instanceof SvcApiError) return error.detail.map((item) => item.msg).join(' ') || error.message;
  return error instanceof Error ? error.message : String(error);
}
