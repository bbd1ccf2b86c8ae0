import type { Settings } from '../kernel/config/schema.js';
import { apiBase, documentedPath, type CompiledRoute } from '../kernel/routes.js';
import { CORE_ROUTE_PREFIXES } from './constants.js';
import type { ApplicationRouteOut } from './schemas.js';

/** A stable route name: the handler's function name, else router name + method + relative path. */
function routeName(compiled: CompiledRoute): string {
  const fn = compiled.route.handler.name;
  if (fn && fn !== 'handler' && fn !== 'anonymous') return fn;
  const rest = compiled.route.path.replace(/[^A-Za-z0-9]+/g, '_').replace(/^_+|_+$/g, '');
  return `${compiled.router.name}.${compiled.method.toLowerCase()}${rest ? `_${rest}` : ''}`;
}

function isCorePath(path: string, settings: Settings): boolean {
  const base = apiBase(settings);
  const relative = path.startsWith(base) ? path.slice(base.length) : path;
  return CORE_ROUTE_PREFIXES.some((prefix) => relative === prefix || relative.startsWith(`${prefix}/`));
}

export type ApplicationRoute = ApplicationRouteOut & { permissions: string[] };

/** One listing per compiled route table: the table is built once at start-up, so is its listing. */
const listings = new WeakMap<readonly CompiledRoute[], ApplicationRoute[]>();

/**
 * The project's routes as mounted (after `disable_routers` / `disable_routes`), for
 * `GET /admin/permissions/applications`, read from the route table compiled at start-up (kernel/routes.ts).
 * SPEC "Permissions and groups": core routes (`/api/auth`, `/api/admin`, `/api/health`, `/api/version`) are
 * excluded; so is every route of a core module.
 */
export function listApplicationRoutes(
  routes: readonly CompiledRoute[],
  settings: Settings,
): ApplicationRoute[] {
  let listing = listings.get(routes);
  if (!listing) {
    listing = routes
      .filter((route) => !route.core && !isCorePath(route.path, settings))
      .map((route) => ({
        path: documentedPath(route.path),
        name: routeName(route),
        methods: [route.method],
        summary: route.route.options.summary ?? null,
        tags: route.route.options.tags ?? route.router.options.tags ?? [route.router.name],
        permissions: route.requirements.permissions,
      }));
    listings.set(routes, listing);
  }
  return listing;
}
