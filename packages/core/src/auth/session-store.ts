import {
  and,
  desc,
  eq,
  getTableColumns,
  gt,
  inArray,
  isNotNull,
  isNull,
  lt,
  ne,
  or,
  sql,
  type SQL,
} from 'drizzle-orm';
import type { Database, Orm } from '../kernel/db/database.js';
import { equalsWithoutIndex, placeholderFor } from '../kernel/db/sql.js';
import type { CoreTables } from '../kernel/db/tables.js';
import { deleteUntilGone } from './refresh-deletion.js';
import type { SessionTable } from './tables.js';

/** A session as stored (SPEC-2 "Sessions"). */
export type SessionRow = SessionTable['$inferSelect'];

/** Who opened or used a session: the client address after the proxy rules and the sanitised user agent. */
export interface SessionClient {
  ip: string;
  userAgent: string;
}

/** A completing login's session: who opened it, and which of the user's old sessions go with it. */
export interface LoginSession extends SessionClient {
  purgeBefore: Date;
}

/**
 * The state of the access token's session as one column of the guard's user query (SPEC-2 "Sessions": the
 * check adds no database round trip): 1 while the session of `sid` (a placeholder) belongs to the outer user
 * row and is not revoked, 0 when revoked, null when there is no such row. A primary-key lookup; with `sid`
 * null (a token without the claim) it finds nothing and costs nothing.
 */
export function sessionStateColumn(
  session: SessionTable,
  userId: SQL | { name: string },
  user: CoreTables['user'],
): SQL<number | null> {
  // Found by its primary key alone, its user compared in the select list: with `user_id` in the WHERE clause
  // PostgreSQL may look the row up by the user's index and filter every session of the user (it did on tables
  // without statistics), and a user's sessions add up with each login.
  // SPEC-3 §4: an impersonation session (2) lives only while its superuser is an active superuser, read here
  // by the superuser's primary key in the same statement: a demotion or deactivation on any host ends it at
  // once, with no query added (the inner user table shadows the outer one only inside EXISTS).
  const lookup = sql`(SELECT CASE WHEN ${session.userId} <> ${userId} THEN NULL
      WHEN ${session.revokedAt} IS NOT NULL THEN 0
      WHEN ${session.impersonatorId} IS NULL THEN 1
      WHEN EXISTS (SELECT 1 FROM ${user} WHERE ${user.id} = ${session.impersonatorId}
        AND ${user.isActive} AND ${user.isSuperuser}) THEN 2
      ELSE 0 END
    FROM ${session} WHERE ${session.id} = ${sql.placeholder('sid')})`;
  // Nested: drizzle drops the table names of the columns written directly in a selected field of a
  // single-table query, which would make `user_id = id` compare two columns of the session row.
  return sql<number | null>`${lookup}`;
}

/**
 * The session writes of every login and refresh, built and prepared once (docs/performance.md "PostgreSQL
 * round trips": drizzle sends a query without a statement name unnamed, parsed and planned on every call).
 * Dates arrive as placeholders that drizzle encodes through the column, as in auth/store.ts. The auth store
 * runs them inside the login's and the rotation's own SQLite transaction (auth/store.ts).
 */
export function sessionWrites(db: Database, session: SessionTable) {
  const orm = db.orm;
  const prepared = <T>(query: unknown, name: string) =>
    (
      query as {
        prepare(name: string): {
          execute(values: Record<string, unknown>): PromiseLike<T> | T;
          /** The rows at once: on SQLite (better-sqlite3) a prepared statement answers synchronously. */
          all(values: Record<string, unknown>): T;
        };
      }
    ).prepare(name);
  const createStatement = prepared<unknown>(
    orm
      .insert(session)
      .values({
        id: sql.placeholder('id'),
        userId: sql.placeholder('userId'),
        createdAt: sql.placeholder('at'),
        lastUsedAt: sql.placeholder('at'),
        userAgent: sql.placeholder('userAgent'),
        ip: sql.placeholder('ip'),
      })
      .returning({ id: session.id }),
    'svc_session_create',
  );
  const touchStatement = prepared<{ id: string }[]>(
    orm
      .update(session)
      .set({ lastUsedAt: placeholderFor(session.lastUsedAt, 'at') })
      .where(
        and(
          eq(session.id, sql.placeholder('id')),
          equalsWithoutIndex(session.userId, sql.placeholder('userId')),
          isNull(session.revokedAt),
        ),
      )
      .returning({ id: session.id }),
    'svc_session_touch',
  );
  const purgeStatement = prepared<unknown>(
    orm
      .delete(session)
      .where(
        and(
          eq(session.userId, sql.placeholder('userId')),
          lt(session.lastUsedAt, sql.param(sql.placeholder('before'), session.lastUsedAt as never)),
        ),
      )
      .returning({ id: session.id }),
    'svc_session_purge',
  );

  return { create: createStatement, touch: touchStatement, purge: purgeStatement };
}

