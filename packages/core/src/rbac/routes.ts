import { z } from 'zod';
import type { Settings } from '../kernel/config/schema.js';
import { defineRouter, type Router } from '../kernel/router.js';
import type { CompiledRoute } from '../kernel/routes.js';
import { listApplicationRoutes } from './applications.js';
import {
  ApplicationRouteOut,
  EffectivePermissionsOut,
  GroupCreateBody,
  GroupIdParams,
  GroupOut,
  GroupUpdateBody,
  PermissionCreateBody,
  PermissionIdParams,
  PermissionOut,
  PermissionUpdateBody,
  UserGroupsBody,
  UserIdParams,
  UserPermissionsBody,
} from './schemas.js';
import type { RbacService } from './service.js';

/**
 * SPEC-3 §7 rule 3: a personal token never writes groups or permissions (a superuser's token could otherwise
 * grant any account any power); reading stays open to it.
 */
const WRITE = { allowPersonalToken: false } as const;

/** SPEC "Permissions and groups (superuser only; router can be disabled)". */
export function createRbacRouter(
  service: RbacService,
  application: { routes: () => readonly CompiledRoute[]; settings: Settings },
): Router {
  const r = defineRouter({
    prefix: '/admin/permissions',
    name: 'permissions',
    tags: ['permissions'],
    requireSuperuser: true,
  });

  r.get('/permissions', { summary: 'List permissions', response: z.array(PermissionOut) }, (ctx) =>
    service.listPermissions(ctx.t),
  );
  r.post(
    '/permissions',
    {
      ...WRITE,
      summary: 'Create a permission',
      status: 201,
      body: PermissionCreateBody,
      response: PermissionOut,
    },
    (ctx) => service.createPermission(ctx.body, ctx.t),
  );
  r.put(
    '/permissions/:perm_id',
    {
      ...WRITE,
      summary: 'Update a permission',
      params: PermissionIdParams,
      body: PermissionUpdateBody,
      response: PermissionOut,
    },
    (ctx) => service.updatePermission(ctx.params.perm_id, ctx.body, ctx.t),
  );
  r.delete(
    '/permissions/:perm_id',
    { ...WRITE, summary: 'Delete a permission', status: 204, params: PermissionIdParams },
    (ctx) => service.deletePermission(ctx.params.perm_id),
  );

  r.get('/groups', { summary: 'List groups with their permissions', response: z.array(GroupOut) }, (ctx) =>
    service.listGroups(ctx.t),
  );
  r.post(
    '/groups',
    { ...WRITE, summary: 'Create a group', status: 201, body: GroupCreateBody, response: GroupOut },
    (ctx) => service.createGroup(ctx.body, ctx.t),
  );
  r.put(
    '/groups/:group_id',
    { ...WRITE, summary: 'Update a group', params: GroupIdParams, body: GroupUpdateBody, response: GroupOut },
    (ctx) => service.updateGroup(ctx.params.group_id, ctx.body, ctx.t),
  );
  r.delete(
    '/groups/:group_id',
    { ...WRITE, summary: 'Delete a group', status: 204, params: GroupIdParams },
    (ctx) => service.deleteGroup(ctx.params.group_id),
  );

  r.get(
    '/users/:user_id/groups',
    { summary: "List a user's groups", params: UserIdParams, response: z.array(GroupOut) },
    (ctx) => service.groupsOfUser(ctx.params.user_id, ctx.t),
  );
  r.put(
    '/users/:user_id/groups',
    {
      ...WRITE,
      summary: "Replace a user's groups",
      params: UserIdParams,
      body: UserGroupsBody,
      response: z.array(GroupOut),
    },
    (ctx) => service.setGroupsOfUser(ctx.params.user_id, ctx.body.groupIds, ctx.t),
  );
  r.get(
    '/users/:user_id/permissions',
    { summary: "List a user's direct permissions", params: UserIdParams, response: z.array(PermissionOut) },
    (ctx) => service.directPermissionsOfUser(ctx.params.user_id, ctx.t),
  );
  r.put(
    '/users/:user_id/permissions',
    {
      ...WRITE,
      summary: "Replace a user's direct permissions",
      params: UserIdParams,
      body: UserPermissionsBody,
      response: z.array(PermissionOut),
    },
    (ctx) => service.setDirectPermissionsOfUser(ctx.params.user_id, ctx.body.permissionIds, ctx.t),
  );
  r.get(
    '/users/:user_id/effective',
    { summary: "A user's effective permissions", params: UserIdParams, response: EffectivePermissionsOut },
    (ctx) => service.effectivePermissionsOfUser(ctx.params.user_id),
  );

  r.get(
    '/applications',
    { summary: "List the application's routes", response: z.array(ApplicationRouteOut) },
    async () => listApplicationRoutes(application.routes(), application.settings),
  );
  return r;
}
