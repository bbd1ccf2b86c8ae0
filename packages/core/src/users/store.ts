import { and, count, eq, ne, or, sql, type SQL, type SQLWrapper } from 'drizzle-orm';
import type { Database, Orm } from '../kernel/db/database.js';
import type { CoreTables, Dialect } from '../kernel/db/tables.js';
import { sameEmail } from '../kernel/identity.js';
import { likePattern } from '../kernel/pagination.js';

type UserTable = CoreTables['user'];
export type StoredUser = UserTable['$inferSelect'];
/** Columns the admin routes may change. */
export type UserChanges = Partial<
  Pick<
    StoredUser,
    | 'email'
    | 'emailVerifiedAt'
    | 'firstName'
    | 'lastName'
    | 'passwordHash'
    | 'passwordChangedAt'
    | 'failedLoginCount'
    | 'lockedUntil'
    | 'isActive'
    | 'isStaff'
    | 'isSuperuser'
  >
>;

/** The sortable columns of `GET /admin/user`, by their camelCase `orderBy` name. */
export function sortableUserColumns(user: UserTable) {
  return {
    username: user.username,
    email: user.email,
    firstName: user.firstName,
    lastName: user.lastName,
    isActive: user.isActive,
    isStaff: user.isStaff,
    isSuperuser: user.isSuperuser,
    lastLoginAt: user.lastLoginAt,
    createdAt: user.createdAt,
  };
}
export type SortableUserColumn = ReturnType<typeof sortableUserColumns>[keyof ReturnType<
  typeof sortableUserColumns
>];

export interface UserListOptions {
  search?: string;
  orderBy: SortableUserColumn;
  descending: boolean;
  limit: number;
  offset: number;
}

/** What a guarded change did: applied, found no such user, or refused to remove the last active superuser. */
export type GuardedOutcome<T> = { done: T } | { notFound: true } | { lastSuperuser: true };

/** Whether a change takes superuser power from the user it is applied to. */
export function removesSuperuserPower(changes: { isActive?: boolean; isSuperuser?: boolean }): boolean {
  return changes.isActive === false || changes.isSuperuser === false;
}

/**
 * Inside a transaction: whether `id` is an active superuser and no other active superuser exists, i.e. whether
 * demoting, deactivating or deleting it would leave none (SPEC "User administration": the self-demotion rules
 * exist so that one always remains). On PostgreSQL the active superuser rows are locked first, in id order: two
 * such changes then run one after the other, the second sees what the first committed (a waiting row lock
 * re-reads the row), and they cannot deadlock. On SQLite the transaction holds the write lock already
 * (`BEGIN IMMEDIATE`, serialised in-process).
 */
export async function isLastActiveSuperuser(
  tx: Orm,
  dialect: Dialect,
  user: UserTable,
  id: string,
): Promise<boolean> {
  const query = tx
    .select({ id: user.id })
    .from(user)
    .where(and(eq(user.isSuperuser, true), eq(user.isActive, true)))
    .orderBy(user.id);
  // `for('update')` exists on the PostgreSQL builder only (the stores are typed with the SQLite one).
  const rows: { id: string }[] =
    dialect === 'pg'
      ? await (query as unknown as { for(strength: 'update'): Promise<{ id: string }[]> }).for('update')
      : await query;
  return rows.length > 0 && rows.every((row) => row.id === id);
}

/** Every query of the users feature on the core user table (STYLE "A feature is one folder": store.ts). */
export function createUserStore(db: Database, user: UserTable) {
  const orm = db.orm;

  /** Case-insensitive substring match on both dialects: lower() LIKE with `%`, `_`, `\` escaped. */
  function searchCondition(search: string | undefined): SQL | undefined {
    const text = search?.trim();
    if (!text) return undefined;
    const pattern = likePattern(text);
    const like = (column: SQLWrapper) => sql`lower(${column}) like ${pattern} escape '\\'`;
    return or(
      like(user.username),
      like(sql`coalesce(${user.email}, '')`),
      like(user.firstName),
      like(user.lastName),
    );
  }

  return {
    async findById(id: string): Promise<StoredUser | undefined> {
      const [row] = await orm.select().from(user).where(eq(user.id, id)).limit(1);
      return row;
    },

    async list(options: UserListOptions): Promise<{ rows: StoredUser[]; total: number }> {
      const where = searchCondition(options.search);
      const direction = options.descending ? sql`desc` : sql`asc`;
      // NULLS LAST on both dialects (they differ by default) and the id as tie-breaker keep pages stable.
      const [rows, [totalRow]] = await Promise.all([
        orm
          .select()
          .from(user)
          .where(where)
          .orderBy(sql`${options.orderBy} ${direction} nulls last`, user.id)
          .limit(options.limit)
          .offset(options.offset),
        orm.select({ total: count() }).from(user).where(where),
      ]);
      return { rows, total: Number(totalRow?.total ?? 0) };
    },

    /** Whether another account holds `email` in any letter case (kernel/identity.ts). */
    async emailTaken(email: string, exceptId: string): Promise<boolean> {
      const [row] = await orm
        .select({ id: user.id })
        .from(user)
        .where(and(sameEmail(user.email, email), ne(user.id, exceptId)))
        .limit(1);
      return row !== undefined;
    },

    /** Applies `changes`, unless they demote or deactivate the last active superuser. */
    async update(id: string, changes: UserChanges): Promise<GuardedOutcome<StoredUser>> {
      const found = (row: StoredUser | undefined) => (row ? { done: row } : { notFound: true as const });
      if (Object.keys(changes).length === 0) return found(await this.findById(id));
      if (!removesSuperuserPower(changes)) {
        return found((await orm.update(user).set(changes).where(eq(user.id, id)).returning())[0]);
      }
      return db.transaction(async (tx) => {
        if (await isLastActiveSuperuser(tx, db.dialect, user, id)) return { lastSuperuser: true as const };
        return found((await tx.update(user).set(changes).where(eq(user.id, id)).returning())[0]);
      });
    },

    /**
     * Deletes the user, unless it is the last active superuser; groups, permissions, settings, MFA data and
     * refresh records go with it (FK cascades).
     */
    async delete(id: string): Promise<GuardedOutcome<true>> {
      return db.transaction(async (tx) => {
        if (await isLastActiveSuperuser(tx, db.dialect, user, id)) return { lastSuperuser: true as const };
        const rows = await tx.delete(user).where(eq(user.id, id)).returning({ id: user.id });
        return rows.length > 0 ? { done: true as const } : { notFound: true as const };
      });
    },
  };
}

export type UserStore = ReturnType<typeof createUserStore>;