/** A session a revocation ended (SPEC-3 §4: an impersonation's superuser; `live`: not expired at the end). */
export interface EndedSession {
  id: string;
  impersonatorId: string | null;
  live: boolean;
}

/**
 * Every query on the session table (STYLE "A feature is one folder"). A session's id is its login's refresh
 * family, so ending a session is marking its row revoked and deleting its refresh records.
 */
export function createSessionStore(
  db: Database,
  tables: Pick<CoreTables, 'refreshToken' | 'user'>,
  session: SessionTable,
) {
  const { refreshToken, user: users } = tables;
  const orm = db.orm;
  // The refresh family column is text on both dialects; the session id is a uuid on PostgreSQL.
  const sessionIdText = db.dialect === 'pg' ? sql`${session.id}::text` : sql`${session.id}`;

  // A login's session INSERT and housekeeping run in the login's own statement (auth/store.ts `completeLogin`).
  const { touch: touchStatement } = sessionWrites(db, session);

  /** Deletes the refresh records `where` selects, on PostgreSQL until a pass finds none (refresh-deletion.ts). */
  const deleteRefresh = (where: SQL) =>
    deleteUntilGone(db.dialect, () =>
      orm.delete(refreshToken).where(where).returning({ jti: refreshToken.jti }),
    );

  /** See `end` in the returned store. */
  async function end(
    userId: string,
    at: Date,
    which: { only?: string; except?: string } = {},
    record?: (tx: Orm, ids: string[]) => Promise<void>,
  ): Promise<EndedSession[]> {
    const conditions = [eq(session.userId, userId), isNull(session.revokedAt)];
    if (which.only !== undefined) conditions.push(eq(session.id, which.only));
    if (which.except !== undefined) conditions.push(ne(session.id, which.except));
    const mark = (tx: Orm) =>
      tx
        .update(session)
        .set({ revokedAt: at })
        .where(and(...conditions))
        .returning({
          id: session.id,
          impersonatorId: session.impersonatorId,
          expiresAt: session.expiresAt,
        });
    // SPEC-3 §3: `record` (the webhook outbox) runs in the transaction that marks the sessions revoked.
    const rows = record
      ? await db.transaction(async (tx) => {
          const marked = await mark(tx);
          if (marked.length > 0)
            await record(
              tx,
              marked.map((row) => row.id),
            );
          return marked;
        })
      : await mark(orm);
    const ids = rows.map((row) => row.id);
    // All of them: logins from before sessions existed (refresh records without a session row) end too.
    const all = which.only === undefined && which.except === undefined;
    if (all) await deleteRefresh(eq(refreshToken.userId, userId));
    else if (ids.length > 0) await deleteRefresh(inArray(refreshToken.family, ids));
    return rows.map((row) => ({
      id: row.id,
      impersonatorId: row.impersonatorId,
      live: row.expiresAt === null || row.expiresAt > at,
    }));
  }

  return {
    /**
     * A refresh of session `id`: `lastUsedAt` becomes `at`, only while the session is the user's and not
     * revoked (false otherwise: the refresh is refused, so a revocation is never undone by a refresh in
     * flight). A family from before sessions existed gets its row here (`client` fills it): its refresh
     * token is still valid, and the record it is spent against is checked by the rotation itself.
     */
    async touch(id: string, userId: string, at: Date, client: SessionClient): Promise<boolean> {
      if ((await touchStatement.execute({ id, userId, at })).length > 0) return true;
      const adopted = await orm
        .insert(session)
        .values({ id, userId, createdAt: at, lastUsedAt: at, userAgent: client.userAgent, ip: client.ip })
        .onConflictDoNothing()
        .returning({ id: session.id });
      return adopted.length > 0;
    },

    /**
     * The user's active sessions, newest `lastUsedAt` first: not revoked, with a refresh token that can still
     * be used (a login whose records went with a deactivation or a password change made outside the API is
     * over too).
     */
    async listActive(
      userId: string,
      at: Date,
    ): Promise<(SessionRow & { impersonatorName: string | null })[]> {
      const usable = sql`EXISTS (SELECT 1 FROM ${refreshToken} WHERE ${refreshToken.family} = ${sessionIdText}
        AND ${refreshToken.spentAt} IS NULL AND ${gt(refreshToken.expiresAt, at)})`;
      // SPEC-3 §4: an impersonation session has no refresh token; it is active until its token expires.
      const impersonating = and(isNotNull(session.impersonatorId), gt(session.expiresAt, at));
      const impersonatorName = sql<
        string | null
      >`(SELECT ${users.username} FROM ${users} WHERE ${users.id} = ${session.impersonatorId})`;
      return orm
        .select({ ...getTableColumns(session), impersonatorName })
        .from(session)
        .where(and(eq(session.userId, userId), isNull(session.revokedAt), or(usable, impersonating)))
        .orderBy(desc(session.lastUsedAt), desc(session.createdAt));
    },

    /** SPEC-3 §4: opens an impersonation session of `userId` for superuser `impersonatorId`. */
    async createImpersonation(row: {
      id: string;
      userId: string;
      impersonatorId: string;
      at: Date;
      expiresAt: Date;
      client: SessionClient;
    }): Promise<void> {
      await orm.insert(session).values({
        id: row.id,
        userId: row.userId,
        createdAt: row.at,
        lastUsedAt: row.at,
        userAgent: row.client.userAgent,
        ip: row.client.ip,
        impersonatorId: row.impersonatorId,
        expiresAt: row.expiresAt,
      });
    },

    /**
     * SPEC-3 §4: ends the live impersonation sessions superuser `impersonatorId` opened (a demotion or a
     * deactivation); returns them with their users.
     */
    async revokeImpersonationsBy(
      impersonatorId: string,
      at: Date,
    ): Promise<{ id: string; userId: string }[]> {
      return orm
        .update(session)
        .set({ revokedAt: at })
        .where(
          and(
            eq(session.impersonatorId, impersonatorId),
            isNull(session.revokedAt),
            gt(session.expiresAt, at),
          ),
        )
        .returning({ id: session.id, userId: session.userId });
    },

    /**
     * Ends sessions of `userId`: all of them, only `only`, or all but `except`. Marked revoked first (the
     * guard refuses their access tokens from then on), then their refresh records go. Returns the ids that
     * were active and are ended now.
     */
    async revoke(
      userId: string,
      at: Date,
      which: { only?: string; except?: string } = {},
      record?: (tx: Orm, ids: string[]) => Promise<void>,
    ): Promise<string[]> {
      return (await end(userId, at, which, record)).map((row) => row.id);
    },

    /**
     * {@link revoke}, answering the sessions it ended with what SPEC-3 §4 tells of them: the superuser of an
     * impersonation session, and whether it was still live (not expired). The statement that marks a session
     * is the only one to return it, so of concurrent revocations one reports each end.
     */
    end,

    /** Whether session `id` belongs to `userId` and is not revoked. */
    async isActive(id: string, userId: string): Promise<boolean> {
      // By primary key alone, the user compared here (see `touch`).
      const [row] = await orm
        .select({ userId: session.userId, revokedAt: session.revokedAt })
        .from(session)
        .where(eq(session.id, id))
        .limit(1);
      return row !== undefined && row.userId === userId && row.revokedAt === null;
    },
  };
}

export type SessionStore = ReturnType<typeof createSessionStore>;
