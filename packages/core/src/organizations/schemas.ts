import { z } from 'zod';
import { UserIdParam } from '../kernel/identity.js';
import { PaginationQuery, pageSchema } from '../kernel/pagination.js';
import { NAME_MAX_LENGTH, ROLE_MAX_LENGTH, SLUG_PATTERN } from './constants.js';

// SPEC-3 §2 "Organizations": camelCase fields; a malformed slug or name is 422 `request.validation_error`.

const Slug = z
  .string()
  .regex(SLUG_PATTERN, '3 to 50 characters of a-z, 0-9 and -')
  .describe('3 to 50 characters of `a-z`, `0-9`, `-`; unique');
const Name = z.string().trim().min(1).max(NAME_MAX_LENGTH);
/** A role name; an unknown one is 422 `organization.role_invalid` (checked by the service). */
const Role = z.string().min(1).max(ROLE_MAX_LENGTH).describe('`owner`, `admin`, `member` or a project role');

export const OrganizationCreateBody = z.object({ name: Name, slug: Slug });
export const OrganizationPatchBody = z.object({ name: Name.optional(), slug: Slug.optional() });
export const RoleBody = z.object({ role: Role });
export const InvitationBody = z.object({ email: z.email().max(320), role: Role });
export const AcceptBody = z.object({ token: z.string().min(1).max(200) });

export const OrgParams = z.object({ org_id: z.string().max(64) });
export const MemberParams = z.object({ org_id: z.string().max(64), user_id: UserIdParam });
export const InvitationParams = z.object({ org_id: z.string().max(64), invitation_id: z.string().max(64) });
export const MembersQuery = PaginationQuery.omit({ orderBy: true });
export const AdminListQuery = PaginationQuery.omit({ orderBy: true });

export const OrganizationOut = z.object({
  id: z.string(),
  slug: z.string(),
  name: z.string(),
  createdAt: z.string().describe('ISO 8601'),
});
export const OrganizationWithRoleOut = OrganizationOut.extend({
  role: z.string().nullable().describe("The caller's role; null for a superuser who is no member"),
});
export const OrganizationDetailOut = OrganizationWithRoleOut.extend({
  permissions: z.array(z.string()).describe("The codenames the caller's role grants in it"),
});
export const OrganizationAdminOut = OrganizationOut.extend({ memberCount: z.number().int() });
export const MemberOut = z.object({
  userId: z.string(),
  username: z.string(),
  email: z.string().nullable(),
  firstName: z.string(),
  lastName: z.string(),
  role: z.string(),
  joinedAt: z.string().describe('ISO 8601'),
});
export const InvitationOut = z.object({
  id: z.string(),
  email: z.string(),
  role: z.string(),
  expiresAt: z.string(),
  invitedBy: z.object({ id: z.string(), username: z.string() }).nullable(),
  createdAt: z.string(),
});
export const MembershipOut = z.object({ organization: OrganizationOut, role: z.string() });

/** `GET /admin/user/{user_id}/organizations` (svc extension of SPEC-3 §6). */
export const UserParams = z.object({ user_id: UserIdParam });
export const UserMembershipListOut = z.array(
  z.object({
    organization: OrganizationOut.pick({ id: true, slug: true, name: true }),
    role: z.string(),
    joinedAt: z.string().describe('ISO 8601'),
  }),
);

export const OrganizationListOut = z.array(OrganizationWithRoleOut);
export const MemberPageOut = pageSchema(MemberOut);
export const AdminPageOut = pageSchema(OrganizationAdminOut);
export const InvitationListOut = z.array(InvitationOut);
