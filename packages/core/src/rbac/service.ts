import { SvcError } from '../kernel/errors/svc-error.js';
import { hasTranslation, type Translate } from '../kernel/i18n/index.js';
import { isCanonicalUuid } from '../kernel/identity.js';
import type { Logger } from '../kernel/log/logger.js';
import type { Router } from '../kernel/router.js';
import type { CompiledRoute } from '../kernel/routes.js';
import type { EventSink, WebhookOutbox } from '../kernel/ports.js';
import {
  CODENAME_MAX_LENGTH,
  DESCRIPTION_MAX_LENGTH,
  groupDescriptionKey,
  groupLabelKey,
  permissionDescriptionKey,
  permissionLabelKey,
} from './constants.js';
import type { GroupOut, PermissionOut } from './schemas.js';
import type { GroupRow, PermissionRow, PermissionsRecord, RbacStore } from './store.js';

export interface RbacServiceDeps {
  store: RbacStore;
  /** Read at emit time: the events module (or a test probe) provides the sink after rbac's setup. */
  events: () => EventSink;
  /** The webhook outbox (SPEC-3 §3); absent: no webhook events. */
  webhooks?: () => WebhookOutbox;
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

/**
 * A group as the routes answer it, with its permissions and their ids. `shown` keeps each permission's answer
 * for the other groups of one list (a thousand groups share a few dozen permissions; each answer is the same).
 */
export function groupOut(
  row: GroupRow & { permissions: PermissionRow[] },
  t: Translate,
  shown = new Map<number, PermissionOut>(),
): GroupOut {
  const out = (p: PermissionRow) => {
    let answer = shown.get(p.id);
    if (!answer) shown.set(p.id, (answer = permissionOut(p, t)));
    return answer;
  };
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    permissionIds: row.permissions.map((p) => p.id),
    permissions: row.permissions.map(out),
    ...labelled(t, groupLabelKey(row.name), groupDescriptionKey(row.name), row.name, row.description),
  };
}

function notFound(loc: string): SvcError {
  return new SvcError('request.not_found', { loc: ['path', loc] });
}

/**
 * SPEC-3 §3: `permissions.changed {userId}` for each user whose effective permissions a change alters, written
 * in the change's transaction, all users in a bounded number of statements (`recordEach`); undefined while
 * webhooks are off (the store then needs no transaction for it). The routes and `svc groups` / `svc
 * permissions` use it alike.
 */
export function permissionsRecorder(outbox: WebhookOutbox | undefined): PermissionsRecord | undefined {
  if (!outbox?.enabled) return undefined;
  return (tx, userIds) =>
    outbox.recordEach(
      tx,
      'permissions.changed',
      [...new Set(userIds)].map((userId) => ({ userId })),
    );
}

