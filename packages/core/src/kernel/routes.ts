import type { Settings } from './config/schema.js';
import type { HttpMethod, ProtectionOptions, RouteDefinition, Router } from './router.js';

// Route compilation, in one place and without Express: which routers and routes exist (SPEC "Configuration":
// `disable_routers`, `disable_core_routers`, `disable_routes`, `disable_core_routes`), their full paths
// (`/api` + `api_v1_prefix` + router prefix + route path) and their protection (SPEC "Route protection rules").
// Compiled once at start-up; kernel/http mounts the result, the OpenAPI documents and rbac's applications
// listing read the same table (the `routes` port).

/** The requirements of a route: router and route options added up (SPEC "Route protection rules" 2). */
export interface Requirements {
  /** The route has no authentication dependency of its own. */
  public: boolean;
  permissions: string[];
  requireStaff: boolean;
  requireSuperuser: boolean;
  /**
   * A personal access token is accepted (SPEC-2 "Personal access tokens"): false when the router or the route
   * says `allowPersonalToken: false` (a refusal adds up like the other requirements).
   */
  allowPersonalToken: boolean;
  /** The session must have begun with a recent login (SPEC-3 §7 rule 1): router or route says so. */
  requireRecentLogin: boolean;
  /** SPEC-3 §4: an impersonation session may call it (route, else router, else `allowPersonalToken`). */
  allowImpersonation: boolean;
  /** The route works in one organization (SPEC-3 §2): router or route says so, or names codenames below. */
  organization: boolean;
  /** Organization codenames the caller's role must grant (router and route lists added up). */
  organizationPermissions: string[];
}

/** Router and route protection added up: public from the route else the router, the rest combined. */
export function combineRequirements(router: ProtectionOptions, route: ProtectionOptions): Requirements {
  const allowPersonalToken = router.allowPersonalToken !== false && route.allowPersonalToken !== false;
  return {
    public: Boolean(route.public ?? router.public),
    permissions: [...new Set([...(router.permissions ?? []), ...(route.permissions ?? [])])],
    requireStaff: Boolean(router.requireStaff || route.requireStaff),
    requireSuperuser: Boolean(router.requireSuperuser || route.requireSuperuser),
    allowPersonalToken,
    requireRecentLogin: Boolean(router.requireRecentLogin || route.requireRecentLogin),
    allowImpersonation: route.allowImpersonation ?? router.allowImpersonation ?? allowPersonalToken,
    ...organizationRequirements(router, route),
  };
}

/** SPEC-3 §2: `organizationPermissions` implies `organization`. */
function organizationRequirements(router: ProtectionOptions, route: ProtectionOptions) {
  const organizationPermissions = [
    ...new Set([...(router.organizationPermissions ?? []), ...(route.organizationPermissions ?? [])]),
  ];
  return {
    organization: Boolean(router.organization || route.organization || organizationPermissions.length > 0),
    organizationPermissions,
  };
}

/** A router offered for mounting: core routers come from core modules, the others from the project. */
export interface MountedRouter {
  router: Router;
  core: boolean;
  /** The module whose setup returned the router; its name switches all its routers off too. */
  module?: string;
}

/** A route after compilation: its full path and combined requirements. */
export interface CompiledRoute {
  method: HttpMethod;
  /** Express path, e.g. `/api/notes/:noteId/archive`. */
  path: string;
  router: Router;
  route: RouteDefinition;
  core: boolean;
  requirements: Requirements;
}

function joinPath(...parts: string[]): string {
  const joined = parts
    .filter((p) => p !== '')
    .map((p) => p.replace(/^\/+|\/+$/g, ''))
    .filter((p) => p !== '')
    .join('/');
  return `/${joined}`;
}

/** The API base path: `/api` + `api_v1_prefix`. */
export function apiBase(settings: Settings): string {
  return joinPath('api', settings.api_v1_prefix);
}

/** `/api/notes/:noteId` → `/api/notes/{noteId}` (the SPEC's and the OpenAPI document's notation). */
export function documentedPath(path: string): string {
  return path.replace(/:(\w+)/g, '{$1}');
}

/**
 * Whether a router is switched off: a core one by `disable_core_routers`, any other by `disable_routers`,
 * named by the router's name or by its module's.
 */
export function isRouterDisabled(mounted: MountedRouter, settings: Settings): boolean {
  const disabled = mounted.core ? settings.disable_core_routers : settings.disable_routers;
  if (disabled.length === 0) return false;
  return (
    disabled.includes(mounted.router.name) ||
    (mounted.module !== undefined && disabled.includes(mounted.module))
  );
}

/** `[METHOD ]/path` entries of `disable_routes` / `disable_core_routes`, relative to /api. */
function isRouteDisabled(
  entries: string[],
  method: HttpMethod,
  fullPath: string,
  settings: Settings,
): boolean {
  if (entries.length === 0) return false;
  const norm = (p: string) => p.replace(/\/+$/, '') || '/';
  const relative = [
    norm(fullPath.slice('/api'.length) || '/'),
    norm(fullPath.slice(apiBase(settings).length) || '/'),
  ];
  return entries.some((entry) => {
    const [first, second] = entry.trim().split(/\s+/, 2);
    const [m, p] = second !== undefined ? [first!.toUpperCase(), second] : [undefined, first!];
    return (m === undefined || m === method) && relative.includes(norm(p.startsWith('/') ? p : `/${p}`));
  });
}

/**
 * The routes that exist after the `disable_*` settings, with full paths and requirements. Disabled routers and
 * routes do not exist at all (404, never 403).
 * @example const routes = compileRoutes([{ router: notes, core: false }], settings);
 */
export function compileRoutes(routers: MountedRouter[], settings: Settings): CompiledRoute[] {
  const base = apiBase(settings);
  const compiled: CompiledRoute[] = [];
  for (const mounted of routers) {
    if (isRouterDisabled(mounted, settings)) continue;
    const { router, core } = mounted;
    for (const route of router.routes) {
      const joined = joinPath(base, router.options.prefix ?? '', route.path);
      // `/health/` keeps its trailing slash in the documents; Express matches with and without it.
      const fullPath = route.path.endsWith('/') && joined !== '/' ? `${joined}/` : joined;
      const disabled = core ? settings.disable_core_routes : settings.disable_routes;
      if (isRouteDisabled(disabled, route.method, fullPath, settings)) continue;
      compiled.push({
        method: route.method,
        path: fullPath,
        router,
        route,
        core,
        requirements: combineRequirements(router.options, route.options),
      });
    }
  }
  return compiled;
}
