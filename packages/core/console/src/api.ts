// The console's calls to the public API (SPEC-3 §6: every action goes through it, so the activity log records
// it with the acting superuser). In cookie mode `client.fetch` sends the session cookie and the CSRF header.
import { SvcApiError, type SvcClient, type SvcErrorItem } from '@svc/client';

/** Paths below `/api`, as @svc/client takes them: it sends them under the server's API base ({@link API_BASE}). */
export const API = '/api';

/**
 * The server's API base, `/api` plus its `api_v1_prefix`, as the server wrote it into the page
 * (kernel/http/admin-console.ts): for the requests made without the client, and the client's `apiBase`.
 */
export const API_BASE = document.querySelector('meta[name="svc-api-base"]')?.getAttribute('content') || API;

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
  const query = queryString(options.query);
  // A path may carry a query of its own (`excludePaths=`, which queryString leaves out when empty).
  const target = `${API}${path}${path.includes('?') && query ? `&${query.slice(1)}` : query}`;
  const response = await client.fetch(target, {
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
