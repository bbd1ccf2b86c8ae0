import { and, eq, getTableName, ne, or, sql, type SQL } from 'drizzle-orm';
import type { Database, Orm } from '../kernel/db/database.js';
import type { CoreTables, Dialect } from '../kernel/db/tables.js';
import { sameEmail } from '../kernel/identity.js';
import { createLongReads } from '../kernel/db/sqlite-reader.js';
import { forUpdate, textContains } from '../kernel/db/sql.js';
import { updateUserRow, updateUserTogether, type UpdateTogether } from '../kernel/db/user-update.js';
import { buildTrigramIndexes, textIndexOnce, type TextIndexOptions } from '../kernel/db/text-index.js';
import type { Logger } from '../kernel/log/logger.js';

/**
 * `total` of `GET /admin/user` is counted up to this many users past the requested page
 * (docs/performance.md "Large tables"): one more than that means "more than this".
 */
export const USER_TOTAL_COUNT_BOUND = 10_000;

/** The shortest `search` the trigram text index looks up; a shorter one scans. */
const TEXT_INDEX_MIN_LENGTH = 3;

/** The columns `search` looks in (SPEC "User administration"), by their stored names. */
const SEARCHED_COLUMNS = ['username', 'email', 'first_name', 'last_name'] as const;

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
  const rows: { id: string }[] = await forUpdate(dialect, query);
  return rows.length > 0 && rows.every((row) => row.id === id);
}