/** The rules of permissions, groups and their links to users (SPEC "Permissions and groups"). */
export function createRbacService({ store, events, webhooks, log }: RbacServiceDeps) {
  const recorder = () => permissionsRecorder(webhooks?.());

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
      const row = await store.updatePermission(id, input, recorder());
      if (!row) throw notFound('perm_id');
      // A renamed codename changes the effective permissions of every holder.
      if (input.codename !== undefined) notify(await store.holdersOfPermission(id));
      return permissionOut(row, t);
    },

    async deletePermission(id: number): Promise<void> {
      const holders = await store.holdersOfPermission(id);
      if (!(await store.deletePermission(id, recorder()))) throw notFound('perm_id');
      notify(holders);
    },

    async listGroups(t: Translate): Promise<GroupOut[]> {
      const shown = new Map<number, PermissionOut>();
      return (await store.listGroups()).map((g) => groupOut(g, t, shown));
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
      const members = await store.updateGroup(id, input, recorder());
      if (!members) throw notFound('group_id');
      notify(members);
      return groupOut((await store.getGroup(id))!, t);
    },

    async deleteGroup(id: number): Promise<void> {
      const members = await store.deleteGroup(id, recorder());
      if (!members) throw notFound('group_id');
      notify(members);
    },

    async groupsOfUser(userId: string, t: Translate): Promise<GroupOut[]> {
      await assertUser(userId);
      return (await store.groupsOfUser(userId)).map((g) => groupOut(g, t));
    },

    async setGroupsOfUser(userId: string, groupIds: number[], t: Translate): Promise<GroupOut[]> {
      await assertUser(userId);
      await store.setGroupsOfUser(userId, groupIds, recorder());
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
      await store.setDirectPermissionsOfUser(userId, permissionIds, recorder());
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

/**
 * The permission codenames the app's compiled routes declare (docs/routers.md "Permissions"): the combined
 * `permissions` of each route as mounted (kernel/routes.ts, the table the guard enforces and
 * `GET /admin/permissions/applications` lists, so the routers a module's setup returns count like
 * `createApp({ routers })`), and the keys of `permissionDescriptions` of each router with a mounted route
 * (codenames a handler checks itself), each with the first description a router gives ('' when none does).
 */
export function declaredPermissions(routes: readonly CompiledRoute[]): Map<string, string> {
  const declared = new Map<string, string>();
  const declare = (codename: string, description = '') => {
    const known = declared.get(codename);
    if (known === undefined || (known === '' && description !== '')) declared.set(codename, description);
  };
  const described = (router: Router) => router.options.permissionDescriptions ?? {};
  for (const route of routes) {
    const descriptions = described(route.router);
    for (const codename of route.requirements.permissions) declare(codename, descriptions[codename] ?? '');
  }
  for (const router of new Set(routes.map((route) => route.router))) {
    for (const [codename, description] of Object.entries(described(router))) declare(codename, description);
  }
  return new Map([...declared].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/** Why a declared codename or description cannot be stored (the column widths), else undefined. */
export function declaredPermissionProblem(codename: string, description: string): string | undefined {
  if (codename.trim() === '' || codename !== codename.trim()) {
    return `'${codename}' is not a codename: empty or with spaces around it`;
  }
  if (codename.length > CODENAME_MAX_LENGTH) {
    return `codename '${codename.slice(0, 40)}…' is longer than ${CODENAME_MAX_LENGTH} characters`;
  }
  if (description.length > DESCRIPTION_MAX_LENGTH) {
    return `the description of '${codename}' is longer than ${DESCRIPTION_MAX_LENGTH} characters`;
  }
  return undefined;
}

/** What {@link syncPermissions} did (or, with `dryRun`, would do). */
export interface PermissionSync {
  /** Declared and not stored: created with the router's description. */
  added: { codename: string; description: string }[];
  /** Stored with another description than the one a router gives: the router's is stored. */
  described: { codename: string; description: string }[];
  /** Stored and declared by no router: kept, or deleted with `prune` (with their group and user links). */
  undeclared: string[];
  pruned: boolean;
}

/**
 * Makes the stored permissions hold every declared codename (docs/cli.md "svc permissions"): creates the
 * missing ones, stores a description a router gives when it differs (a codename without one keeps what an
 * admin wrote), and reports the stored codenames no router declares; `prune` deletes those.
 */
export async function syncPermissions(
  store: RbacStore,
  declared: ReadonlyMap<string, string>,
  options: {
    prune?: boolean;
    dryRun?: boolean;
    /** SPEC-3 §3: `permissions.changed` of the holders of a pruned permission (`permissionsRecorder`). */
    record?: PermissionsRecord;
  } = {},
): Promise<PermissionSync> {
  const stored = new Map((await store.listPermissions()).map((row) => [row.codename, row]));
  const missing = [...declared]
    .filter(([codename]) => !stored.has(codename))
    .map(([codename, description]) => ({ codename, description }));
  const described = [...declared]
    .filter(([codename, description]) => {
      const row = stored.get(codename);
      return row !== undefined && description !== '' && row.description !== description;
    })
    .map(([codename, description]) => ({ codename, description }));
  const undeclared = [...stored.values()].filter((row) => !declared.has(row.codename));
  let added = missing;
  if (!options.dryRun) {
    const inserted = new Set((await store.createMissingPermissions(missing)).map((row) => row.codename));
    added = missing.filter((p) => inserted.has(p.codename));
    for (const p of described) await store.updatePermission(stored.get(p.codename)!.id, p);
    if (options.prune) for (const row of undeclared) await store.deletePermission(row.id, options.record);
  }
  return {
    added,
    described,
    undeclared: undeclared.map((row) => row.codename),
    pruned: Boolean(options.prune && !options.dryRun),
  };
}
