import { and, count, desc, eq, getTableColumns, gt, isNull, lte, or, sql } from 'drizzle-orm';
import type { Database } from '../kernel/db/database.js';
import { effectivePermissionsJson, parsePermissionsJson } from '../kernel/db/effective-permissions.js';
import { placeholderFor } from '../kernel/db/sql.js';
import type { CoreTables } from '../kernel/db/tables.js';
import type { PersonalTokenTables } from './tables.js';

export type PersonalTokenRow = PersonalTokenTables['personalToken']['$inferSelect'];
/** A token as lists show it: every column but the digest. */
export type PersonalTokenInfo = Omit<PersonalTokenRow, 'digest'>;
export type NewPersonalToken = Omit<PersonalTokenRow, 'id' | 'lastUsedAt'>;
type UserRow = CoreTables['user']['$inferSelect'];

/** What the guard's lookup returns: the token, its owner and the owner's effective permissions. */
export interface TokenWithOwner {
  token: Pick<PersonalTokenRow, 'id' | 'permissions' | 'staff' | 'superuser' | 'expiresAt' | 'lastUsedAt'>;
  owner: UserRow;
  ownerPermissions: string[];
}

interface Prepared<T> {
  execute(values?: Record<string, unknown>): PromiseLike<T> | T;
}

/** drizzle names prepared statements on PostgreSQL and ignores the name on SQLite. */
function prepare<T>(query: unknown, name: string): Prepared<T> {
  return (query as { prepare(name: string): Prepared<T> }).prepare(name);
}

/** Every query on the personal token table (and the reads it needs of the core user tables). */
export function createPersonalTokenStore(db: Database, tables: PersonalTokenTables, core: CoreTables) {
  const { personalToken: t } = tables;
  const { user } = core;
  const orm = db.orm;
  const { digest: _digest, ...infoColumns } = getTableColumns(t);

  // The guard's one round trip (SPEC-2 "Personal access tokens", docs/performance.md): the token by its digest
  // (unique index), joined with its owner and the owner's effective permissions. Prepared once.
  const byDigest = prepare<
    {
      token: TokenWithOwner['token'];
      owner: UserRow;
      permissionsJson: string | null;
    }[]
  >(
    orm
      .select({
        token: {
          id: t.id,
          permissions: t.permissions,
          staff: t.staff,
          superuser: t.superuser,
          expiresAt: t.expiresAt,
          lastUsedAt: t.lastUsedAt,
        },
        owner: getTableColumns(user),
        permissionsJson: effectivePermissionsJson(db.dialect, core),
      })
      .from(t)
      .innerJoin(user, eq(user.id, t.userId))
      .where(eq(t.digest, sql.placeholder('digest'))),
    'svc_personal_token_by_digest',
  );
  const dateParam = (name: string) => sql.param(sql.placeholder(name), t.lastUsedAt as never);
  // At most once a minute per token, also when several workers see the token in the same minute.
  const touchStatement = prepare<unknown>(
    orm
      .update(t)
      .set({ lastUsedAt: placeholderFor(t.lastUsedAt, 'at') })
      .where(
        and(
          eq(t.id, sql.placeholder('id')),
          or(isNull(t.lastUsedAt), lte(t.lastUsedAt, dateParam('before'))),
        ),
      )
      .returning({ id: t.id }),
    'svc_personal_token_touch',
  );

  return {
    async insert(values: NewPersonalToken): Promise<PersonalTokenInfo> {
      const [row] = await orm.insert(t).values(values).returning(infoColumns);
      return row!;
    },
    /** The user's tokens, newest first. */
    async listOf(userId: string): Promise<PersonalTokenInfo[]> {
      return orm.select(infoColumns).from(t).where(eq(t.userId, userId)).orderBy(desc(t.createdAt), t.id);
    },
    /** How many of the user's tokens are still live at `at` (SPEC-3 §7 rule 1: expired ones do not count). */
    async countLive(userId: string, at: Date): Promise<number> {
      const [row] = await orm
        .select({ n: count() })
        .from(t)
        .where(and(eq(t.userId, userId), or(isNull(t.expiresAt), gt(t.expiresAt, at))));
      return Number(row?.n ?? 0);
    },
    /** Deletes every token of the user (SPEC-3 §7 rule 2); how many there were. */
    async deleteAllOf(userId: string): Promise<number> {
      return (await orm.delete(t).where(eq(t.userId, userId)).returning({ id: t.id })).length;
    },
    /** Deletes one token of the user; false when the user has no token of that id. */
    async deleteOf(userId: string, id: string): Promise<boolean> {
      const rows = await orm
        .delete(t)
        .where(and(eq(t.id, id), eq(t.userId, userId)))
        .returning({ id: t.id });
      return rows.length > 0;
    },
    async userExists(id: string): Promise<boolean> {
      const rows = await orm.select({ id: user.id }).from(user).where(eq(user.id, id)).limit(1);
      return rows.length > 0;
    },
    async byDigest(digest: string): Promise<TokenWithOwner | undefined> {
      const row = (await byDigest.execute({ digest }))[0];
      if (!row) return undefined;
      return {
        token: row.token,
        owner: row.owner,
        ownerPermissions: parsePermissionsJson(row.permissionsJson),
      };
    },
    /** Sets `lastUsedAt` to `at` unless it is later than `before` already (written by another request). */
    async touch(id: string, at: Date, before: Date): Promise<void> {
      await touchStatement.execute({ id, at, before });
    },
  };
}

export type PersonalTokenStore = ReturnType<typeof createPersonalTokenStore>;