/** Every query of the users feature on the core user table (STYLE "A feature is one folder": store.ts). */
export function createUserStore(
  db: Database,
  user: UserTable,
  log?: Logger,
  textIndexOptions: TextIndexOptions = { concurrently: true },
) {
  const orm = db.orm;
  const name = getTableName(user);
  // docs/performance.md "Large tables": the list and its count run on a worker thread on a file database.
  const reads = createLongReads(db);
  const searchTable = `${name}_search`;
  /**
   * The text index of `search`. SQLite: an FTS5 table (trigram tokenizer) of the searched columns and the user
   * id, kept by triggers (an update only when a searched column changes, so logins do not touch it), filled
   * once. Not keyed by the user table's rowid: a VACUUM may renumber the rowids of a table whose key is text. PostgreSQL: GIN indexes of pg_trgm on the expressions the search compares; without the
   * extension search scans, with a warning.
   */
  async function createTextIndex(): Promise<boolean> {
    const q = (s: string) => `"${s.replace(/"/g, '""')}"`;
    if (db.dialect === 'sqlite') {
      const existing = await db.all(sql`select name from sqlite_master where name = ${searchTable}`);
      if (existing.length > 0) return true;
      const cols = SEARCHED_COLUMNS.join(', ');
      const values = (row: string) => SEARCHED_COLUMNS.map((c) => `${row}.${c}`).join(', ');
      // The FTS rows are numbered by a key table (`n` an INTEGER PRIMARY KEY, so VACUUM keeps it): a delete or an
      // update finds its FTS row through the user id in one index lookup.
      const keys = q(`${searchTable}_key`);
      const fts = q(searchTable);
      const add =
        `INSERT INTO ${keys}(id) VALUES (new.id); INSERT INTO ${fts}(rowid, id, ${cols}) ` +
        `VALUES ((SELECT n FROM ${keys} WHERE id = new.id), new.id, ${values('new')});`;
      const drop =
        `DELETE FROM ${fts} WHERE rowid = (SELECT n FROM ${keys} WHERE id = old.id); ` +
        `DELETE FROM ${keys} WHERE id = old.id;`;
      await db.transaction(async () => {
        await db.exec(`CREATE TABLE ${keys} (n INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE)`);
        await db.exec(`CREATE VIRTUAL TABLE ${fts} USING fts5(id UNINDEXED, ${cols}, tokenize='trigram')`);
        await db.exec(
          `CREATE TRIGGER ${q(`${searchTable}_insert`)} AFTER INSERT ON ${q(name)} BEGIN ${add} END`,
        );
        await db.exec(
          `CREATE TRIGGER ${q(`${searchTable}_delete`)} AFTER DELETE ON ${q(name)} BEGIN ${drop} END`,
        );
        await db.exec(
          `CREATE TRIGGER ${q(`${searchTable}_update`)} AFTER UPDATE OF id, ${cols} ON ${q(name)} ` +
            `BEGIN ${drop} ${add} END`,
        );
        await db.exec(`INSERT INTO ${keys}(id) SELECT id FROM ${q(name)}`);
        await db.exec(
          `INSERT INTO ${fts}(rowid, id, ${cols}) SELECT k.n, u.id, ${values('u')} FROM ${q(name)} u ` +
            `JOIN ${keys} k ON k.id = u.id`,
        );
      });
      return true;
    }
    return buildTrigramIndexes(
      db,
      name,
      Object.fromEntries(
        SEARCHED_COLUMNS.map((column) => [
          `${name}_${column}_trgm_idx`,
          column === 'email' ? `lower(coalesce("email", ''))` : `lower("${column}")`,
        ]),
      ),
      log,
      textIndexOptions,
    );
  }

  const textIndex = textIndexOnce(db, 'the user table', createTextIndex, textIndexOptions, log);

  /**
   * Case-insensitive substring match on both dialects: lower() LIKE with `%`, `_`, `\` escaped (PostgreSQL: the
   * pg_trgm indexes are on these expressions); on SQLite, the FTS5 trigram index for 3 characters or more.
   */
  function searchCondition(search: string | undefined, fts: boolean): SQL | undefined {
    const text = search?.trim();
    if (!text) return undefined;
    if (fts && [...text].length >= TEXT_INDEX_MIN_LENGTH) {
      const phrase = `"${text.replace(/"/g, '""')}"`;
      const index = sql.identifier(searchTable);
      return sql`${user.id} in (select id from ${index} where ${index} match ${phrase})`;
    }
    const like = textContains(db.dialect, text);
    return or(
      like(user.username),
      like(sql`coalesce(${user.email}, '')`),
      like(user.firstName),
      like(user.lastName),
    );
  }

  return {
    /** Builds the text index of `search` when missing: at start-up (file database: also on first use). */
    ensureTextIndex: () => textIndex.start(),

    /** Stops the read worker of a file database (the last holder stops it). */
    async close(): Promise<void> {
      await textIndex.stop();
      await reads.release();
    },

    /** Whether `id` is the only active superuser (a plain read; `delete` checks again in its transaction). */
    async isOnlyActiveSuperuser(id: string): Promise<boolean> {
      const rows = await orm
        .select({ id: user.id })
        .from(user)
        .where(and(eq(user.isSuperuser, true), eq(user.isActive, true)))
        .limit(2);
      return rows.length === 1 && rows[0]!.id === id;
    },

    async findById(id: string): Promise<StoredUser | undefined> {
      const [row] = await orm.select().from(user).where(eq(user.id, id)).limit(1);
      return row;
    },

    /**
     * One page and how many match, counted up to {@link USER_TOTAL_COUNT_BOUND} past the page (one more than
     * that bound: more match).
     */
    async list(options: UserListOptions): Promise<{ rows: StoredUser[]; total: number }> {
      const fts = db.dialect === 'sqlite' && options.search?.trim() ? await textIndex.ensure() : false;
      const where = searchCondition(options.search, fts);
      const direction = options.descending ? sql`desc` : sql`asc`;
      const bound = Math.max(USER_TOTAL_COUNT_BOUND, options.offset + options.limit) + 1;
      // NULLS LAST on both dialects (they differ by default) and the id as tie-breaker keep pages stable.
      const [rows, total] = await Promise.all([
        reads.rows<StoredUser>(
          user,
          orm
            .select()
            .from(user)
            .where(where)
            // NULLS LAST only where a NULL can be: PostgreSQL reads `created_at desc` backwards from its index,
            // but not `created_at desc nulls last` (100,000 rows sorted for the default order).
            // The id breaks ties in the same direction: one index (column, id) read forwards or backwards
            // serves both directions (kernel/db/tables.ts; PostgreSQL's NULLs last descending has its own).
            .orderBy(
              options.orderBy.notNull
                ? sql`${options.orderBy} ${direction}`
                : sql`${options.orderBy} ${direction} nulls last`,
              sql`${user.id} ${direction}`,
            )
            .limit(options.limit)
            .offset(options.offset),
        ),
        reads.number(
          sql`select count(*) from (select 1 from ${user} ${where ? sql`where ${where}` : sql``} limit ${bound}) as bounded`,
        ),
      ]);
      return { rows, total };
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

    /**
     * Applies `changes`, unless they demote or deactivate the last active superuser. `record` runs in the
     * update's transaction with the updated row (SPEC-3 §3: the webhook outbox).
     */
    async update(
      id: string,
      changes: UserChanges,
      record?: (tx: Orm, row: StoredUser) => Promise<void>,
      together?: UpdateTogether,
    ): Promise<GuardedOutcome<StoredUser>> {
      const found = (row: StoredUser | undefined) => (row ? { done: row } : { notFound: true as const });
      if (Object.keys(changes).length === 0) return found(await this.findById(id));
      if (!removesSuperuserPower(changes) && !record) {
        return found(await updateUserRow(db, user, id, changes));
      }
      if (together && !removesSuperuserPower(changes)) {
        // The update and its event in one statement (kernel/db/user-update.ts), unless the row changed since
        // it was read: then the transaction below.
        const row = await updateUserTogether(db, user, id, changes, together);
        if (row) return { done: row };
      }
      return db.transaction(async (tx) => {
        if (removesSuperuserPower(changes) && (await isLastActiveSuperuser(tx, db.dialect, user, id)))
          return { lastSuperuser: true as const };
        const row = (await tx.update(user).set(changes).where(eq(user.id, id)).returning())[0];
        if (row && record) await record(tx, row);
        return found(row);
      });
    },

    /**
     * Deletes the user, unless it is the last active superuser; groups, permissions, settings, MFA data and
     * refresh records go with it (FK cascades). `before` runs first in the transaction, `record` after.
     */
    async delete(
      id: string,
      record?: (tx: Orm, row: { id: string; username: string }) => Promise<void>,
      before?: (tx: Orm) => Promise<unknown>,
    ): Promise<GuardedOutcome<true>> {
      return db.transaction(async (tx) => {
        if (await isLastActiveSuperuser(tx, db.dialect, user, id)) return { lastSuperuser: true as const };
        // What other modules do before the cascades take the user's rows (SPEC-3 §2/§3: the organization
        // memberships' events, the invitations ended), in this transaction.
        if (before) await before(tx);
        const rows = await tx
          .delete(user)
          .where(eq(user.id, id))
          .returning({ id: user.id, username: user.username });
        if (rows[0] && record) await record(tx, rows[0]);
        return rows.length > 0 ? { done: true as const } : { notFound: true as const };
      });
    },
  };
}

export type UserStore = ReturnType<typeof createUserStore>;
