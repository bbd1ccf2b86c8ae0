import type { Settings } from '../kernel/config/schema.js';
import { apiBase, compileRoutes, type CompiledRoute } from '../kernel/http/server.js';
import type { Router } from '../kernel/router.js';
import { CORE_ROUTE_PREFIXES } from './constants.js';
import type { ApplicationRouteOut } from './schemas.js';

/** `/api/notes/:noteId` → `/api/notes/{noteId}` (the SPEC's and the OpenAPI document's notation). */
function displayPath(path: string): string {
  return path.replace(/:(\w+)/g, '{$1}');
}

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

/**
 * The project's routes as mounted (after `disable_routers` / `disable_routes`), for
 * `GET /admin/permissions/applications`. SPEC "Permissions and groups": core routes (`/api/auth`, `/api/admin`,
 * `/api/health`, `/api/version`) are excluded; so is every route of a core module.
 */
export function listApplicationRoutes(
  routers: Router[],
  settings: Settings,
): (ApplicationRouteOut & { permissions: string[] })[] {
  const compiled = compileRoutes(
    routers.map((router) => ({ router, core: false })),
    settings,
  );
  return compiled
    .filter((route) => !route.core && !isCorePath(route.path, settings))
    .map((route) => ({
      path: displayPath(route.path),
      name: routeName(route),
      methods: [route.method],
      summary: route.route.options.summary ?? null,
      tags: route.route.options.tags ?? route.router.options.tags ?? [route.router.name],
      permissions: route.requirements.permissions,
    }));
}
