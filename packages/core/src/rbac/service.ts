import { SvcError } from '../kernel/errors/svc-error.js';
import { hasTranslation, type Translate } from '../kernel/i18n/index.js';
import { isCanonicalUuid } from '../kernel/identity.js';
import type { Logger } from '../kernel/log/logger.js';
import type { EventSink } from '../kernel/ports.js';
import {
  groupDescriptionKey,
  groupLabelKey,
  permissionDescriptionKey,
  permissionLabelKey,
} from './constants.js';
import type { GroupOut, PermissionOut } from './schemas.js';
import type { GroupRow, PermissionRow, RbacStore } from './store.js';

export interface RbacServiceDeps {
  store: RbacStore;
  /** Read at emit time: the events module (or a test probe) provides the sink after rbac's setup. */
  events: () => EventSink;
  log: Logger;
}

/** `label`, `localizedDescription` and, when the catalogs hold them, `labelKey`, `descriptionKey`. */
function labelled(
  t: Translate,
  labelKey: string,
  descriptionKey: string,
  fallbackLabel: string,
  description: string,
): { label: string; localizedDescription: string; labelKey?: string; descriptionKey?: string } {
  const hasLabel = hasTranslation(labelKey);
  const hasDescription = hasTranslation(descriptionKey);
  return {
    label: hasLabel ? t(labelKey) : fallbackLabel,
    localizedDescription: hasDescription ? t(descriptionKey) : description,
    ...(hasLabel ? { labelKey } : {}),
    ...(hasDescription ? { descriptionKey } : {}),
  };
}

/** A permission as the routes answer it (stored fields plus labels). */
export function permissionOut(row: PermissionRow, t: Translate): PermissionOut {
  return {
    id: row.id,
    codename: row.codename,
    description: row.description,
    ...labelled(
      t,
      permissionLabelKey(row.codename),
      permissionDescriptionKey(row.codename),
      row.codename,
      row.description,
    ),
  };
}

/** A group as the routes answer it, with its permissions and their ids. */
export function groupOut(row: GroupRow & { permissions: PermissionRow[] }, t: Translate): GroupOut {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    permissionIds: row.permissions.map((p) => p.id),
    permissions: row.permissions.map((p) => permissionOut(p, t)),
    ...labelled(t, groupLabelKey(row.name), groupDescriptionKey(row.name), row.name, row.description),
  };
}

function notFound(loc: string): SvcError {
  return new SvcError('request.not_found', { loc: ['path', loc] });
}

/** The rules of permissions, groups and their links to users (SPEC "Permissions and groups"). */
export function createRbacService({ store, events, log }: RbacServiceDeps) {
  /** SPEC "Permissions and groups": every change of a user's permissions emits `user_permissions_changed`. */
  function notify(userIds: Iterable<string>): void {
    for (const userId of new Set(userIds)) {
      try {
        events().emit('user_permissions_changed', { userId });
      } catch (error) {
        log.error('emitting user_permissions_changed failed', { exc: error, userId });
      }
    }
  }

  async function assertUser(userId: string): Promise<void> {
    // SPEC "Errors": an admin lookup of a missing user is 404 `user.not_found`.
    // The path schema lower-cases a UUID; any other form cannot name a user (and would be a type error on pg).
    if (!isCanonicalUuid(userId) || !(await store.userExists(userId))) {
      throw new SvcError('user.not_found', { status: 404, loc: ['path', 'user_id'] });
    }
  }

  return {
    async listPermissions(t: Translate): Promise<PermissionOut[]> {
      return (await store.listPermissions()).map((p) => permissionOut(p, t));
    },

    async createPermission(
      input: { codename: string; description: string },
      t: Translate,
    ): Promise<PermissionOut> {
      return permissionOut(await store.createPermission(input), t);
    },

    async updatePermission(
      id: number,
      input: { codename?: string; description?: string },
      t: Translate,
    ): Promise<PermissionOut> {
      const row = await store.updatePermission(id, input);
      if (!row) throw notFound('perm_id');
      // A renamed codename changes the effective permissions of every holder.
      if (input.codename !== undefined) notify(await store.holdersOfPermission(id));
      return permissionOut(row, t);
    },

    async deletePermission(id: number): Promise<void> {
      const holders = await store.holdersOfPermission(id);
      if (!(await store.deletePermission(id))) throw notFound('perm_id');
      notify(holders);
    },

    async listGroups(t: Translate): Promise<GroupOut[]> {
      return (await store.listGroups()).map((g) => groupOut(g, t));
    },

    async createGroup(
      input: { name: string; description: string; permissionIds: number[] },
      t: Translate,
    ): Promise<GroupOut> {
      const id = await store.createGroup(input);
      return groupOut((await store.getGroup(id))!, t);
    },

    async updateGroup(
      id: number,
      input: { name?: string; description?: string; permissionIds?: number[] },
      t: Translate,
    ): Promise<GroupOut> {
      const members = await store.updateGroup(id, input);
      if (!members) throw notFound('group_id');
      notify(members);
      return groupOut((await store.getGroup(id))!, t);
    },

    async deleteGroup(id: number): Promise<void> {
      const members = await store.deleteGroup(id);
      if (!members) throw notFound('group_id');
      notify(members);
    },

    async groupsOfUser(userId: string, t: Translate): Promise<GroupOut[]> {
      await assertUser(userId);
      return (await store.groupsOfUser(userId)).map((g) => groupOut(g, t));
    },

    async setGroupsOfUser(userId: string, groupIds: number[], t: Translate): Promise<GroupOut[]> {
      await assertUser(userId);
      await store.setGroupsOfUser(userId, groupIds);
      notify([userId]);
      return (await store.groupsOfUser(userId)).map((g) => groupOut(g, t));
    },

    async directPermissionsOfUser(userId: string, t: Translate): Promise<PermissionOut[]> {
      await assertUser(userId);
      return (await store.directPermissionsOfUser(userId)).map((p) => permissionOut(p, t));
    },

    async setDirectPermissionsOfUser(
      userId: string,
      permissionIds: number[],
      t: Translate,
    ): Promise<PermissionOut[]> {
      await assertUser(userId);
      await store.setDirectPermissionsOfUser(userId, permissionIds);
      notify([userId]);
      return (await store.directPermissionsOfUser(userId)).map((p) => permissionOut(p, t));
    },

    async effectivePermissionsOfUser(userId: string): Promise<{ permissions: string[] }> {
      await assertUser(userId);
      return { permissions: await store.effectivePermissions(userId) };
    },
  };
}

export type RbacService = ReturnType<typeof createRbacService>;
