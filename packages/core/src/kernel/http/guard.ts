import type { Settings } from '../config/schema.js';
import { SvcError } from '../errors/svc-error.js';
import { canonicalUuid } from '../identity.js';
import {
  PERSONAL_TOKEN_PREFIX,
  type AuthUser,
  type OrganizationContext,
  type OrganizationMembership,
  type PortRegistry,
} from '../ports.js';
import { assertRecentLogin } from '../recent-login.js';
import type { Requirements } from '../routes.js';

export { combineRequirements, type Requirements } from '../routes.js';

/** Whether a user must be loaded: not public, or any requirement (rule 4: public keeps router rules). */
export function needsUser(req: Requirements): boolean {
  return (
    !req.public || req.permissions.length > 0 || req.requireStaff || req.requireSuperuser || req.organization
  );
}

export function bearerToken(header: string | undefined): string | null {
  if (!header) return null;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match ? match[1]! : null;
}

export interface GuardInput {
  requirements: Requirements;
  authorization: string | undefined;
  /**
   * The session cookie (SPEC-3 §5), present only when cookie sessions are on and no `Authorization` header
   * was sent. `unsafe`: the method is POST, PUT, PATCH or DELETE, so the request must pass `passesCsrf`.
   */
  cookie?: { token: string; unsafe: boolean; passesCsrf(): boolean };
  /** Loopback request without proxy headers (for `swagger_noauth`). */
  localDirect: boolean;
  /** Client address after the proxy rules (an invalid personal token counts on its rate-limit window). */
  clientIp: string;
  settings: Settings;
  ports: PortRegistry;
  /**
   * Told the caller as soon as it is known, before the authorization checks: a request refused with 403
   * still has its user (SPEC "Activity log recording rules" 3: the user comes from the valid token).
   */
  onUser?(user: AuthUser): void;
  /**
   * On an organization route (SPEC-3 §2): the organization id the request names (path parameter `orgId`,
   * else the header `X-Organization-Id`), as received; undefined when it names none.
   */
  organizationId?: string | undefined;
  /** Told the organization of an organization route once the caller passed its checks. */
  onOrganization?(organization: OrganizationContext): void;
}

/**
 * SPEC-3 §2: the organization of an organization route. Non-members (and ids naming no organization) get
 * 404 `organization.not_found`, never 403; superusers pass as owners do. Members lacking a codename: 403
 * `access.permissions_missing` with `params.permissions`.
 */
function checkOrganization(
  input: GuardInput,
  id: string,
  user: AuthUser | null,
  membership: OrganizationMembership | null | undefined,
): OrganizationContext {
  const organizations = input.ports.find('organizations');
  if (!organizations || !membership) throw new SvcError('organization.not_found');
  const superuser = user === null || user.isSuperuser;
  if (membership.role === null && !superuser) throw new SvcError('organization.not_found');
  const permissions = organizations.permissionsOf(membership.role);
  const organization = { id, slug: membership.slug, role: membership.role, permissions };
  if (!superuser) {
    const held = new Set(permissions);
    const missing = input.requirements.organizationPermissions.filter((p) => !held.has(p));
    if (missing.length > 0)
      throw new SvcError('access.permissions_missing', { params: { permissions: missing } });
  }
  input.onOrganization?.(organization);
  return organization;
}

/** The organization id of an organization route: 400 `organization.required` when the request names none. */
function organizationIdOf(input: GuardInput): string | null {
  const raw = input.organizationId;
  if (raw === undefined || raw === '') throw new SvcError('organization.required');
  // A value that is no UUID names no organization: 404 without a query.
  return canonicalUuid(raw.trim());
}

/**
 * Resolves the user of a request and enforces the route's requirements (SPEC "Route protection rules" 3:
 * superuser passes; require_superuser; require_staff; permissions, listing exactly the missing ones).
 */
