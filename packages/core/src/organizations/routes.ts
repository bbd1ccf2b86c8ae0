import { defineRouter, type Router } from '../kernel/router.js';
import {
  AcceptBody,
  AdminListQuery,
  AdminPageOut,
  InvitationBody,
  InvitationListOut,
  InvitationOut,
  InvitationParams,
  MemberOut,
  MemberPageOut,
  MemberParams,
  MembersQuery,
  MembershipOut,
  OrganizationAdminOut,
  OrganizationCreateBody,
  OrganizationDetailOut,
  OrganizationListOut,
  OrganizationOut,
  OrganizationPatchBody,
  OrgParams,
  RoleBody,
  UserMembershipListOut,
  UserParams,
} from './schemas.js';
import type { OrganizationService } from './service.js';

// SPEC-3 §2: every route of one organization says `organization: true`, so the kernel guard reads the
// caller's membership (path parameter `org_id`) in its one query and answers 404 `organization.not_found`
// to non-members before the handler runs; the handler checks the role (403 `organization.role_forbidden`).

const NOT_MEMBER = '404 `organization.not_found` for a caller who is not a member (superusers pass).';

/** `/organizations` (router name `organizations`). */
export function createOrganizationRouter(service: OrganizationService): Router {
  const orgs = defineRouter({ prefix: '/organizations', name: 'organizations', tags: ['organizations'] });
  orgs.post(
    '/',
    {
      summary: 'Create an organization',
      description:
        'The caller becomes its owner. 403 `organization.create_forbidden` when `organization_create` is ' +
        '`superuser`; 409 `organization.slug_taken`.',
      body: OrganizationCreateBody,
      response: OrganizationOut,
      status: 201,
      logAs: 'created an organization',
    },
    (ctx) => service.create(ctx.user, ctx.body),
  );
  orgs.get('/', { summary: "The caller's organizations", response: OrganizationListOut }, (ctx) =>
    service.mine(ctx.user.id),
  );
  orgs.post(
    '/invitations/accept',
    {
      summary: 'Accept an invitation',
      description:
        'The caller’s verified email must be the invited one (403 `organization.invitation_email_mismatch`); ' +
        '400 `organization.invitation_invalid` for an unknown, used, expired, revoked or superseded token.',
      body: AcceptBody,
      response: MembershipOut,
      logAs: 'accepted an organization invitation',
    },
    (ctx) => service.accept(ctx.user, ctx.body.token),
  );
  orgs.get(
    '/:org_id',
    {
      summary: 'One organization',
      description: `With the caller's \`role\` and \`permissions\`. ${NOT_MEMBER}`,
      params: OrgParams,
      organization: true,
      response: OrganizationDetailOut,
    },
    (ctx) => service.get(ctx.organization),
  );
  orgs.patch(
    '/:org_id',
    {
      summary: 'Change an organization',
      description: `Owners and admins. 409 \`organization.slug_taken\`. ${NOT_MEMBER}`,
      params: OrgParams,
      organization: true,
      body: OrganizationPatchBody,
      response: OrganizationOut,
      logAs: 'changed organization {org_id}',
    },
    (ctx) => service.update(ctx.organization, ctx.caller, ctx.body),
  );
  orgs.delete(
    '/:org_id',
    {
      summary: 'Delete an organization',
      description: `Owners. Its memberships and invitations go with it. ${NOT_MEMBER}`,
      params: OrgParams,
      organization: true,
      status: 204,
      logAs: 'deleted organization {org_id}',
    },
    (ctx) => service.remove(ctx.organization, ctx.caller),
  );
  orgs.get(
    '/:org_id/members',
    {
      summary: 'The members of an organization',
      description: `Paginated, oldest first; \`search\` over username, email and names. ${NOT_MEMBER}`,
      params: OrgParams,
      query: MembersQuery,
      organization: true,
      response: MemberPageOut,
    },
    (ctx) => service.members(ctx.organization, ctx.query),
  );
  orgs.patch(
    '/:org_id/members/:user_id',
    {
      summary: "Change a member's role",
      description:
        'Owners and admins; an admin neither changes an owner nor gives `owner` (403 ' +
        '`organization.role_forbidden`). 400 `organization.last_owner` for the only owner; 422 ' +
        `\`organization.role_invalid\`. ${NOT_MEMBER}`,
      params: MemberParams,
      organization: true,
      body: RoleBody,
      response: MemberOut,
      logAs: 'changed the role of {user_id} in organization {org_id}',
    },
    (ctx) => service.changeRole(ctx.organization, ctx.caller, ctx.params.user_id, ctx.body.role),
  );
  orgs.delete(
    '/:org_id/members/:user_id',
    {
      summary: 'Remove a member, or leave',
      description:
        'Owners and admins (an admin not an owner), or the member themselves. 400 `organization.last_owner` ' +
        `when the only owner would leave members behind. ${NOT_MEMBER}`,
      params: MemberParams,
      organization: true,
      status: 204,
      logAs: 'removed {user_id} from organization {org_id}',
    },
    (ctx) => service.removeMember(ctx.organization, ctx.caller, ctx.params.user_id),
  );
  orgs.post(
    '/:org_id/invitations',
    {
      summary: 'Invite by email',
      description:
        'Owners and admins (an admin cannot invite as `owner`); mails a one-time link. A new invitation to ' +
        'the same address supersedes the earlier one. 409 `organization.already_member`. Refused to ' +
        `personal tokens (SPEC-3 §7 rule 3). ${NOT_MEMBER}`,
      params: OrgParams,
      organization: true,
      allowPersonalToken: false,
      body: InvitationBody,
      response: InvitationOut,
      status: 201,
      logAs: 'invited to organization {org_id}',
    },
    (ctx) => service.invite(ctx.organization, ctx.caller, ctx.body),
  );
  orgs.get(
    '/:org_id/invitations',
    {
      summary: 'Pending invitations',
      description: `Owners and admins: not accepted, revoked, superseded or expired. ${NOT_MEMBER}`,
      params: OrgParams,
      organization: true,
      response: InvitationListOut,
    },
    (ctx) => service.invitations(ctx.organization, ctx.caller),
  );
  orgs.delete(
    '/:org_id/invitations/:invitation_id',
    {
      summary: 'Revoke an invitation',
      description: `Owners and admins. 404 \`organization.invitation_not_found\`. ${NOT_MEMBER}`,
      params: InvitationParams,
      organization: true,
      status: 204,
      logAs: 'revoked invitation {invitation_id} of organization {org_id}',
    },
    (ctx) => service.revokeInvitation(ctx.organization, ctx.caller, ctx.params.invitation_id),
  );
  return orgs;
}

