import { and, eq, getTableColumns, isNull, lte, or, sql, type SQL } from 'drizzle-orm';
import type { Database } from '../kernel/db/database.js';
import type { CoreTables } from '../kernel/db/tables.js';

/** A user row as stored (with the internal attributes of SPEC "User"). */
export type UserRow = CoreTables['user']['$inferSelect'];
export type RefreshRow = CoreTables['refreshToken']['$inferSelect'];
/** A new refresh record (SPEC "Refresh token and login"). */
export interface NewRefresh {
  jti: string;
  family: string;
  userId: string;
  expiresAt: Date;
}
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

  // Refresh rotation (issue 9): built and prepared once; the values arrive as placeholders, which drizzle
  // encodes through the column (timestamps per dialect). `createdAt` is passed, not left to the column's
  // `$defaultFn`, which a prepared statement would evaluate once, at prepare time.
  const spendStatement = prepare<RefreshRow[]>(
    orm
      .update(refreshToken)
      .set({ spentAt: sql.placeholder('now') as unknown as Date })
      .where(and(eq(refreshToken.jti, sql.placeholder('jti')), isNull(refreshToken.spentAt)))
      .returning(),
    'svc_auth_refresh_spend',
  );
  const insertRefreshStatement = prepare<unknown>(
    orm
      .insert(refreshToken)
      .values({
        jti: sql.placeholder('jti'),
        family: sql.placeholder('family'),
        userId: sql.placeholder('userId'),
        expiresAt: sql.placeholder('expiresAt'),
        createdAt: sql.placeholder('createdAt'),
      })
      .returning({ jti: refreshToken.jti }),
    'svc_auth_refresh_insert',
  );
  const refreshByJtiStatement = prepare<RefreshRow[]>(
    orm
      .select()
      .from(refreshToken)
      .where(eq(refreshToken.jti, sql.placeholder('jti')))
      .limit(1),
    'svc_auth_refresh_by_jti',
  );
  // The writes of every login (issue 9): counted attempt, reset, housekeeping and the login record, built and
  // prepared once like the statements above. A Date placeholder outside `set()` is wrapped in its column's
  // encoder (`sql.param`), as drizzle does for literal values.
  const dateParam = <T>(name: string, column: T) => sql.param(sql.placeholder(name), column as never);
  const reaches = sql`${user.failedLoginCount} + 1 >= ${sql.placeholder('max')}`;
  const countAttemptStatement = prepare<{ count: number; lockedUntil: Date | null }[]>(
    orm
      .update(user)
      .set({
        failedLoginCount: sql`CASE WHEN ${reaches} THEN 0 ELSE ${user.failedLoginCount} + 1 END`,
        lockedUntil: sql`CASE WHEN ${reaches} THEN ${dateParam('lockUntil', user.lockedUntil)} ELSE ${user.lockedUntil} END`,
      })
      .where(
        and(
          eq(user.id, sql.placeholder('id')),
          or(isNull(user.lockedUntil), lte(user.lockedUntil, dateParam('now', user.lockedUntil))),
        ),
      )
      .returning({ count: user.failedLoginCount, lockedUntil: user.lockedUntil }),
    'svc_auth_count_attempt',
  );
  const resetStatement = prepare<unknown>(
    orm
      .update(user)
      .set({ failedLoginCount: 0 })
      .where(eq(user.id, sql.placeholder('id')))
      .returning({ id: user.id }),
    'svc_auth_reset_attempts',
  );
  const resetOwnLockStatement = prepare<unknown>(
    orm
      .update(user)
      .set({ failedLoginCount: 0, lockedUntil: null })
      .where(
        and(eq(user.id, sql.placeholder('id')), eq(user.lockedUntil, dateParam('ownLock', user.lockedUntil))),
      )
      .returning({ id: user.id }),
    'svc_auth_reset_own_lock',
  );
  const deleteExpiredStatement = prepare<unknown>(
    orm
      .delete(refreshToken)
      .where(
        and(
          eq(refreshToken.userId, sql.placeholder('userId')),
          lte(refreshToken.expiresAt, dateParam('now', refreshToken.expiresAt)),
        ),
      )
      .returning({ jti: refreshToken.jti }),
    'svc_auth_refresh_delete_expired',
  );
  const recordLoginStatement = prepare<unknown>(
    orm
      .update(user)
      .set({ lastLoginAt: sql.placeholder('at') as unknown as Date, failedLoginCount: 0 })
      .where(eq(user.id, sql.placeholder('id')))
      .returning({ id: user.id }),
    'svc_auth_record_login',
  );
  const refreshValues = (values: NewRefresh, now = new Date()) => ({
    jti: values.jti,
    family: values.family,
    userId: values.userId,
    expiresAt: values.expiresAt,
    createdAt: now,
  });

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
      const row = (await countAttemptStatement.execute({ id, max, now, lockUntil }))[0];
      if (!row) return { counted: false };
      const lockedNow = row.lockedUntil !== null && row.lockedUntil.getTime() > now.getTime();
      return { counted: true, lockedNow, lockedUntil: row.lockedUntil };
    },
    /**
     * A correct password: resets the counter, and lifts the lock when this very attempt set it
     * (`ownLock`): the attempt that reached the maximum was still one of the allowed ones.
     */
    async resetAttempts(id: string, ownLock: Date | null): Promise<void> {
      if (ownLock) await resetOwnLockStatement.execute({ id, ownLock });
      else await resetStatement.execute({ id });
    },

    /**
     * The rotation swap (SPEC "Refresh token and login"): ONE conditional statement, so of two concurrent
     * refreshes with the same token exactly one gets the row back.
     */
    async spendRefresh(jti: string, now: Date): Promise<RefreshRow | undefined> {
      return (await spendStatement.execute({ jti, now }))[0];
    },
    /**
     * Spends `jti` and stores its successor, which `replace` builds from the spent row (undefined: store
     * none). Single winner as in {@link spendRefresh}: the successor is only built for the one refresh that
     * spent the row. On SQLite both writes share one commit (issue 9: a refresh was two commits); the kernel's
     * SQLite transaction holds the write lock, so the conditional UPDATE still decides the winner. On
     * PostgreSQL the prepared statements live on the pool, not on a transaction's connection, so they run
     * one after the other as before.
     */
    async rotateRefresh(
      jti: string,
      now: Date,
      replace: (spent: RefreshRow) => NewRefresh | undefined,
    ): Promise<RefreshRow | undefined> {
      const rotate = async () => {
        const spent = (await spendStatement.execute({ jti, now }))[0];
        const next = spent && replace(spent);
        if (next) await insertRefreshStatement.execute(refreshValues(next, now));
        return spent;
      };
      return db.dialect === 'sqlite' ? db.transaction(rotate) : rotate();
    },
    async refreshByJti(jti: string): Promise<RefreshRow | undefined> {
      return (await refreshByJtiStatement.execute({ jti }))[0];
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
    /**
     * The writes of a completed login: the user's expired refresh records go (housekeeping; their JWT `exp`
     * refuses them anyway), the new record is stored, the login is recorded and the lockout counter reset
     * (SPEC "Account login lock"). One commit on SQLite (issue 9: it was three); on PostgreSQL the prepared
     * statements run one after the other, as in {@link rotateRefresh}.
     */
    async recordLogin(userId: string, at: Date, refresh: NewRefresh): Promise<void> {
      const write = async () => {
        await deleteExpiredStatement.execute({ userId, now: at });
        await insertRefreshStatement.execute(refreshValues(refresh, at));
        await recordLoginStatement.execute({ id: userId, at });
      };
      await (db.dialect === 'sqlite' ? db.transaction(write) : write());
    },
  };
}

export type AuthStore = ReturnType<typeof createAuthStore>;