export async function guard(input: GuardInput): Promise<AuthUser | null> {
  const { requirements, settings, ports } = input;
  const organizationId = requirements.organization ? organizationIdOf(input) : undefined;
  if (organizationId === null) throw new SvcError('organization.not_found');
  if (settings.global_noauth) {
    // Development only: no user, so the organization is only looked up (role null, every codename).
    if (organizationId !== undefined) {
      const membership = await ports.find('organizations')?.membership(null, organizationId);
      checkOrganization(input, organizationId, null, membership);
    }
    return null;
  }
  let token = bearerToken(input.authorization);
  // SPEC-3 §5: the cookie carries an access token under exactly the bearer's rules (sid, revocation,
  // permissions, the same one query); never a personal token, which only ever travels as a bearer header.
  const cookie = input.cookie;
  let viaCookie = false;
  if (cookie && !cookie.token.startsWith(PERSONAL_TOKEN_PREFIX)) {
    // An unsafe request authenticated by the cookie must be same-site and carry the CSRF header: refused
    // before any query where a user is needed; a public route simply does not see the cookie's user.
    if (cookie.unsafe && !cookie.passesCsrf()) {
      if (needsUser(requirements)) throw new SvcError('auth.csrf_failed');
    } else {
      token = cookie.token;
      viaCookie = true;
    }
  }
  const authenticator = ports.find('authenticator');
  // SPEC-2 "Personal access tokens": a `svc_pat_` bearer goes to its module while `personal_tokens_enabled`
  // (otherwise the port is absent and the JWT check refuses it). A credential route refuses it before any
  // lookup, whether the token is valid or not.
  const personal =
    !viaCookie && token?.startsWith(PERSONAL_TOKEN_PREFIX) ? ports.find('personalTokens') : undefined;
  if (personal && !requirements.allowPersonalToken) throw new SvcError('access.token_not_allowed');
  if (!needsUser(requirements)) {
    // A public route still sees a valid caller; a bad token there is simply no user.
    if (personal && token) return personal.authenticate(token, input.clientIp).catch(() => null);
    if (!token || !authenticator) return null;
    return authenticator.authenticate(token).catch(() => null);
  }
  let user: (AuthUser & { organization?: OrganizationMembership | null }) | null = null;
  if (!token) {
    if (settings.swagger_noauth && input.localDirect && !input.authorization && authenticator) {
      user = await authenticator.firstSuperuser();
    }
    if (!user) {
      throw new SvcError('auth.not_authenticated', {
        loc: ['header', 'Authorization'],
        headers: { 'WWW-Authenticate': 'Bearer' },
      });
    }
  } else if (personal) {
    // Owner ∩ token, with the owner's permissions, in one indexed query (the same shape as below).
    user = await personal.authenticate(token, input.clientIp);
  } else {
    if (!authenticator) throw new Error('no authenticator is registered (the auth module is disabled)');
    // docs/performance.md: the permissions come in the same statement as the user (one round trip), so every guarded
    // route gets them: a handler that needs them (GET /auth/user) does not query a second time.
    // SPEC-3 §2: on an organization route the membership comes in that same statement.
    user = await authenticator.authenticate(token, {
      withPermissions: true,
      ...(organizationId !== undefined ? { organizationId } : {}),
    });
  }
  input.onUser?.(user);
  // SPEC-3 §4: while impersonating, every credential route is refused before any other check of the route.
  if (user.impersonatorId !== undefined && !requirements.allowImpersonation)
    throw new SvcError('access.impersonation_forbidden');
  // SPEC-3 §7 rule 1: adding a lasting credential needs a recent login, a superuser's too (the claim was read
  // with the token: no query).
  if (requirements.requireRecentLogin) assertRecentLogin(user, settings);
  if (organizationId !== undefined) {
    // A personal token or `swagger_noauth` user was loaded without it: one query of its own.
    const membership =
      user.organization !== undefined
        ? user.organization
        : await ports.find('organizations')?.membership(user.id, organizationId);
    checkOrganization(input, organizationId, user, membership);
  }
  if (user.isSuperuser) return user;
  if (requirements.requireSuperuser) throw new SvcError('access.superuser_required');
  if (requirements.requireStaff && !user.isStaff) throw new SvcError('access.staff_required');
  if (requirements.permissions.length > 0) {
    const loaded = (user as AuthUser & { permissions?: string[] }).permissions;
    const held = new Set(loaded ?? (await ports.get('permissions').effectivePermissions(user.id)));
    const missing = requirements.permissions.filter((p) => !held.has(p));
    if (missing.length > 0)
      throw new SvcError('access.permissions_missing', { params: { permissions: missing } });
  }
  return user;
}
