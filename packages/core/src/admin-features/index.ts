import { z } from 'zod';
import { defineModule } from '../kernel/module.js';
import { defineRouter } from '../kernel/router.js';
import { apiBase, type CompiledRoute } from '../kernel/routes.js';

/**
 * The admin routes whose presence says that an optional feature is on: the feature's setting mounts them, and
 * `disable_core_routers` / `disable_core_routes` can take them away on their own, so the route table is the
 * one answer to "may the console offer this" (docs/admin-console.md "Which features are on").
 */
const FEATURE_ROUTES = {
  /** `activity_log_enabled`: the activity log's pages. */
  activity: ['GET', '/admin/audit/activity'],
  /** The permissions router: groups and permissions. */
  permissions: ['GET', '/admin/permissions/permissions'],
  /** `organizations_enabled` (SPEC-3 §2). */
  organizations: ['GET', '/admin/organizations'],
  /** `organizations_enabled`: a user's memberships on their page (svc extension of SPEC-3 §6). */
  userOrganizations: ['GET', '/admin/user/:user_id/organizations'],
  /** `webhooks_enabled` (SPEC-3 §3). */
  webhooks: ['GET', '/admin/webhooks'],
  /**
   * The MFA reset of SPEC-2 "Administration and self-service" (router `mfa-admin`): mounted whatever
   * `mfa_enabled` says, since users may keep an MFA set up while it was on.
   */
  mfaReset: ['DELETE', '/admin/user/:user_id/mfa'],
  /** `impersonation_enabled` (SPEC-3 §4). */
  impersonation: ['POST', '/admin/user/:user_id/impersonate'],
  /** `passkeys_enabled`: a user's passkeys on their page (svc extension of SPEC-3 §6). */
  passkeys: ['GET', '/admin/user/:user_id/passkeys'],
} as const;

type Feature = keyof typeof FEATURE_ROUTES;

const FeaturesOut = z.object(
  Object.fromEntries(Object.keys(FEATURE_ROUTES).map((name) => [name, z.boolean()])) as Record<
    Feature,
    z.ZodBoolean
  >,
);

/**
 * `GET /admin/features` (router name `admin-features`; an svc extension for the admin console of SPEC-3 §6):
 * which optional features the server has on, read from the routes it mounted. The console asks it instead of
 * trying the routes, so that opening a page writes nothing: a write route can only be tried by a write request,
 * which the activity log records even when refused, and a wrong method on a mounted path answers the same 404
 * `request.not_found` as an unmounted one.
 */
export const adminFeaturesModule = defineModule({
  name: 'admin-features',
  uses: ['routes'],
  setup({ settings, ports }) {
    const base = apiBase(settings);
    let answer: Record<Feature, boolean> | undefined;
    // The table is compiled once, after every module's setup: the answer is fixed from the first request on.
    const featuresOf = (routes: readonly CompiledRoute[]) => {
      // A router's `/` route keeps its trailing slash (`/api/admin/webhooks/`): compared without it.
      const mounted = new Set(routes.map((r) => `${r.method} ${r.path.replace(/(.)\/$/, '$1')}`));
      const entries = Object.entries(FEATURE_ROUTES).map(([name, [method, path]]) => [
        name,
        mounted.has(`${method} ${base}${path}`),
      ]);
      return Object.fromEntries(entries) as Record<Feature, boolean>;
    };
    const router = defineRouter({
      prefix: '/admin/features',
      name: 'admin-features',
      tags: ['users'],
      requireSuperuser: true,
    });
    router.get(
      '/',
      {
        summary: 'Which optional features are on',
        description:
          'For the admin console (an svc extension): `true` for each feature whose admin routes are mounted.',
        response: FeaturesOut,
      },
      () => (answer ??= featuresOf(ports.find('routes')?.routes ?? [])),
    );
    return { routers: [router] };
  },
});