/** `/admin/organizations` (router name `organizations-admin`). */
export function createOrganizationAdminRouter(service: OrganizationService): Router {
  const admin = defineRouter({
    prefix: '/admin/organizations',
    name: 'organizations-admin',
    tags: ['organizations'],
    requireSuperuser: true,
  });
  admin.get(
    '/',
    {
      summary: 'Every organization',
      description: 'Paginated, newest first, with `memberCount`; `search` over name and slug.',
      query: AdminListQuery,
      response: AdminPageOut,
    },
    (ctx) => service.adminList(ctx.query),
  );
  admin.get(
    '/:org_id',
    { summary: 'One organization', params: OrgParams, response: OrganizationAdminOut },
    (ctx) => service.adminGet(ctx.params.org_id),
  );
  admin.delete(
    '/:org_id',
    {
      summary: 'Delete an organization',
      params: OrgParams,
      status: 204,
      logAs: 'deleted organization {org_id}',
    },
    (ctx) => service.deleteOrganization(ctx.params.org_id),
  );
  return admin;
}

/**
 * A user's memberships for superusers (router name `organizations-user-admin`): an svc extension of SPEC-3 §6,
 * whose console shows a user's organizations through the public API (docs/organizations.md).
 */
export function createUserOrganizationsAdminRouter(service: OrganizationService): Router {
  const admin = defineRouter({
    prefix: '/admin/user',
    name: 'organizations-user-admin',
    tags: ['organizations'],
    requireSuperuser: true,
    allowPersonalToken: false,
  });
  admin.get(
    '/:user_id/organizations',
    {
      summary: "A user's organizations",
      description: 'Their memberships, oldest first. 404 `user.not_found` for an unknown user.',
      params: UserParams,
      response: UserMembershipListOut,
    },
    (ctx) => service.membershipsOfUser(ctx.params.user_id),
  );
  return admin;
}
