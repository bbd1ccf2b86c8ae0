import type { Settings } from '../config/schema.js';
import type { RouteOptions } from '../router.js';

/** Whether a route's 2xx JSON is wrapped (SPEC "Response envelope"). */
export function shouldEnvelope(options: RouteOptions, settings: Settings): boolean {
  if (options.envelope === false) return false;
  if (options.envelope === 'auth-token') return settings.wrap_auth_token_response;
  return settings.envelope_enabled;
}

/** `{success, message, data}`; with `expose_response_database` also the name of the database. */
export function envelope(data: unknown, settings: Settings, databaseName: string): Record<string, unknown> {
  const body: Record<string, unknown> = { success: true, message: null, data: data ?? null };
  if (settings.expose_response_database) body.database = databaseName;
  return body;
}
