// SPEC-3 §2 "Organizations": the form of an organization, its built-in roles and the invitation token.

/** `slug`: 3 to 50 characters of `a-z`, `0-9`, `-`. */
export const SLUG_PATTERN = /^[a-z0-9-]{3,50}$/;
export const SLUG_MAX_LENGTH = 50;
/** `name`: 1 to 100 characters. */
export const NAME_MAX_LENGTH = 100;
/** The built-in roles; a project adds its own with `createApp({ organizationRoles })`. */
export const OWNER = 'owner';
export const ADMIN = 'admin';
export const MEMBER = 'member';
export const BUILTIN_ROLES = [OWNER, ADMIN, MEMBER] as const;
/** Longest role name (the member table's `role` column). */
export const ROLE_MAX_LENGTH = 50;
/** Random bytes of an invitation token (43 base64url characters); only its SHA-256 digest is stored. */
export const INVITATION_TOKEN_BYTES = 32;
/** Counting members beyond this many is not worth a scan: `memberCount` of large lists stays exact below it. */
export const TOTAL_COUNT_BOUND = 10_000;
/** The event of SPEC-3 §2 "Changes of a membership". */
export const MEMBERSHIP_EVENT = 'organization_membership_changed';
