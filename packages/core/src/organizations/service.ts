import { createHash, randomBytes } from 'node:crypto';
import type { Settings } from '../kernel/config/schema.js';
import { mapDatabaseError } from '../kernel/errors/format.js';
import { SvcError } from '../kernel/errors/svc-error.js';
import { resolveLocale } from '../kernel/i18n/index.js';
import { isCanonicalUuid, normaliseEmail, type AuthUser } from '../kernel/identity.js';
import { pageOf, type Page } from '../kernel/pagination.js';
import type {
  EventSink,
  MailDelivery,
  OrganizationContext,
  OrganizationMembership,
  WebhookOrganization,
  WebhookOutbox,
} from '../kernel/ports.js';
import { ADMIN, BUILTIN_ROLES, INVITATION_TOKEN_BYTES, MEMBERSHIP_EVENT, OWNER } from './constants.js';
import type { Orm } from '../kernel/db/database.js';
import type {
  InvitationInfo,
  MemberInfo,
  OrganizationRow,
  OrganizationStore,
  RecordMember,
  RecordOrganization,
} from './store.js';

/** `createApp({ organizationRoles })`: each project role and the organization codenames it grants. */
export type OrganizationRoles = Record<string, readonly string[]>;

export interface OrganizationServiceDeps {
  settings: Settings;
  store: OrganizationStore;
  roles: OrganizationRoles;
  events(): EventSink;
  mail(): MailDelivery | undefined;
  /** The webhook outbox (SPEC-3 §3), read at call time. */
  webhooks(): WebhookOutbox;
  userLocale(userId: string): Promise<string>;
  now: () => Date;
}

/** An organization as the API writes it. */
export function toOrganizationOut(row: OrganizationRow) {
  return { id: row.id, slug: row.slug, name: row.name, createdAt: row.createdAt.toISOString() };
}

function toMemberOut(row: MemberInfo) {
  return { ...row, joinedAt: row.joinedAt.toISOString() };
}

function toInvitationOut(row: InvitationInfo) {
  return {
    id: row.id,
    email: row.email,
    role: row.role,
    expiresAt: row.expiresAt.toISOString(),
    invitedBy:
      row.invitedBy && row.invitedByUsername ? { id: row.invitedBy, username: row.invitedByUsername } : null,
    createdAt: row.createdAt.toISOString(),
  };
}

