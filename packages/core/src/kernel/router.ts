import type { z, ZodType } from 'zod';
import type { Cache } from './cache/cache.js';
import type { Settings } from './config/schema.js';
import type { Database } from './db/database.js';
import type { Translate } from './i18n/index.js';
import type { Logger } from './log/logger.js';
import type { Audience, AuthUser } from './ports.js';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** Access requirements shared by routers and routes (SPEC "Route protection rules"). */
export interface ProtectionOptions {
  /** No authentication dependency; router-level permission, staff or superuser rules still apply. */
  public?: boolean;
  /** Codenames the user must all hold (router and route lists add up). */
  permissions?: string[];
  requireStaff?: boolean;
  requireSuperuser?: boolean;
}

/** Options of one route. */
export interface RouteOptions<
  P extends ZodType = ZodType,
  Q extends ZodType = ZodType,
  B extends ZodType = ZodType,
  R extends ZodType = ZodType,
> extends ProtectionOptions {
  /** Activity description template: `{username}` and path parameters, e.g. `archived {noteId} by {username}`. */
  logAs?: string;
  summary?: string;
  description?: string;
  tags?: string[];
  /** Success status. @default 200 (204 sends no body) */
  status?: number;
  params?: P;
  query?: Q;
  body?: B;
  response?: R;
  /** Body encoding. @default 'json' */
  bodyType?: 'json' | 'form';
  /**
   * Envelope policy: true (the `envelope_enabled` setting), false (never), or 'auth-token'
   * (only when `wrap_auth_token_response` is true). @default true
   */
  envelope?: boolean | 'auth-token';
  /** Hidden from the OpenAPI document. @default false */
  hidden?: boolean;
}

/** Per-user settings as seen by handlers: the app settings plus `get(user, 'section.field')`. */
export type HandlerSettings = Settings & {
  /** A user's setting value (30-second cache). */
  get(user: AuthUser | string, path: string): Promise<unknown>;
};

/** What a handler receives. */
export interface HandlerContext<P = Record<string, string>, Q = Record<string, unknown>, B = unknown> {
  params: P;
  query: Q;
  body: B;
  /** The authenticated user; null on a public route without token (or with `global_noauth`). */
  user: AuthUser | null;
  /** The main database (`database_url`, else the auth database). */
  db: Database;
  authDb: Database;
  cache: Cache;
  settings: HandlerSettings;
  log: Logger;
  requestId: string;
  /** Client address (honours `trust proxy` / `--forwarded-allow-ips`). */
  clientIp: string;
  /** Request headers, lower-case names. */
  headers: Record<string, string | undefined>;
  /** Request path as received. */
  path: string;
  method: HttpMethod;
  /** The request language (`default_locale` or `Accept-Language`). */
  locale: string;
  t: Translate;
  /** Emits a project event to an audience (default: superusers). */
  emit(type: string, data: Record<string, unknown>, audience?: Audience): void;
  /** Sets a response header. */
  setHeader(name: string, value: string): void;
  /** Overrides the success status of this response. */
  setStatus(status: number): void;
}

type Infer<T, D> = T extends ZodType ? z.output<T> : D;

export type Handler<P extends ZodType, Q extends ZodType, B extends ZodType> = (
  ctx: HandlerContext<Infer<P, Record<string, string>>, Infer<Q, Record<string, unknown>>, Infer<B, unknown>>,
) => unknown;

export interface RouteDefinition {
  method: HttpMethod;
  path: string;
  options: RouteOptions;
  handler: (ctx: HandlerContext<any, any, any>) => unknown;
}

/** Router options. */
export interface RouterOptions extends ProtectionOptions {
  /** Path prefix under `/api` (+ `api_v1_prefix`), e.g. `/notes`. @default '' */
  prefix?: string;
  tags?: string[];
  /** Name for `disable_routers` / `disable_core_routers`. @default prefix without slashes */
  name?: string;
}

export interface Router {
  readonly options: RouterOptions;
  readonly name: string;
  readonly routes: RouteDefinition[];
  get<P extends ZodType, Q extends ZodType, B extends ZodType>(
    path: string,
    options: RouteOptions<P, Q, B>,
    handler: Handler<P, Q, B>,
  ): Router;
  post<P extends ZodType, Q extends ZodType, B extends ZodType>(
    path: string,
    options: RouteOptions<P, Q, B>,
    handler: Handler<P, Q, B>,
  ): Router;
  put<P extends ZodType, Q extends ZodType, B extends ZodType>(
    path: string,
    options: RouteOptions<P, Q, B>,
    handler: Handler<P, Q, B>,
  ): Router;
  patch<P extends ZodType, Q extends ZodType, B extends ZodType>(
    path: string,
    options: RouteOptions<P, Q, B>,
    handler: Handler<P, Q, B>,
  ): Router;
  delete<P extends ZodType, Q extends ZodType, B extends ZodType>(
    path: string,
    options: RouteOptions<P, Q, B>,
    handler: Handler<P, Q, B>,
  ): Router;
}

/**
 * Declares a router of routes mounted under `/api` + `api_v1_prefix` + `prefix`.
 * @example
 * const notes = defineRouter({ prefix: '/notes', permissions: ['notes.read'] });
 * notes.get('/', { summary: 'List notes' }, async () => [{ id: 1 }]);
 */
export function defineRouter(options: RouterOptions = {}): Router {
  const routes: RouteDefinition[] = [];
  const name =
    options.name ?? ((options.prefix ?? '').replace(/^\/+|\/+$/g, '').replace(/\//g, '.') || 'root');
  const add =
    (method: HttpMethod) =>
    (path: string, routeOptions: RouteOptions<any, any, any>, handler: (ctx: any) => unknown): Router => {
      routes.push({ method, path, options: routeOptions, handler });
      return router;
    };
  const router: Router = {
    options,
    name,
    routes,
    get: add('GET'),
    post: add('POST'),
    put: add('PUT'),
    patch: add('PATCH'),
    delete: add('DELETE'),
  };
  return router;
}
