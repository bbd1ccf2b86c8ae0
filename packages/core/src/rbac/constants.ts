/** Column widths of the permission and group tables (`kernel/db/tables.ts`). */
export const CODENAME_MAX_LENGTH = 150;
export const GROUP_NAME_MAX_LENGTH = 150;
export const DESCRIPTION_MAX_LENGTH = 500;

/** Largest value of an `integer` id column (PostgreSQL int4); larger ids cannot exist. */
export const MAX_ID = 2_147_483_647;

/**
 * SPEC "Permissions and groups": routes under these prefixes (relative to `/api` + `api_v1_prefix`) are core
 * routes and are left out of `GET /admin/permissions/applications`.
 */
export const CORE_ROUTE_PREFIXES = ['/auth', '/admin', '/health', '/version'] as const;

/**
 * Translation keys of permission and group texts (SPEC "Permission and group": `labelKey`, `descriptionKey`
 * when the identifier is a translation key). A project adds them with `addTranslations`.
 */
export const permissionLabelKey = (codename: string) => `permissions.${codename}.label`;
export const permissionDescriptionKey = (codename: string) => `permissions.${codename}.description`;
export const groupLabelKey = (name: string) => `groups.${name}.label`;
export const groupDescriptionKey = (name: string) => `groups.${name}.description`;