/** The stored form of an invitation token: only its SHA-256 digest. */
export function invitationDigest(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** The base of links in mails: `public_url`, else the server's own address (SPEC-2 "Mail and links"). */
function publicBase(settings: Settings): string {
  return (settings.public_url || `http://${settings.host}:${settings.port}`).replace(/\/+$/, '');
}

const notFound = () => new SvcError('organization.not_found');
const roleForbidden = () => new SvcError('organization.role_forbidden');

/** The rules of SPEC-3 §2 "Organizations". */
export function createOrganizationService(deps: OrganizationServiceDeps) {
  const { store, settings, roles, now } = deps;
  const declared = new Set<string>([...BUILTIN_ROLES, ...Object.keys(roles)]);
  const allCodenames = [...new Set(Object.values(roles).flat())].sort();

  /** A role holds exactly the codenames listed for it; `owner` every listed one (SPEC-3 §2). */
  function permissionsOf(role: string | null): string[] {
    if (role === null || role === OWNER) return allCodenames;
    return [...new Set(roles[role] ?? [])].sort();
  }

  function assertRole(role: string): void {
    if (!declared.has(role))
      throw new SvcError('organization.role_invalid', { params: { roles: [...declared].join(', ') } });
  }

  /** Owners (and superusers) manage everything, admins members and invitations below `owner`. */
  function canManage(org: OrganizationContext, user: AuthUser | null): boolean {
    return user === null || user.isSuperuser || org.role === OWNER || org.role === ADMIN;
  }
  function isOwner(org: OrganizationContext, user: AuthUser | null): boolean {
    return user === null || user.isSuperuser || org.role === OWNER;
  }

  function emit(organizationId: string, userId: string, role: string | null): void {
    deps.events().emit(MEMBERSHIP_EVENT, { organizationId, userId, role });
  }

  /** An organization as webhook events name it (SPEC-3 §3 `{id, slug, name}`). */
  const hookOrg = (row: OrganizationRow): WebhookOrganization => ({
    id: row.id,
    slug: row.slug,
    name: row.name,
  });

  /**
   * SPEC-3 §3: the `organization.created` / `organization.deleted` event, stored in the change's transaction;
   * undefined while webhooks are off (the store then opens no transaction for it).
   */
  function organizationEvent(type: 'organization.created' | 'organization.deleted', ownerId?: string) {
    const outbox = deps.webhooks();
    if (!outbox.enabled) return undefined;
    const record: RecordOrganization = async (tx, row) => {
      await outbox.record(tx, type, { organization: hookOrg(row) });
      // The owner's membership is created with the organization (SPEC-3 §2): its own member_added.
      if (ownerId)
        await outbox.record(tx, 'organization.member_added', {
          organization: hookOrg(row),
          userId: ownerId,
          role: OWNER,
        });
    };
    return record;
  }

  type MemberEventType =
    'organization.member_added' | 'organization.member_updated' | 'organization.member_removed';
  /** Reads the organization in the change's transaction and stores a `organization.member_*` event there. */
  async function recordMember(
    outbox: WebhookOutbox,
    tx: Orm,
    type: MemberEventType,
    orgId: string,
    userId: string,
    role: string,
  ): Promise<void> {
    // The membership row just written holds the organization (foreign key), so it is there.
    const organization = hookOrg((await store.byId(orgId, tx))!);
    await outbox.record(tx, type, { organization, userId, role });
  }
  /** The `organization.member_*` event of a membership change; undefined while webhooks are off. */
  function memberEvent(type: MemberEventType, orgId: string, userId: string): RecordMember | undefined {
    const outbox = deps.webhooks();
    if (!outbox.enabled) return undefined;
    return (tx, role) => recordMember(outbox, tx, type, orgId, userId, role);
  }

  /** A unique-constraint race on the slug answers its own code (SPEC-3 §7 rule 9). */
  async function slugSafe<T>(write: () => Promise<T>): Promise<T> {
    try {
      return await write();
    } catch (error) {
      const mapped = mapDatabaseError(error);
      if (mapped?.code === 'db.conflict') throw new SvcError('organization.slug_taken');
      throw mapped ?? error;
    }
  }

  async function loadOrg(id: string): Promise<OrganizationRow> {
    const row = isCanonicalUuid(id) ? await store.byId(id) : undefined;
    if (!row) throw notFound();
    return row;
  }

  /** Removes a membership under the last-owner rule; emits the change. */
  async function removeMembership(orgId: string, userId: string): Promise<void> {
    const outcome = await store.removeMember(
      orgId,
      userId,
      memberEvent('organization.member_removed', orgId, userId),
    );
    if ('lastOwner' in outcome) throw new SvcError('organization.last_owner');
    if ('notFound' in outcome) throw new SvcError('organization.member_not_found');
    emit(orgId, userId, null);
  }

  async function setRole(orgId: string, userId: string, role: string): Promise<void> {
    const outcome = await store.setRole(
      orgId,
      userId,
      role,
      memberEvent('organization.member_updated', orgId, userId),
    );
    if ('lastOwner' in outcome) throw new SvcError('organization.last_owner', { loc: ['body', 'role'] });
    if ('notFound' in outcome) throw new SvcError('organization.member_not_found');
    emit(orgId, userId, role);
  }

  async function deleteOrganization(id: string): Promise<void> {
    const members = isCanonicalUuid(id)
      ? await store.delete(id, organizationEvent('organization.deleted'))
      : undefined;
    if (!members) throw notFound();
    for (const userId of members) emit(id, userId, null);
  }

  return {
    permissionsOf,
    allCodenames,
    roles: [...declared],

    async create(user: AuthUser | null, body: { name: string; slug: string }) {
      if (!user) throw new SvcError('auth.not_authenticated');
      if (settings.organization_create === 'superuser' && !user.isSuperuser)
        throw new SvcError('organization.create_forbidden');
      if (await store.bySlug(body.slug)) throw new SvcError('organization.slug_taken');
      const row = await slugSafe(() =>
        store.create(
          { ...body, ownerId: user.id, at: now() },
          organizationEvent('organization.created', user.id),
        ),
      );
      emit(row.id, user.id, OWNER);
      return toOrganizationOut(row);
    },
    /** For the CLI: an organization owned by `ownerId`. */
    createFor: async (ownerId: string, body: { name: string; slug: string }) => {
      if (await store.bySlug(body.slug)) throw new SvcError('organization.slug_taken');
      const row = await slugSafe(() =>
        store.create({ ...body, ownerId, at: now() }, organizationEvent('organization.created', ownerId)),
      );
      emit(row.id, ownerId, OWNER);
      return toOrganizationOut(row);
    },
    async mine(userId: string) {
      return (await store.listOfUser(userId)).map((row) => ({ ...toOrganizationOut(row), role: row.role }));
    },
    async get(org: OrganizationContext) {
      return { ...toOrganizationOut(await loadOrg(org.id)), role: org.role, permissions: org.permissions };
    },
    async update(org: OrganizationContext, user: AuthUser | null, body: { name?: string; slug?: string }) {
      if (!canManage(org, user)) throw roleForbidden();
      const current = await loadOrg(org.id);
      const changes: { name?: string; slug?: string } = {};
      if (body.name !== undefined) changes.name = body.name;
      if (body.slug !== undefined && body.slug !== current.slug) {
        if (await store.bySlug(body.slug)) throw new SvcError('organization.slug_taken');
        changes.slug = body.slug;
      }
      const row = await slugSafe(() => store.update(org.id, changes));
      if (!row) throw notFound();
      return toOrganizationOut(row);
    },
    async remove(org: OrganizationContext, user: AuthUser | null) {
      if (!isOwner(org, user)) throw roleForbidden();
      await deleteOrganization(org.id);
    },
    deleteOrganization,

    async members(
      org: OrganizationContext | string,
      query: { page: number; pageSize: number; search?: string },
    ) {
      const id = typeof org === 'string' ? org : org.id;
      const { rows, total } = await store.members(id, {
        search: query.search,
        limit: query.pageSize,
        offset: (query.page - 1) * query.pageSize,
      });
      return pageOf(rows.map(toMemberOut), total, query);
    },
    async changeRole(org: OrganizationContext, user: AuthUser | null, userId: string, role: string) {
      if (!canManage(org, user)) throw roleForbidden();
      assertRole(role);
      const target = isCanonicalUuid(userId) ? await store.member(org.id, userId) : undefined;
      if (!target) throw new SvcError('organization.member_not_found');
      // An admin neither changes an owner nor makes one.
      if (!isOwner(org, user) && (target.role === OWNER || role === OWNER)) throw roleForbidden();
      await setRole(org.id, userId, role);
      return toMemberOut({ ...target, role });
    },
    async removeMember(org: OrganizationContext, user: AuthUser | null, userId: string) {
      const leaving = user !== null && user.id === userId;
      if (!leaving && !canManage(org, user)) throw roleForbidden();
      const target = isCanonicalUuid(userId) ? await store.member(org.id, userId) : undefined;
      if (!target) throw new SvcError('organization.member_not_found');
      if (!leaving && !isOwner(org, user) && target.role === OWNER) throw roleForbidden();
      await removeMembership(org.id, userId);
    },

    async invite(org: OrganizationContext, user: AuthUser | null, body: { email: string; role: string }) {
      if (!canManage(org, user)) throw roleForbidden();
      assertRole(body.role);
      if (body.role === OWNER && !isOwner(org, user)) throw roleForbidden();
      const email = normaliseEmail(body.email)!;
      if (await store.memberWithEmail(org.id, email)) throw new SvcError('organization.already_member');
      const organization = await loadOrg(org.id);
      const token = randomBytes(INVITATION_TOKEN_BYTES).toString('base64url');
      const createdAt = now();
      const expiresAt = new Date(
        createdAt.getTime() + settings.organization_invitation_expire_hours * 3_600_000,
      );
      const row = await store.invite({
        organizationId: org.id,
        digest: invitationDigest(token),
        email,
        role: body.role,
        invitedBy: user?.id ?? null,
        expiresAt,
        createdAt,
      });
      const url = settings.organization_invitation_url
        .replaceAll('{public_url}', publicBase(settings))
        .replaceAll('{token}', encodeURIComponent(token));
      const locale = user ? await deps.userLocale(user.id) : resolveLocale(settings.default_locale);
      deps.mail()?.organizationInvitation({
        email,
        url,
        expiresAt,
        locale,
        invitedBy: user?.username ?? settings.app_name,
        organization: { id: organization.id, name: organization.name, slug: organization.slug },
        role: body.role,
      });
      return toInvitationOut({ ...row, invitedByUsername: user?.username ?? null });
    },
    async invitations(org: OrganizationContext, user: AuthUser | null) {
      if (!canManage(org, user)) throw roleForbidden();
      return (await store.pending(org.id, now())).map(toInvitationOut);
    },
    async revokeInvitation(org: OrganizationContext, user: AuthUser | null, id: string) {
      if (!canManage(org, user)) throw roleForbidden();
      // SPEC-3 §2: admins manage invitations with roles other than `owner`; an owner's invitation is the
      // owners' to withdraw.
      const ownersOnly = isOwner(org, user) ? undefined : OWNER;
      const revoked = isCanonicalUuid(id) ? await store.revoke(org.id, id, ownersOnly) : 'missing';
      if (revoked === 'forbidden') throw roleForbidden();
      if (revoked === 'missing') throw new SvcError('organization.invitation_not_found');
    },
    /** The organization and role an invitation offers (the join page), or 400 when it cannot be used. */
    async preview(token: string) {
      const found = await store.usable(invitationDigest(token), now());
      if (!found) throw new SvcError('organization.invitation_invalid');
      return { organization: toOrganizationOut(found.organization), role: found.invitation.role };
    },
    /**
     * `POST /organizations/invitations/accept`: the caller's verified address must be the invited one; of
     * concurrent accepts exactly one succeeds (the store's conditional update).
     */
    async accept(user: AuthUser, token: string) {
      const digest = invitationDigest(token);
      const found = await store.usable(digest, now());
      if (!found) throw new SvcError('organization.invitation_invalid');
      const verified = user.emailVerifiedAt !== null && user.email !== null;
      if (!verified || user.email!.toLowerCase() !== found.invitation.email.toLowerCase())
        throw new SvcError('organization.invitation_email_mismatch');
      const outbox = deps.webhooks();
      const taken = await store.accept(
        digest,
        user.id,
        now(),
        outbox.enabled
          ? (tx, orgId, role) => recordMember(outbox, tx, 'organization.member_added', orgId, user.id, role)
          : undefined,
      );
      // 'ownerless': revoked, since the organization has no owner to answer for a new member (the store).
      if (!taken || taken === 'ownerless') throw new SvcError('organization.invitation_invalid');
      emit(found.organization.id, user.id, taken.role);
      return { organization: toOrganizationOut(found.organization), role: taken.role };
    },

    async adminList(query: { page: number; pageSize: number; search?: string }) {
      const { rows, total } = await store.listAll({
        search: query.search,
        limit: query.pageSize,
        offset: (query.page - 1) * query.pageSize,
      });
      return pageOf(
        rows.map((row) => ({ ...toOrganizationOut(row), memberCount: row.memberCount })),
        total,
        query,
      );
    },
    async adminGet(id: string) {
      const row = isCanonicalUuid(id) ? await store.byIdWithCount(id) : undefined;
      if (!row) throw notFound();
      return { ...toOrganizationOut(row), memberCount: row.memberCount };
    },

    // The CLI's operations (no caller: the operator acts as a superuser would).
    async addMember(orgId: string, userId: string, role: string) {
      assertRole(role);
      const added = await store.addMember(
        orgId,
        userId,
        role,
        now(),
        memberEvent('organization.member_added', orgId, userId),
      );
      if (!added) await setRole(orgId, userId, role);
      else emit(orgId, userId, role);
    },
    setRole: async (orgId: string, userId: string, role: string) => {
      assertRole(role);
      await setRole(orgId, userId, role);
    },
    removeMembership,

    /** A user's memberships for a superuser (svc extension of SPEC-3 §6, docs/organizations.md). */
    async membershipsOfUser(userId: string) {
      const rows = isCanonicalUuid(userId) ? await store.membershipsOfUser(userId) : undefined;
      if (!rows) throw new SvcError('user.not_found', { status: 404, loc: ['path', 'user_id'] });
      return rows.map((row) => ({ ...row, joinedAt: row.joinedAt.toISOString() }));
    },
    async exportOf(userId: string) {
      return (await store.exportOf(userId)).map((row) => ({ ...row, joinedAt: row.joinedAt.toISOString() }));
    },
    /**
     * A deactivated account's pending invitations end: those to its address and those it sent
     * (docs/organizations.md "Invitations end with the account"; SPEC-3 §7 rule 4 for the account's links).
     */
    async endInvitationsOf(userId: string): Promise<void> {
      if (isCanonicalUuid(userId)) await store.endInvitationsOf(userId);
    },
    /**
     * In the transaction of a user's deletion, before the user row goes (SPEC-3 §2 "Deleting a user deletes
     * their memberships"): one `organization.member_removed` per membership the cascade takes (SPEC-3 §3, with
     * the role the member had), and the end of the invitations to the address and by the user. The memberships
     * are read once (one query, whatever their number); the returned function, called once the deletion has
     * committed, emits `organization_membership_changed` with role null for each of them (SPEC-3 §2: the member
     * and superusers), as a removal or a leaving does.
     */
    async beforeUserDeleted(tx: Orm, userId: string): Promise<() => void> {
      const memberships = await store.membershipsOf(userId, tx);
      const outbox = deps.webhooks();
      if (outbox.enabled && memberships.length > 0)
        await outbox.recordEach(
          tx,
          'organization.member_removed',
          memberships.map(({ role, ...organization }) => ({ organization, userId, role })),
        );
      await store.endInvitationsOf(userId, tx);
      return () => {
        for (const { id } of memberships) emit(id, userId, null);
      };
    },
    /** SPEC-3 §2: deleting an account must not leave an organization with members and no owner. */
    async assertUserRemovable(userId: string, loc: (string | number)[]) {
      const slugs = await store.soleOwnerships(userId);
      if (slugs.length > 0)
        throw new SvcError('organization.last_owner', { loc, params: { organizations: slugs } });
    },
    parseMembership(value: unknown): OrganizationMembership | null {
      if (value === null || value === undefined) return null;
      const [slug, role] = (typeof value === 'string' ? JSON.parse(value) : value) as [string, string | null];
      return { slug, role: role ?? null };
    },
  };
}

export type OrganizationService = ReturnType<typeof createOrganizationService>;
export type { Page };
