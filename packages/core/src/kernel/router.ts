import type { z, ZodType } from 'zod';
import type { Cache } from './cache/cache.js';
import type { Settings } from './config/schema.js';
import type { Database } from './db/database.js';
import type { Translate } from './i18n/index.js';
import type { Logger } from './log/logger.js';
import type { Audience } from './audience.js';
import type { AuthUser } from './identity.js';
import type { OrganizationContext } from './ports.js';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** Access requirements shared by routers and routes (SPEC "Route protection rules"). */
export interface ProtectionOptions {
  /** No authentication dependency; router-level permission, staff or superuser rules still apply. */
  public?: boolean;
  /** Codenames the user must all hold (router and route lists add up). */
  permissions?: string[];
  requireStaff?: boolean;
  requireSuperuser?: boolean;
  /**
   * False on credential routes (password, email change, MFA, sessions, personal tokens, account deletion):
   * a personal access token is refused there with 403 `access.token_not_allowed` (SPEC-2 section 4).
   * @default true
   */
  allowPersonalToken?: boolean;
  /**
   * True on routes that add a lasting credential (a passkey, a personal token, a linked identity): the
   * caller's session must have begun with a login at most `reauthentication_max_age_minutes` ago, else 403
   * `auth.reauthentication_required` (SPEC-3 §7 rule 1). A refresh is not a login; a personal token never
   * passes. Handlers that decide by the request can call `assertRecentLogin` instead.
   * @default false
   */
  requireRecentLogin?: boolean;
  /**
   * Whether a superuser impersonating the user may call the route (SPEC-3 §4): credential routes answer 403
   * `access.impersonation_forbidden` before any other check of the route.
   * @default the route's `allowPersonalToken` (credential routes refuse both); true on logout and tickets
   */
  allowImpersonation?: boolean;
  /**
   * The route works inside one organization (SPEC-3 §2 "Organization routes of a project"), named by the
   * path parameter `orgId`, else the header `X-Organization-Id` (neither: 400 `organization.required`).
   * A caller who is not a member gets 404 `organization.not_found` (superusers pass); the handler sees
   * `ctx.organization`. The membership is read in the guard's one query. @default false
   */
  organization?: boolean;
  /**
   * Organization permission codenames the caller's role in the route's organization must all grant (403
   * `access.permissions_missing` with `params.permissions`); implies `organization`. Router and route lists
   * add up. Declared with `createApp({ organizationRoles })`.
   */
  organizationPermissions?: string[];
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
   * Body fields a personal access token may not send: a request with such a token whose body names any of
   * them, whatever the value, is refused with 403 `access.token_not_allowed` before the body is validated
   * (SPEC-3 §7 rule 3), so an invalid value tells nothing more than a valid one.
   * @example ['password', 'email']
   */
  personalTokenRefusedFields?: readonly string[];
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
  /** A user's setting value (30-second cache); typed for the paths {@link UserSettingPaths} knows. */
  get<K extends keyof UserSettingPaths>(user: AuthUser | string, path: K): Promise<UserSettingPaths[K]>;
  get(user: AuthUser | string, path: string): Promise<unknown>;
};

/**
 * Per-user setting paths (`section.field`) and their value types, for `ctx.settings.get`. The built-in
 * sections fill it; a project adds its own sections' fields by declaration merging:
 * @example
 * declare module '@svc/core' {
 *   interface UserSettingPaths {
 *     'notes.sortOrder': 'newest' | 'oldest';
 *   }
 * }
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- filled by declaration merging
export interface UserSettingPaths {}

/** What a handler receives. */
export interface HandlerContext<
  P = Record<string, string>,
  Q = Record<string, unknown>,
  B = unknown,
  U extends AuthUser | null = AuthUser | null,
  O extends OrganizationContext | null = OrganizationContext | null,
> {
  params: P;
  query: Q;
  body: B;
  /**
   * The authenticated user. On a route that is not public it is always there (the guard answered 401
   * otherwise), except with `global_noauth` (development only), which disables authentication: then it is
   * null, as `caller` says. On a public route: the caller of a valid token, else null.
   */
  user: U;
  /**
   * The organization the request works in (SPEC-3 §2): set on routes with `organization: true` (or
   * `organizationPermissions`), null elsewhere.
   */
  organization: O;
  /** The authenticated user or null, on any route (null with `global_noauth`). */
  caller: AuthUser | null;
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
  /** Sets a response header (several values: e.g. `Set-Cookie`). */
  setHeader(name: string, value: string | string[]): void;
  /**
   * Overrides the route's envelope policy for this response (SPEC-3 §5: a token-issuing route answers
   * enveloped when it sets the session cookies).
   */
  setEnvelope(policy: boolean | 'auth-token'): void;
  /**
   * The activity log description of this request, instead of the route's `logAs` (SPEC-3 §4: an impersonation's
   * reason). Sanitised and cut to the column's length like every description.
   */
  describeActivity(description: string): void;
  /** Overrides the success status of this response. */
  setStatus(status: number): void;
}

type Infer<T, D> = T extends ZodType ? z.output<T> : D;

/** A parameter name as written after `:` up to the next character that cannot be part of it. */
type ParamName<S extends string> = S extends `${infer Name}${'.' | '-' | '}' | '{' | '*'}${string}`
  ? Name
  : S;
