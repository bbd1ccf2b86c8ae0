import { and, count, eq, ne, or, sql, type SQL, type SQLWrapper } from 'drizzle-orm';
import type { Database } from '../kernel/db/database.js';
import type { CoreTables } from '../kernel/db/tables.js';
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

    /** Whether another account holds `email` (compared case-insensitively). */
    async emailTaken(email: string, exceptId: string): Promise<boolean> {
      const [row] = await orm
        .select({ id: user.id })
        .from(user)
        .where(and(sql`lower(${user.email}) = ${email.toLowerCase()}`, ne(user.id, exceptId)))
        .limit(1);
      return row !== undefined;
    },

    async update(id: string, changes: UserChanges): Promise<StoredUser | undefined> {
      if (Object.keys(changes).length === 0) return this.findById(id);
      const [row] = await orm.update(user).set(changes).where(eq(user.id, id)).returning();
      return row;
    },

    /** Deletes the user; groups, permissions, settings, MFA data and refresh records go with it (FK cascades). */
    async delete(id: string): Promise<boolean> {
      const rows = await orm.delete(user).where(eq(user.id, id)).returning({ id: user.id });
      return rows.length > 0;
    },
  };
}

export type UserStore = ReturnType<typeof createUserStore>;
