import { z } from 'zod';
import { UserIdParam } from '../kernel/identity.js';
import { CODENAME_MAX_LENGTH, DESCRIPTION_MAX_LENGTH, GROUP_NAME_MAX_LENGTH, MAX_ID } from './constants.js';

/** An integer id of a permission or group (column type `integer` on both dialects). */
const Id = z.coerce.number().int().min(1).max(MAX_ID);
/** A list of ids; duplicates collapse (a repeated id is the same link, not a conflict). */
const IdList = z
  .array(z.number().int().min(1).max(MAX_ID))
  .max(10_000)
  .transform((ids) => [...new Set(ids)]);

export const PermissionIdParams = z.object({ perm_id: Id });
export const GroupIdParams = z.object({ group_id: Id });
/** Lower-cased when a UUID (kernel/identity.ts); the service answers 404 `user.not_found` for unknown ids. */
export const UserIdParams = z.object({ user_id: UserIdParam });

export const PermissionCreateBody = z.object({
  codename: z.string().trim().min(1).max(CODENAME_MAX_LENGTH),
  description: z.string().max(DESCRIPTION_MAX_LENGTH).default(''),
});

export const PermissionUpdateBody = z.object({
  codename: z.string().trim().min(1).max(CODENAME_MAX_LENGTH).optional(),
  description: z.string().max(DESCRIPTION_MAX_LENGTH).optional(),
});

export const GroupCreateBody = z.object({
  name: z.string().trim().min(1).max(GROUP_NAME_MAX_LENGTH),
  description: z.string().max(DESCRIPTION_MAX_LENGTH).default(''),
  permissionIds: IdList.default([]),
});

export const GroupUpdateBody = z.object({
  name: z.string().trim().min(1).max(GROUP_NAME_MAX_LENGTH).optional(),
  description: z.string().max(DESCRIPTION_MAX_LENGTH).optional(),
  /** Replaces the group's permissions when given. */
  permissionIds: IdList.optional(),
});

export const UserGroupsBody = z.object({ groupIds: IdList });
export const UserPermissionsBody = z.object({ permissionIds: IdList });

const Labels = {
  label: z.string(),
  localizedDescription: z.string(),
  labelKey: z.string().optional(),
  descriptionKey: z.string().optional(),
};

export const PermissionOut = z.object({
  id: z.number().int(),
  codename: z.string(),
  description: z.string(),
  ...Labels,
});
export type PermissionOut = z.infer<typeof PermissionOut>;

export const GroupOut = z.object({
  id: z.number().int(),
  name: z.string(),
  description: z.string(),
  permissionIds: z.array(z.number().int()),
  permissions: z.array(PermissionOut),
  ...Labels,
});
export type GroupOut = z.infer<typeof GroupOut>;

export const EffectivePermissionsOut = z.object({ permissions: z.array(z.string()) });

export const ApplicationRouteOut = z.object({
  path: z.string(),
  name: z.string(),
  methods: z.array(z.string()),
  summary: z.string().nullable(),
  tags: z.array(z.string()),
});
export type ApplicationRouteOut = z.infer<typeof ApplicationRouteOut>;