type ParamNames<Path extends string> = Path extends `${string}:${infer Rest}`
  ? Rest extends `${infer Head}/${infer Tail}`
    ? ParamName<Head> | ParamNames<`/${Tail}`>
    : ParamName<Rest>
  : never;

/**
 * The path parameters of a route path written with `:name` segments, e.g. `'/:noteId/archive'` gives
 * `{ noteId: string }` (routes without a `params` schema).
 */
export type PathParams<Path extends string> = string extends Path
  ? Record<string, string>
  : { [K in ParamNames<Path>]: string };

/** Who `ctx.user` can be: a user on a route that is not public, also null on a public one. */
export type RouteUser<RouterPublic, RoutePublic> = RouterPublic extends true
  ? AuthUser | null
  : RoutePublic extends true
    ? AuthUser | null
    : AuthUser;

/** What `ctx.organization` can be: set when the router or the route says `organization: true`. */
export type RouteOrganization<RouterOrg, RouteOrg> = RouterOrg extends true
  ? OrganizationContext
  : RouteOrg extends true
    ? OrganizationContext
    : OrganizationContext | null;

export type Handler<
  P extends ZodType | undefined,
  Q extends ZodType | undefined,
  B extends ZodType | undefined,
  Path extends string = string,
  U extends AuthUser | null = AuthUser | null,
  O extends OrganizationContext | null = OrganizationContext | null,
> = (
  ctx: HandlerContext<Infer<P, PathParams<Path>>, Infer<Q, Record<string, unknown>>, Infer<B, unknown>, U, O>,
) => unknown;

export interface RouteDefinition {
  method: HttpMethod;
  path: string;
  options: RouteOptions;
  // The route's own inferred context types are checked where it is declared (Router's methods); stored
  // side by side, routes of every shape are called with the context the kernel builds.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- routes of every shape in one list
  handler: (ctx: HandlerContext<any, any, any, any, any>) => unknown;
}

/** Router options. */
export interface RouterOptions extends ProtectionOptions {
  /** Path prefix under `/api` (+ `api_v1_prefix`), e.g. `/notes`. @default '' */
  prefix?: string;
  tags?: string[];
  /** Name for `disable_routers` / `disable_core_routers`. @default prefix without slashes */
  name?: string;
  /**
   * Descriptions of the permission codenames this router's routes declare, stored by `svc permissions sync`
   * (docs/routers.md "Permissions"), e.g. `{ 'notes.read': 'Read notes' }`.
   */
  permissionDescriptions?: Record<string, string>;
}

/**
 * Adds one route. `ctx.params` comes from the `params` schema, else from the path (`'/:noteId'` gives
 * `ctx.params.noteId: string`); `ctx.user` is non-null unless the route or its router is public.
 */
export type AddRoute<RouterPublic extends boolean, RouterOrg extends boolean = boolean> = <
  const Path extends string,
  P extends ZodType | undefined = undefined,
  Q extends ZodType | undefined = undefined,
  B extends ZodType | undefined = undefined,
  Public extends boolean | undefined = undefined,
  Org extends boolean | undefined = undefined,
>(
  path: Path,
  options: RouteOptions<NonNullable<P>, NonNullable<Q>, NonNullable<B>> & {
    params?: P;
    query?: Q;
    body?: B;
    public?: Public;
    organization?: Org;
  },
  handler: Handler<P, Q, B, Path, RouteUser<RouterPublic, Public>, RouteOrganization<RouterOrg, Org>>,
) => Router<RouterPublic, RouterOrg>;

/** A router; `RouterPublic` is true when its options say `public: true` (every route is then public). */
export interface Router<RouterPublic extends boolean = boolean, RouterOrg extends boolean = boolean> {
  readonly options: RouterOptions;
  readonly name: string;
  readonly routes: RouteDefinition[];
  get: AddRoute<RouterPublic, RouterOrg>;
  post: AddRoute<RouterPublic, RouterOrg>;
  put: AddRoute<RouterPublic, RouterOrg>;
  patch: AddRoute<RouterPublic, RouterOrg>;
  delete: AddRoute<RouterPublic, RouterOrg>;
}

/**
 * Declares a router of routes mounted under `/api` + `api_v1_prefix` + `prefix`.
 * @example
 * const notes = defineRouter({ prefix: '/notes', permissions: ['notes.read'] });
 * notes.get('/', { summary: 'List notes' }, async () => [{ id: 1 }]);
 */
export function defineRouter<const O extends RouterOptions = Record<never, never>>(
  options?: O,
): Router<O['public'] extends true ? true : false, O['organization'] extends true ? true : false> {
  type Public = O['public'] extends true ? true : false;
  type Org = O['organization'] extends true ? true : false;
  const given: RouterOptions = options ?? {};
  const routes: RouteDefinition[] = [];
  const name = given.name ?? ((given.prefix ?? '').replace(/^\/+|\/+$/g, '').replace(/\//g, '.') || 'root');
  const add =
    (method: HttpMethod) =>
    (path: string, routeOptions: RouteOptions, handler: RouteDefinition['handler']): Router<Public, Org> => {
      routes.push({ method, path, options: routeOptions, handler });
      return router;
    };
  const router: Router<Public, Org> = {
    options: given,
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
