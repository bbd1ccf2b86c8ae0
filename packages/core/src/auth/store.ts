import { and, eq, getTableColumns, isNull, lte, or, sql, type SQL } from 'drizzle-orm';
import type { Database } from '../kernel/db/database.js';
import type { CoreTables } from '../kernel/db/tables.js';

/** A user row as stored (with the internal attributes of SPEC "User"). */
export type UserRow = CoreTables['user']['$inferSelect'];
export type RefreshRow = CoreTables['refreshToken']['$inferSelect'];
export type UserUpdate = Partial<Omit<CoreTables['user']['$inferInsert'], 'id'>>;

/** Result of counting one attempt on the lockout counter. */
export type AttemptCount =
  | { counted: true; lockedNow: boolean; lockedUntil: Date | null }
  /** Locked (or the user is gone): nothing was counted. */
  | { counted: false };

interface Prepared<T> {
  execute(values?: Record<string, unknown>): PromiseLike<T> | T;
}

/** drizzle names prepared statements on PostgreSQL and ignores the name on SQLite. */
function prepare<T>(query: unknown, name: string): Prepared<T> {
  return (query as { prepare(name: string): Prepared<T> }).prepare(name);
}

/**
 * Every query of the auth feature (STYLE "A feature is one folder": no SQL elsewhere). Hot statements
 * (token to user, login lookup) are prepared once here.
 */
