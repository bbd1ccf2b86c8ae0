import { and, asc, count, eq, inArray, or, sql } from 'drizzle-orm';
import type { Database, Orm } from '../kernel/db/database.js';
import { allIn, forUpdate } from '../kernel/db/sql.js';
import type { CoreTables } from '../kernel/db/tables.js';

/** A permission row (SPEC "Permission and group"). */
export interface PermissionRow {
  id: number;
  codename: string;
  description: string;
}

/** A group row with the ids of its permissions. */
export interface GroupRow {
  id: number;
  name: string;
  description: string;
}

/** Every query on the permission, group and link tables; no SQL elsewhere in rbac. */
/** SPEC-3 §3: writes `permissions.changed` for these users in the change's transaction (the webhook outbox). */
export type PermissionsRecord = (tx: Orm, userIds: string[]) => Promise<void>;

export function createRbacStore(db: Database, tables: CoreTables) {
  const { user, group, permission, groupPermission, userGroup, userPermission } = tables;
  const orm = db.orm;

  /**
   * Locks the user's row for the rest of `tx` (PostgreSQL; SQLite's write transaction holds the database), so
   * that two replacements of one user's set run one after the other instead of failing on each other's rows.
   */
  async function lockUser(tx: Orm, userId: string): Promise<void> {
    await forUpdate(db.dialect, tx.select({ id: user.id }).from(user).where(eq(user.id, userId)));
  }

  /** Permissions of the given groups, by group id (one query); a group without any has an empty list. */
  async function permissionsOfGroups(
    groupIds: number[],
    q: Orm = orm,
  ): Promise<Map<number, PermissionRow[]>> {
    const byGroup = new Map<number, PermissionRow[]>(groupIds.map((id) => [id, []]));
    if (groupIds.length === 0) return byGroup;
    // Plain rows, as the driver gives them (allIn): the fields need no decoding.
    const rows = await allIn<{ groupId: number; id: number; codename: string; description: string }>(
      q,
      db.dialect,
      sql`select ${groupPermission.groupId} as "groupId", ${permission.id} as "id",
          ${permission.codename} as "codename", ${permission.description} as "description"
        from ${groupPermission} inner join ${permission} on ${permission.id} = ${groupPermission.permissionId}
        where ${inArray(groupPermission.groupId, groupIds)}
        order by ${permission.codename}`,
    );
    for (const { groupId, ...perm } of rows) {
      byGroup.get(groupId)!.push(perm);
    }
    return byGroup;
  }

  /** Users whose effective permissions include the permission (directly or through a group), one query. */
  async function holdersOf(id: number, q: Orm = orm): Promise<string[]> {
    const direct = q
      .select({ userId: userPermission.userId })
      .from(userPermission)
      .where(eq(userPermission.permissionId, id));
    const viaGroup = q
      .select({ userId: userGroup.userId })
      .from(userGroup)
      .innerJoin(groupPermission, eq(groupPermission.groupId, userGroup.groupId))
      .where(eq(groupPermission.permissionId, id));
    const rows = await direct.union(viaGroup);
    return rows.map((r) => r.userId);
  }

  /** Ids of users who hold a link to the group. */
  async function membersOf(groupId: number, q: Orm = orm): Promise<string[]> {
    const rows = await q
      .select({ userId: userGroup.userId })
      .from(userGroup)
      .where(eq(userGroup.groupId, groupId));
    return rows.map((r) => r.userId);
  }

  /** `work` in a transaction when there is an event to record with it, else as its one statement. */
  function inTransactionWhen<T>(record: PermissionsRecord | undefined, work: (q: Orm) => Promise<T>) {
    return record ? db.transaction(work) : work(orm);
  }

  return {
    listPermissions(): Promise<PermissionRow[]> {
      return orm.select().from(permission).orderBy(asc(permission.codename));
    },

    async createPermission(values: { codename: string; description: string }): Promise<PermissionRow> {
      const [row] = await orm.insert(permission).values(values).returning();
      return row!;
    },

    /**
     * Changes a permission; `record` (SPEC-3 §3) gets its holders in the same transaction when the codename
     * changed: a renamed codename changes the effective permissions of every holder.
     */
    async updatePermission(
      id: number,
      values: { codename?: string; description?: string },
      record?: PermissionsRecord,
    ): Promise<PermissionRow | undefined> {
      if (values.codename === undefined && values.description === undefined) {
        const [row] = await orm.select().from(permission).where(eq(permission.id, id));
        return row;
      }
      if (values.codename === undefined || !record) {
        const [row] = await orm.update(permission).set(values).where(eq(permission.id, id)).returning();
        return row;
      }
      return db.transaction(async (tx) => {
        const [before] = await tx
          .select({ codename: permission.codename })
          .from(permission)
          .where(eq(permission.id, id));
        const [row] = await tx.update(permission).set(values).where(eq(permission.id, id)).returning();
        if (row && before && before.codename !== row.codename) await record(tx, await holdersOf(id, tx));
        return row;
      });
    },

    /**
     * Creates the permissions whose codename is not stored yet; a codename created meanwhile by someone else is
     * skipped (unique column). Returns the rows this call inserted.
     */
    async createMissingPermissions(
      values: { codename: string; description: string }[],
    ): Promise<PermissionRow[]> {
      if (values.length === 0) return [];
      return orm.insert(permission).values(values).onConflictDoNothing().returning();
    },

    /** The stored permissions among `codenames`, by codename order. */
    permissionsByCodename(codenames: string[]): Promise<PermissionRow[]> {
      if (codenames.length === 0) return Promise.resolve([]);
      return orm
        .select()
        .from(permission)
        .where(inArray(permission.codename, codenames))
        .orderBy(asc(permission.codename));
    },

    /**
     * Deletes a permission (its group and user links cascade); `record` gets its former holders in the same
     * transaction (SPEC-3 §3).
     */
    async deletePermission(id: number, record?: PermissionsRecord): Promise<boolean> {
      const remove = (q: Orm) =>
        q.delete(permission).where(eq(permission.id, id)).returning({ id: permission.id });
      if (!record) return (await remove(orm)).length > 0;
      return db.transaction(async (tx) => {
        const holders = await holdersOf(id, tx);
        const rows = await remove(tx);
        if (rows.length > 0) await record(tx, holders);
        return rows.length > 0;
      });
    },

    /** Users whose effective permissions include the permission (directly or through a group). */
    holdersOfPermission: (id: number): Promise<string[]> => holdersOf(id),

    /**
     * Every group with its permissions (in codename order), in two reads: a row a group with its permissions'
     * ids (`string_agg`, on PostgreSQL and on SQLite from 3.44), and each permission that some group holds,
     * once. The console's budget has 1,000 groups of 5 permissions: as 5,000 joined rows of the permissions'
     * text, the driver's reading of them was the largest part of the server's time for the list
     * (docs/performance.md "The groups list in two reads").
     */
    async listGroups(): Promise<(GroupRow & { permissions: PermissionRow[] })[]> {
      const [groups, perms] = await Promise.all([
        allIn<GroupRow & { ids: string | null }>(
          orm,
          db.dialect,
          sql`select ${group.id} as "id", ${group.name} as "name", ${group.description} as "description",
              string_agg(cast(${groupPermission.permissionId} as text), ',' order by ${permission.codename}) as "ids"
            from ${group}
              left join ${groupPermission} on ${groupPermission.groupId} = ${group.id}
              left join ${permission} on ${permission.id} = ${groupPermission.permissionId}
            group by ${group.id}, ${group.name}, ${group.description}
            order by ${group.name}`,
        ),
        allIn<PermissionRow>(
          orm,
          db.dialect,
          sql`select ${permission.id} as "id", ${permission.codename} as "codename",
              ${permission.description} as "description"
            from ${permission}
            where ${permission.id} in (select ${groupPermission.permissionId} from ${groupPermission})`,
        ),
      ]);
      const byId = new Map(perms.map((p) => [p.id, p]));
      return groups.map((g) => {
        const permissions: PermissionRow[] = [];
        for (const id of g.ids?.split(',') ?? []) {
          // A link written between the two reads names a permission the second did not see: left out, as if
          // read a moment earlier.
          const found = byId.get(Number(id));
          if (found) permissions.push(found);
        }
        return { id: g.id, name: g.name, description: g.description, permissions };
      });
    },

    async getGroup(id: number): Promise<(GroupRow & { permissions: PermissionRow[] }) | undefined> {
      const [row] = await orm.select().from(group).where(eq(group.id, id));
      if (!row) return undefined;
      return { ...row, permissions: (await permissionsOfGroups([id])).get(id) ?? [] };
    },

    /** Creates a group with its permissions, atomically. */
    createGroup(values: { name: string; description: string; permissionIds: number[] }): Promise<number> {
      return db.transaction(async (tx) => {
        const [row] = await tx
          .insert(group)
          .values({ name: values.name, description: values.description })
          .returning({ id: group.id });
        if (values.permissionIds.length > 0) {
          await tx
            .insert(groupPermission)
            .values(values.permissionIds.map((permissionId) => ({ groupId: row!.id, permissionId })));
        }
        return row!.id;
      });
    },

    /**
     * Updates a group; `permissionIds`, when given, replaces its permissions (same transaction).
     * Returns the member ids, or undefined when the group does not exist.
     */
    updateGroup(
      id: number,
      values: { name?: string; description?: string; permissionIds?: number[] },
      record?: PermissionsRecord,
    ): Promise<string[] | undefined> {
      return db.transaction(async (tx) => {
        const fields = Object.fromEntries(
          Object.entries({ name: values.name, description: values.description }).filter(
            ([, v]) => v !== undefined,
          ),
        );
        // The group's row is locked first (the UPDATE locks it, the select FOR UPDATE when only the
        // permissions change): two replacements at once then run one after the other instead of both deleting
        // the old rows and the second failing on the first's inserts (409 `db.conflict`).
        const found =
          Object.keys(fields).length > 0
            ? await tx.update(group).set(fields).where(eq(group.id, id)).returning({ id: group.id })
            : await forUpdate(db.dialect, tx.select({ id: group.id }).from(group).where(eq(group.id, id)));
        if (found.length === 0) return undefined;
        if (values.permissionIds) {
          await tx.delete(groupPermission).where(eq(groupPermission.groupId, id));
          if (values.permissionIds.length > 0) {
            await tx
              .insert(groupPermission)
              .values(values.permissionIds.map((permissionId) => ({ groupId: id, permissionId })));
          }
        }
        const members = await membersOf(id, tx);
        if (values.permissionIds && record) await record(tx, members);
        return members;
      });
    },

    /** Deletes a group; returns its former members, or undefined when it did not exist. */
    deleteGroup(id: number, record?: PermissionsRecord): Promise<string[] | undefined> {
      return db.transaction(async (tx) => {
        const members = await membersOf(id, tx);
        const rows = await tx.delete(group).where(eq(group.id, id)).returning({ id: group.id });
        if (rows.length > 0 && record) await record(tx, members);
        return rows.length > 0 ? members : undefined;
      });
    },

    async groupByName(name: string): Promise<GroupRow | undefined> {
      const [row] = await orm.select().from(group).where(eq(group.name, name));
      return row;
    },

    /** Number of members of each group that has any. */
    async memberCounts(): Promise<Map<number, number>> {
      const rows = await orm
        .select({ groupId: userGroup.groupId, members: count() })
        .from(userGroup)
        .groupBy(userGroup.groupId);
      return new Map(rows.map((r) => [r.groupId, Number(r.members)]));
    },

    /**
     * Adds permissions to a group, keeping the ones it has; returns the ids it did not hold before. `record`
     * gets the group's members in the same transaction when it gained any (SPEC-3 §3).
     */
    async grantToGroup(
      groupId: number,
      permissionIds: number[],
      record?: PermissionsRecord,
    ): Promise<number[]> {
      if (permissionIds.length === 0) return [];
      return inTransactionWhen(record, async (q) => {
        const rows = await q
          .insert(groupPermission)
          .values(permissionIds.map((permissionId) => ({ groupId, permissionId })))
          .onConflictDoNothing()
          .returning({ permissionId: groupPermission.permissionId });
        if (rows.length > 0 && record) await record(q, await membersOf(groupId, q));
        return rows.map((r) => r.permissionId);
      });
    },

    /** Takes permissions from a group; returns the ids it held. `record`: as for {@link grantToGroup}. */
    async revokeFromGroup(
      groupId: number,
      permissionIds: number[],
      record?: PermissionsRecord,
    ): Promise<number[]> {
      if (permissionIds.length === 0) return [];
      return inTransactionWhen(record, async (q) => {
        const rows = await q
          .delete(groupPermission)
          .where(
            and(eq(groupPermission.groupId, groupId), inArray(groupPermission.permissionId, permissionIds)),
          )
          .returning({ permissionId: groupPermission.permissionId });
        if (rows.length > 0 && record) await record(q, await membersOf(groupId, q));
        return rows.map((r) => r.permissionId);
      });
    },

    /** Makes the user a member of the group; false when they already were. `record` gets the user then. */
    async addUserToGroup(userId: string, groupId: number, record?: PermissionsRecord): Promise<boolean> {
      return inTransactionWhen(record, async (q) => {
        const rows = await q
          .insert(userGroup)
          .values({ userId, groupId })
          .onConflictDoNothing()
          .returning({ userId: userGroup.userId });
        if (rows.length > 0 && record) await record(q, [userId]);
        return rows.length > 0;
      });
    },

    /** Ends the user's membership of the group; false when they were not a member. `record`: as above. */
    async removeUserFromGroup(userId: string, groupId: number, record?: PermissionsRecord): Promise<boolean> {
      return inTransactionWhen(record, async (q) => {
        const rows = await q
          .delete(userGroup)
          .where(and(eq(userGroup.userId, userId), eq(userGroup.groupId, groupId)))
          .returning({ userId: userGroup.userId });
        if (rows.length > 0 && record) await record(q, [userId]);
        return rows.length > 0;
      });
    },

    async userExists(userId: string): Promise<boolean> {
      const rows = await orm.select({ id: user.id }).from(user).where(eq(user.id, userId));
      return rows.length > 0;
    },

    async groupsOfUser(userId: string): Promise<(GroupRow & { permissions: PermissionRow[] })[]> {
      const groups = await orm
        .select({ id: group.id, name: group.name, description: group.description })
        .from(userGroup)
        .innerJoin(group, eq(group.id, userGroup.groupId))
        .where(eq(userGroup.userId, userId))
        .orderBy(asc(group.name));
      const perms = await permissionsOfGroups(groups.map((g) => g.id));
      return groups.map((g) => ({ ...g, permissions: perms.get(g.id) ?? [] }));
    },

    /** Replaces the user's groups in one transaction (a dangling id rolls everything back). */
    setGroupsOfUser(userId: string, groupIds: number[], record?: PermissionsRecord): Promise<void> {
      return db.transaction(async (tx) => {
        await lockUser(tx, userId);
        await tx.delete(userGroup).where(eq(userGroup.userId, userId));
        if (groupIds.length > 0)
          await tx.insert(userGroup).values(groupIds.map((groupId) => ({ userId, groupId })));
        await record?.(tx, [userId]);
      });
    },

    directPermissionsOfUser(userId: string): Promise<PermissionRow[]> {
      return orm
        .select({ id: permission.id, codename: permission.codename, description: permission.description })
        .from(userPermission)
        .innerJoin(permission, eq(permission.id, userPermission.permissionId))
        .where(eq(userPermission.userId, userId))
        .orderBy(asc(permission.codename));
    },

    /** Replaces the user's direct permissions in one transaction. */
    setDirectPermissionsOfUser(
      userId: string,
      permissionIds: number[],
      record?: PermissionsRecord,
    ): Promise<void> {
      return db.transaction(async (tx) => {
        await lockUser(tx, userId);
        await tx.delete(userPermission).where(eq(userPermission.userId, userId));
        if (permissionIds.length > 0) {
          await tx
            .insert(userPermission)
            .values(permissionIds.map((permissionId) => ({ userId, permissionId })));
        }
        await record?.(tx, [userId]);
      });
    },

    /**
     * SPEC "Permission and group": effective permissions = union of the permissions of the user's groups and
     * their direct permissions, in one query.
     */
    async effectivePermissions(userId: string): Promise<string[]> {
      const direct = orm
        .select({ id: userPermission.permissionId })
        .from(userPermission)
        .where(eq(userPermission.userId, userId));
      const viaGroups = orm
        .select({ id: groupPermission.permissionId })
        .from(groupPermission)
        .innerJoin(userGroup, eq(userGroup.groupId, groupPermission.groupId))
        .where(eq(userGroup.userId, userId));
      const rows = await orm
        .select({ codename: permission.codename })
        .from(permission)
        .where(or(inArray(permission.id, direct), inArray(permission.id, viaGroups)))
        .orderBy(asc(permission.codename));
      return rows.map((r) => r.codename);
    },
  };
}

export type RbacStore = ReturnType<typeof createRbacStore>;
