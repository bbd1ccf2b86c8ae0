import { sql, type SQL } from 'drizzle-orm';
import type { CoreTables, Dialect } from './tables.js';

type PermissionTables = Pick<
  CoreTables,
  'user' | 'permission' | 'userPermission' | 'groupPermission' | 'userGroup'
>;

/**
 * The effective permission codenames of the outer query's user row (SPEC "Permission and group": direct UNION
 * through groups), sorted and aggregated to one JSON text value, so that a user and their permissions come
 * back in one round trip on both dialects (docs/performance.md). Read it with {@link parsePermissionsJson}.
 * @example orm.select({ ...getTableColumns(user), permissionsJson: effectivePermissionsJson(db.dialect, tables) })
 */
export function effectivePermissionsJson(dialect: Dialect, tables: PermissionTables): SQL<string | null> {
  const { user, permission, userPermission, groupPermission, userGroup } = tables;
  const codenames = sql`SELECT ${permission.codename} AS codename FROM ${permission}
      JOIN ${userPermission} ON ${userPermission.permissionId} = ${permission.id}
      WHERE ${userPermission.userId} = ${user.id}
    UNION
    SELECT ${permission.codename} AS codename FROM ${permission}
      JOIN ${groupPermission} ON ${groupPermission.permissionId} = ${permission.id}
      JOIN ${userGroup} ON ${userGroup.groupId} = ${groupPermission.groupId}
      WHERE ${userGroup.userId} = ${user.id}`;
  return dialect === 'pg'
    ? sql`(SELECT json_agg(p.codename ORDER BY p.codename)::text FROM (${codenames}) p)`
    : sql`(SELECT json_group_array(p.codename) FROM (SELECT codename FROM (${codenames}) ORDER BY codename) p)`;
}

/** The codenames of an {@link effectivePermissionsJson} value (null: none). */
export function parsePermissionsJson(json: string | null): string[] {
  return json ? (JSON.parse(json) as string[]) : [];
}