export function createAuthStore(db: Database, tables: CoreTables) {
  const { user, refreshToken, permission, userPermission, groupPermission, userGroup } = tables;
  const orm = db.orm;

  // Effective permission codenames of the outer user row: direct UNION through groups, aggregated to one
  // JSON text value so the user and the permissions come back in one round trip on both dialects.
  const codenames = sql`SELECT ${permission.codename} AS codename FROM ${permission}
      JOIN ${userPermission} ON ${userPermission.permissionId} = ${permission.id}
      WHERE ${userPermission.userId} = ${user.id}
    UNION
    SELECT ${permission.codename} AS codename FROM ${permission}
      JOIN ${groupPermission} ON ${groupPermission.permissionId} = ${permission.id}
      JOIN ${userGroup} ON ${userGroup.groupId} = ${groupPermission.groupId}
      WHERE ${userGroup.userId} = ${user.id}`;
  const permissionsJson: SQL<string | null> =
    db.dialect === 'pg'
      ? sql`(SELECT json_agg(p.codename ORDER BY p.codename)::text FROM (${codenames}) p)`
      : sql`(SELECT json_group_array(p.codename) FROM (SELECT codename FROM (${codenames}) ORDER BY codename) p)`;

  const byId = prepare<UserRow[]>(
    orm
      .select()
      .from(user)
      .where(eq(user.id, sql.placeholder('id'))),
    'svc_auth_user_by_id',
  );
  const byIdWithPermissions = prepare<(UserRow & { permissionsJson: string | null })[]>(
    orm
      .select({ ...getTableColumns(user), permissionsJson })
      .from(user)
      .where(eq(user.id, sql.placeholder('id'))),
    'svc_auth_user_by_id_perms',
  );
  const byUsername = prepare<UserRow[]>(
    orm
      .select()
      .from(user)
      .where(eq(user.username, sql.placeholder('username'))),
    'svc_auth_user_by_username',
  );

  const parsePermissions = (json: string | null): string[] => (json ? (JSON.parse(json) as string[]) : []);

  return {
    async userById(id: string): Promise<UserRow | undefined> {
      return (await byId.execute({ id }))[0];
    },
    /** The user and their effective permission codenames, in one query. */
    async userWithPermissions(id: string): Promise<(UserRow & { permissions: string[] }) | undefined> {
      const row = (await byIdWithPermissions.execute({ id }))[0];
      if (!row) return undefined;
      const { permissionsJson: json, ...rest } = row;
      return { ...rest, permissions: parsePermissions(json) };
    },
    async permissionsOf(id: string): Promise<string[]> {
      const row = (await byIdWithPermissions.execute({ id }))[0];
      return row ? parsePermissions(row.permissionsJson) : [];
    },
    async userByUsername(username: string): Promise<UserRow | undefined> {
      return (await byUsername.execute({ username }))[0];
    },
    async userByEmail(email: string): Promise<UserRow | undefined> {
      return (await orm.select().from(user).where(eq(user.email, email)).limit(1))[0];
    },
    async firstSuperuser(): Promise<UserRow | undefined> {
      const rows = await orm
        .select()
        .from(user)
        .where(and(eq(user.isSuperuser, true), eq(user.isActive, true)))
        .orderBy(user.createdAt)
        .limit(1);
      return rows[0];
    },
    async insertUser(values: CoreTables['user']['$inferInsert']): Promise<UserRow> {
      const [row] = await orm.insert(user).values(values).returning();
      return row!;
    },
    async updateUser(id: string, values: UserUpdate): Promise<UserRow | undefined> {
      const [row] = await orm.update(user).set(values).where(eq(user.id, id)).returning();
      return row;
    },

    /**
     * Counts one attempt on the lockout counter in ONE conditional statement (SPEC "Account login lock":
     * counted atomically before the password check). Only an unlocked account is counted; the attempt that
     * reaches `max` locks until `lockUntil` and resets the counter, so parallel attempts never exceed `max`.
     */
    async countAttempt(id: string, max: number, now: Date, lockUntil: Date): Promise<AttemptCount> {
      const reaches = sql`${user.failedLoginCount} + 1 >= ${max}`;
      const rows = await orm
        .update(user)
        .set({
          failedLoginCount: sql`CASE WHEN ${reaches} THEN 0 ELSE ${user.failedLoginCount} + 1 END`,
          lockedUntil: sql`CASE WHEN ${reaches} THEN ${sql.param(lockUntil, user.lockedUntil)} ELSE ${user.lockedUntil} END`,
        })
        .where(and(eq(user.id, id), or(isNull(user.lockedUntil), lte(user.lockedUntil, now))))
        .returning({ count: user.failedLoginCount, lockedUntil: user.lockedUntil });
      const row = rows[0];
      if (!row) return { counted: false };
      const lockedNow = row.lockedUntil !== null && row.lockedUntil.getTime() > now.getTime();
      return { counted: true, lockedNow, lockedUntil: row.lockedUntil };
    },
    /**
     * A correct password: resets the counter, and lifts the lock when this very attempt set it
     * (`ownLock`): the attempt that reached the maximum was still one of the allowed ones.
     */
    async resetAttempts(id: string, ownLock: Date | null): Promise<void> {
      const values: UserUpdate = ownLock
        ? { failedLoginCount: 0, lockedUntil: null }
        : { failedLoginCount: 0 };
      const where = ownLock ? and(eq(user.id, id), eq(user.lockedUntil, ownLock)) : eq(user.id, id);
      await orm.update(user).set(values).where(where).returning({ id: user.id });
    },

    async insertRefresh(values: {
      jti: string;
      family: string;
      userId: string;
      expiresAt: Date;
    }): Promise<void> {
      await orm.insert(refreshToken).values(values).returning({ jti: refreshToken.jti });
    },
    /**
     * The rotation swap (SPEC "Refresh token and login"): ONE conditional statement, so of two concurrent
     * refreshes with the same token exactly one gets the row back.
     */
    async spendRefresh(jti: string, now: Date): Promise<RefreshRow | undefined> {
      const [row] = await orm
        .update(refreshToken)
        .set({ spentAt: now })
        .where(and(eq(refreshToken.jti, jti), isNull(refreshToken.spentAt)))
        .returning();
      return row;
    },
    async refreshByJti(jti: string): Promise<RefreshRow | undefined> {
      return (await orm.select().from(refreshToken).where(eq(refreshToken.jti, jti)).limit(1))[0];
    },
    async deleteFamily(family: string): Promise<void> {
      await orm
        .delete(refreshToken)
        .where(eq(refreshToken.family, family))
        .returning({ jti: refreshToken.jti });
    },
    async deleteRefreshOf(userId: string): Promise<void> {
      await orm
        .delete(refreshToken)
        .where(eq(refreshToken.userId, userId))
        .returning({ jti: refreshToken.jti });
    },
    /** Expired records of one user (housekeeping at login; they are refused by their JWT `exp` anyway). */
    async deleteExpiredRefreshOf(userId: string, now: Date): Promise<void> {
      await orm
        .delete(refreshToken)
        .where(and(eq(refreshToken.userId, userId), lte(refreshToken.expiresAt, now)))
        .returning({ jti: refreshToken.jti });
    },
  };
}

export type AuthStore = ReturnType<typeof createAuthStore>;
