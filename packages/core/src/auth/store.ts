import { and, eq, getTableColumns, isNull, lte, or, sql, type SQL } from 'drizzle-orm';
import type { Database, Orm } from '../kernel/db/database.js';
import { effectivePermissionsJson, parsePermissionsJson } from '../kernel/db/effective-permissions.js';
import {
  allIn,
  columnName as col,
  compileSql,
  equalsWithoutIndex,
  placeholderFor,
} from '../kernel/db/sql.js';
import type { CoreTables } from '../kernel/db/tables.js';
import {
  insertUser,
  updateUserRow,
  updateUserTogether,
  type UpdateTogether,
} from '../kernel/db/user-update.js';
import { sameEmail } from '../kernel/identity.js';
import type { WebhookOutbox } from '../kernel/ports.js';
import { deleteUntilGone as deleteRefreshUntilGone } from './refresh-deletion.js';
import { sessionStateColumn, sessionWrites, type LoginSession } from './session-store.js';
import type { SessionTable } from './tables.js';

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

interface Prepared<T> {
  execute(values?: Record<string, unknown>): PromiseLike<T> | T;
  /** The rows at once: on SQLite (better-sqlite3) a prepared statement answers synchronously. */
  all(values?: Record<string, unknown>): T;
}

/**
 * Runs a prepared SQLite statement synchronously (better-sqlite3), so that several of them inside one
 * transaction leave no await between them where another request's statement could run.
 */
function runSync<T>(
  statement: { all(values: Record<string, unknown>): T },
  values: Record<string, unknown>,
): T {
  return statement.all(values);
}

/** drizzle names prepared statements on PostgreSQL and ignores the name on SQLite. */
function prepare<T>(query: unknown, name: string): Prepared<T> {
  return (query as { prepare(name: string): Prepared<T> }).prepare(name);
}

/**
 * A hand-written PostgreSQL statement whose text is built once: `query` names its values with
 * `sql.placeholder`, and a call only puts them in. drizzle otherwise walks the whole template and quotes every
 * name again on each call (the rotation's CTE: about 50 µs of a refresh's CPU). The text stays the same, so
 * postgres-js keeps it prepared per connection as before (`db.all`, docs/performance.md "PostgreSQL round
 * trips").
 */
function statementText<K extends string>(db: Database, query: SQL): (values: Record<K, unknown>) => SQL {
  const { sql: text, params } = compileSql(db.dialect, query);
  const pieces = text.split(/\$\d+/);
  const names = params.map((param) => (param as { name: string }).name as K);
  if (pieces.length !== names.length + 1 || names.some((name) => typeof name !== 'string'))
    throw new Error('a statement text takes its values as sql.placeholder only, and holds no $ of its own');
  const strings = Object.assign([...pieces], { raw: pieces }) as TemplateStringsArray;
  return (values) => sql(strings, ...names.map((name) => values[name]));
}

/**
 * Every query of the auth feature (STYLE "A feature is one folder": no SQL elsewhere). Hot statements
 * (token to user, login lookup) are prepared once here.
 */
export function createAuthStore(db: Database, tables: CoreTables, session: SessionTable) {
  const { user, refreshToken } = tables;
  const orm = db.orm;
  // SPEC-2 "Sessions": a login's session row and a refresh's `last_used_at` are written in the login's and
  // the rotation's own statement (docs/performance.md "PostgreSQL round trips"); these are the SQLite ones.
  const sessionStatements = sessionWrites(db, session);

  /** Deletes refresh records, on PostgreSQL until a pass finds none (auth/refresh-deletion.ts). */
  const deleteUntilGone = (pass: () => PromiseLike<unknown[]>) => deleteRefreshUntilGone(db.dialect, pass);

  // The user and their permissions in one round trip (kernel/db/effective-permissions.ts).
  const permissionsJson = effectivePermissionsJson(db.dialect, tables);

  const byId = prepare<UserRow[]>(
    orm
      .select()
      .from(user)
      .where(eq(user.id, sql.placeholder('id'))),
    'svc_auth_user_by_id',
  );
  // SPEC-2 "Sessions": the state of the token's session (placeholder `sid`) rides along in the same statement.
  const sessionState = sessionStateColumn(session, user.id, user);
  const byIdWithPermissions = prepare<
    (UserRow & { permissionsJson: string | null; sessionState: number | null })[]
  >(
    orm
      .select({ ...getTableColumns(user), permissionsJson, sessionState })
      .from(user)
      .where(eq(user.id, sql.placeholder('id'))),
    'svc_auth_user_by_id_perms',
  );
  // SPEC-3 §2: on an organization route the caller's membership rides in the same statement (the
  // `organizations` port's column, a subquery of another feature's tables, placeholder `orgId`). Prepared on
  // first use: the port is provided after this store is made.
  let byIdWithOrganization:
    | {
        column: SQL;
        statement: Prepared<
          (UserRow & { permissionsJson: string | null; sessionState: number | null; membership: unknown })[]
        >;
      }
    | undefined;
  const byIdWithOrganizationStatement = (column: SQL) => {
    if (byIdWithOrganization?.column !== column) {
      byIdWithOrganization = {
        column,
        statement: prepare(
          orm
            .select({ ...getTableColumns(user), permissionsJson, sessionState, membership: column })
            .from(user)
            .where(eq(user.id, sql.placeholder('id'))),
          'svc_auth_user_by_id_perms_org',
        ),
      };
    }
    return byIdWithOrganization.statement;
  };
  const byIdWithSession = prepare<(UserRow & { sessionState: number | null })[]>(
    orm
      .select({ ...getTableColumns(user), sessionState })
      .from(user)
      .where(eq(user.id, sql.placeholder('id'))),
    'svc_auth_user_by_id_session',
  );
  const byUsername = prepare<UserRow[]>(
    orm
      .select()
      .from(user)
      .where(eq(user.username, sql.placeholder('username'))),
    'svc_auth_user_by_username',
  );

  // Refresh rotation (docs/performance.md): built and prepared once; the values arrive as placeholders, which drizzle
  // encodes through the column (timestamps per dialect). `createdAt` is passed, not left to the column's
  // `$defaultFn`, which a prepared statement would evaluate once, at prepare time.
  const spendStatement = prepare<RefreshRow[]>(
    orm
      .update(refreshToken)
      .set({ spentAt: placeholderFor(refreshToken.spentAt, 'now') })
      .where(and(eq(refreshToken.jti, sql.placeholder('jti')), isNull(refreshToken.spentAt)))
      .returning(),
    'svc_auth_refresh_spend',
  );
  // The rotation's one statement on PostgreSQL (`rotateRefresh`), its text built once.
  const p = (name: string) => sql.placeholder(name);
  const time = (name: string) => sql`${sql.placeholder(name)}::timestamptz`;
  const rotationStatement =
    db.dialect === 'pg'
      ? statementText<
          'jti' | 'userId' | 'now' | 'revokedFrom' | 'nextJti' | 'family' | 'nextUserId' | 'expiresAt'
        >(
          db,
          sql`WITH account AS (
            SELECT ${col(user.isActive)}, ${col(user.passwordChangedAt)} FROM ${user} WHERE ${user.id} = ${p('userId')}
          ), spent AS (
            UPDATE ${refreshToken} SET ${col(refreshToken.spentAt)} = ${time('now')}
            WHERE ${refreshToken.jti} = ${p('jti')} AND ${refreshToken.spentAt} IS NULL
              AND ${equalsWithoutIndex(refreshToken.userId, p('userId'))} AND ${equalsWithoutIndex(refreshToken.family, p('family'))}
              AND EXISTS (SELECT 1 FROM account WHERE ${col(user.isActive)}
                AND (${col(user.passwordChangedAt)} IS NULL OR ${col(user.passwordChangedAt)} < ${time('revokedFrom')}))
            RETURNING ${refreshToken.jti}
          ), successor AS (
            INSERT INTO ${refreshToken} (${col(refreshToken.jti)}, ${col(refreshToken.family)},
              ${col(refreshToken.userId)}, ${col(refreshToken.expiresAt)}, ${col(refreshToken.createdAt)})
            SELECT ${p('nextJti')}, ${p('family')}, ${p('nextUserId')}, ${time('expiresAt')}, ${time('now')} FROM spent
            RETURNING ${col(refreshToken.jti)}
          ), touched AS (
            UPDATE ${session} SET ${col(session.lastUsedAt)} = ${time('now')}
            WHERE ${session.id} = ${p('family')}::uuid AND ${equalsWithoutIndex(session.userId, p('userId'))}
              AND ${session.revokedAt} IS NULL AND EXISTS (SELECT 1 FROM spent)
            RETURNING ${col(session.id)}
          )
          SELECT (SELECT ${col(user.isActive)} FROM account) AS active,
            (SELECT ${col(user.passwordChangedAt)} >= ${time('revokedFrom')} FROM account) AS changed,
            (SELECT count(*) FROM successor)::int AS rotated, (SELECT count(*) FROM touched)::int AS touched`,
        )
      : () => {
          throw new Error('the rotation statement is PostgreSQL only');
        };
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
  // The writes of every login (docs/performance.md): counted attempt, reset, housekeeping and the login record, built and
  // prepared once like the statements above. A Date placeholder outside `set()` is wrapped in its column's
  // encoder (`sql.param`), as drizzle does for literal values.
  const dateParam = <T>(name: string, column: T) => sql.param(sql.placeholder(name), column as never);
  const unlockedAt = or(isNull(user.lockedUntil), lte(user.lockedUntil, dateParam('now', user.lockedUntil)));
  const unlockedAtValue = (now: Date) => or(isNull(user.lockedUntil), lte(user.lockedUntil, now));
  // SPEC "Account login lock": one slot taken atomically before the check, only while unlocked and below
  // the limit (login-attempts.ts), on the user row that `match` names.
  const reservation = (...match: SQL[]) =>
    orm
      .update(user)
      .set({ failedLoginCount: sql`${user.failedLoginCount} + 1` })
      .where(and(...match, sql`${user.failedLoginCount} < ${sql.placeholder('max')}`, unlockedAt));
  const reserveStatement = prepare<{ count: number }[]>(
    reservation(eq(user.id, sql.placeholder('id'))).returning({ count: user.failedLoginCount }),
    'svc_auth_reserve_attempt',
  );
  // The same slot taken by username at the start of a password login, the active user's row returned with it
  // (docs/performance.md "PostgreSQL round trips": the lookup and the reservation in one statement).
  const reserveByUsernameQuery = () =>
    reservation(eq(user.username, sql.placeholder('username')), eq(user.isActive, true));
  const reserveByUsernameStatement = prepare<UserRow[]>(
    reserveByUsernameQuery().returning(),
    'svc_auth_reserve_by_username',
  );
  // The same statement returning one more value of the user's row: the second factor's state (the
  // `secondFactor` port's `loginState`, a subquery of another feature's table), so that a login reads it in
  // its first statement instead of a lookup of its own. Prepared on its first use: the port is provided
  // after this store is made.
  let reserveWithState: { state: SQL; statement: Prepared<(UserRow & { state: unknown })[]> } | undefined;
  const reserveWithStateStatement = (state: SQL) => {
    if (reserveWithState?.state !== state) {
      reserveWithState = {
        state,
        statement: prepare<(UserRow & { state: unknown })[]>(
          reserveByUsernameQuery().returning({ ...getTableColumns(user), state }),
          'svc_auth_reserve_by_username_state',
        ),
      };
    }
    return reserveWithState.statement;
  };
  const lockIfFullStatement = prepare<{ id: string }[]>(
    orm
      .update(user)
      .set({ failedLoginCount: 0, lockedUntil: placeholderFor(user.lockedUntil, 'lockUntil') })
      .where(
        and(
          eq(user.id, sql.placeholder('id')),
          sql`${user.failedLoginCount} >= ${sql.placeholder('max')}`,
          unlockedAt,
        ),
      )
      .returning({ id: user.id }),
    'svc_auth_lock_if_full',
  );
  const liftLaterLock = sql`CASE WHEN ${user.lockedUntil} > ${dateParam('liftAfter', user.lockedUntil)} THEN NULL ELSE ${user.lockedUntil} END`;
  const releaseStatement = prepare<unknown>(
    orm
      .update(user)
      .set({
        failedLoginCount: sql`CASE WHEN ${user.failedLoginCount} > 0 THEN ${user.failedLoginCount} - 1 ELSE 0 END`,
        lockedUntil: liftLaterLock,
      })
      .where(eq(user.id, sql.placeholder('id')))
      .returning({ id: user.id }),
    'svc_auth_release_attempt',
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
  // A completed login (SPEC "Account login lock": counter reset) only while the password is still the one
  // verified and the user still active (SPEC "Authentication" 8: a login racing a password change or a
  // deactivation must not outlive it).
  const loginWhere = and(
    eq(user.id, sql.placeholder('id')),
    eq(user.passwordHash, sql.placeholder('hash')),
    eq(user.isActive, true),
  );
  const recordLoginStatement = prepare<{ id: string }[]>(
    orm
      .update(user)
      .set({
        lastLoginAt: placeholderFor(user.lastLoginAt, 'at'),
        failedLoginCount: 0,
        lockedUntil: liftLaterLock,
      })
      .where(loginWhere)
      .returning({ id: user.id }),
    'svc_auth_record_login',
  );
  // The completed login's one statement on PostgreSQL (`completeLogin`), its text built once. The session id is
  // the refresh family, a uuid (tokens.ts signs it). Times go in as ISO text cast in the statement: drizzle
  // hands postgres-js dates as text (its own columns encode them), so a raw `Date` would not serialise.
  const completeLoginStatement =
    db.dialect === 'pg'
      ? statementText<
          | 'userId'
          | 'hash'
          | 'at'
          | 'liftAfter'
          | 'jti'
          | 'family'
          | 'expiresAt'
          | 'userAgent'
          | 'ip'
          | 'purgeBefore'
        >(
          db,
          sql`WITH done AS (
            UPDATE ${user} SET ${col(user.lastLoginAt)} = ${time('at')}, ${col(user.failedLoginCount)} = 0,
              ${col(user.lockedUntil)} = CASE WHEN ${user.lockedUntil} > ${time('liftAfter')} THEN NULL ELSE ${user.lockedUntil} END
            WHERE ${user.id} = ${p('userId')} AND ${user.passwordHash} = ${p('hash')} AND ${user.isActive} = true
            RETURNING ${user.id}
          ), expired AS (
            DELETE FROM ${refreshToken}
            WHERE ${refreshToken.userId} IN (SELECT id FROM done) AND ${refreshToken.expiresAt} <= ${time('at')}
          ), opened AS (
            INSERT INTO ${session} (${col(session.id)}, ${col(session.userId)}, ${col(session.createdAt)},
              ${col(session.lastUsedAt)}, ${col(session.userAgent)}, ${col(session.ip)})
            SELECT ${p('family')}::uuid, done.id, ${time('at')}, ${time('at')}, ${p('userAgent')}, ${p('ip')} FROM done
          ), purged AS (
            DELETE FROM ${session}
            WHERE ${session.userId} IN (SELECT id FROM done) AND ${session.lastUsedAt} < ${time('purgeBefore')}
          )
          INSERT INTO ${refreshToken} (${col(refreshToken.jti)}, ${col(refreshToken.family)},
            ${col(refreshToken.userId)}, ${col(refreshToken.expiresAt)}, ${col(refreshToken.createdAt)})
          SELECT ${p('jti')}, ${p('family')}, done.id, ${time('expiresAt')}, ${time('at')} FROM done
          RETURNING ${col(refreshToken.jti)}`,
        )
      : () => {
          throw new Error('the completed login statement is PostgreSQL only');
        };
  const refreshValues = (values: NewRefresh, now = new Date()) => ({
    jti: values.jti,
    family: values.family,
    userId: values.userId,
    expiresAt: values.expiresAt,
    createdAt: now,
  });

  return {
    async userById(id: string): Promise<UserRow | undefined> {
      return (await byId.execute({ id }))[0];
    },
    /**
     * The user and their effective permission codenames, in one query; with `sid`, also the state of that
     * session (`sessionState`: 1 active, 0 revoked, null unknown or another user's).
     */
    async userWithPermissions(
      id: string,
      sid?: string,
    ): Promise<(UserRow & { permissions: string[]; sessionState: number | null }) | undefined> {
      const row = (await byIdWithPermissions.execute({ id, sid: sid ?? null }))[0];
      if (!row) return undefined;
      const { permissionsJson: json, ...rest } = row;
      return { ...rest, permissions: parsePermissionsJson(json) };
    },
    /**
     * {@link userWithPermissions} plus the value of `membershipColumn` for organization `orgId` (SPEC-3 §2: the
     * membership check of an organization route adds no round trip).
     */
    async userWithOrganization(
      id: string,
      sid: string | undefined,
      membershipColumn: SQL,
      orgId: string,
    ): Promise<
      (UserRow & { permissions: string[]; sessionState: number | null; membership: unknown }) | undefined
    > {
      const statement = byIdWithOrganizationStatement(membershipColumn);
      const row = (await statement.execute({ id, sid: sid ?? null, orgId }))[0];
      if (!row) return undefined;
      const { permissionsJson: json, ...rest } = row;
      return { ...rest, permissions: parsePermissionsJson(json) };
    },
    /** The user and the state of session `sid` in one query (see {@link userWithPermissions}). */
    async userForToken(
      id: string,
      sid?: string,
    ): Promise<(UserRow & { sessionState: number | null }) | undefined> {
      return (await byIdWithSession.execute({ id, sid: sid ?? null }))[0];
    },
    async permissionsOf(id: string): Promise<string[]> {
      const row = (await byIdWithPermissions.execute({ id, sid: null }))[0];
      return row ? parsePermissionsJson(row.permissionsJson) : [];
    },
    async userByUsername(username: string): Promise<UserRow | undefined> {
      return (await byUsername.execute({ username }))[0];
    },
    async userByEmail(email: string): Promise<UserRow | undefined> {
      return (await orm.select().from(user).where(sameEmail(user.email, email)).limit(1))[0];
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
    /**
     * Inserts the user; `record` runs in the insert's transaction (SPEC-3 §3: the webhook outbox). With
     * `recordWith` (PostgreSQL, webhooks on), the insert and its `user.created` are one statement instead.
     */
    insertUser(
      values: CoreTables['user']['$inferInsert'],
      record?: (tx: Orm, row: UserRow) => Promise<void>,
      recordWith?: WebhookOutbox['recordWith'],
    ): Promise<UserRow> {
      return insertUser(db, user, values, { record, recordWith });
    },
    /** Replaces the hash only while it is still `current` (a re-hash must never undo a password change). */
    async replaceHash(id: string, current: string, next: string): Promise<boolean> {
      const rows = await orm
        .update(user)
        .set({ passwordHash: next })
        .where(and(eq(user.id, id), eq(user.passwordHash, current)))
        .returning({ id: user.id });
      return rows.length > 0;
    },
    /** Updates the user; `record` runs in the update's transaction (SPEC-3 §3: the webhook outbox). */
    async updateUser(
      id: string,
      values: UserUpdate,
      record?: (tx: Orm, row: UserRow) => Promise<void>,
      together?: UpdateTogether,
    ): Promise<UserRow | undefined> {
      if (!record) {
        return updateUserRow(db, user, id, values);
      }
      if (together) {
        // The update and its event in one statement (kernel/db/user-update.ts), unless the row changed since
        // it was read: then the transaction below.
        const row = await updateUserTogether(db, user, id, values, together);
        if (row) return row;
      }
      return db.transaction(async (tx) => {
        const [row] = await tx.update(user).set(values).where(eq(user.id, id)).returning();
        if (row) await record(tx, row);
        return row;
      });
    },

    /** Takes one slot on the lockout counter; false when locked, full or gone (login-attempts.ts). */
    async reserveAttempt(id: string, max: number, now: Date): Promise<boolean> {
      return (await reserveStatement.execute({ id, max, now })).length > 0;
    },
    /**
     * {@link reserveAttempt} for the active user named `username`, returning their row (counter included);
     * undefined when there is no such active user or no free slot now. With `state` (an SQL expression over
     * the user's row), its value comes with the row as `state`.
     */
    async reserveAttemptByUsername(
      username: string,
      max: number,
      now: Date,
      state?: SQL,
    ): Promise<(UserRow & { state?: unknown }) | undefined> {
      const statement = state ? reserveWithStateStatement(state) : reserveByUsernameStatement;
      return (await statement.execute({ username, max, now }))[0];
    },
    /** Locks until `lockUntil` (counter reset) when the counter has reached `max`; true when it did. */
    /** `record` runs in the lock's transaction when this call set the lock (SPEC-3 §3: `user.locked`). */
    async lockIfFull(
      id: string,
      max: number,
      now: Date,
      lockUntil: Date,
      record?: (tx: Orm, row: { id: string; username: string }) => Promise<void>,
    ): Promise<boolean> {
      if (!record) return (await lockIfFullStatement.execute({ id, max, now, lockUntil })).length > 0;
      return db.transaction(async (tx) => {
        const [row] = await tx
          .update(user)
          .set({ failedLoginCount: 0, lockedUntil: lockUntil })
          .where(and(eq(user.id, id), sql`${user.failedLoginCount} >= ${max}`, unlockedAtValue(now)))
          .returning({ id: user.id, username: user.username });
        if (row) await record(tx, row);
        return row !== undefined;
      });
    },
    /** Gives one slot back and lifts a lock ending after `liftAfter` (set while the attempt was in flight). */
    async releaseAttempt(id: string, liftAfter: Date): Promise<void> {
      await releaseStatement.execute({ id, liftAfter });
    },

    /**
     * The rotation swap (SPEC "Refresh token and login"): spends `jti` of `family` and stores its successor
     * `next`, atomically, so of two concurrent refreshes with the same token exactly one wins, and a
     * revocation (logout, password change, reuse) never lands between spend and successor: on PostgreSQL one
     * statement, on SQLite one transaction run without yielding. The same step reads the user first and
     * spends nothing unless they exist, are active and changed their password before `revokedFrom` (the
     * token's `iat` second ends there; SPEC "Refresh token and login": a password change revokes the logins
     * before it): `user` says which of these refused it. `rotated` false: nothing was spent. The step also sets the
     * session's `last_used_at` (SPEC-2 "Sessions"), after the spend and only while the session is the user's
     * and not revoked: `touched` false with `rotated` true means a revocation marked the session before this
     * refresh reached it (or the family predates sessions); the caller decides (service.ts).
     */
    async rotateRefresh(
      jti: string,
      userId: string,
      now: Date,
      next: NewRefresh,
      revokedFrom: Date,
    ): Promise<{ user: 'ok' | 'invalid' | 'revoked'; rotated: boolean; touched: boolean }> {
      if (db.dialect === 'pg') {
        // One round trip and one commit for the user's check and the swap (docs/performance.md "PostgreSQL
        // round trips"; the text is `rotationStatement` above). The session UPDATE re-reads a row a concurrent
        // revocation changed (READ COMMITTED), so a session marked revoked while this statement ran is not
        // touched. The family is a uuid (service.ts checks it). The refresh record and the session are found
        // by their primary keys only: their user and family are compared by `equalsWithoutIndex`.
        // Otherwise PostgreSQL may take the user's or the family's index (it did on tables without statistics,
        // and for a custom plan after ANALYZE) and filter every record of it: a session leaves one record per
        // rotation, so each refresh cost more than the one before. The ids compared are the canonical
        // lowercase ones this service signs. `password_changed_at` is compared in microseconds against a whole
        // second, the same outcome as the second-resolution comparison of access tokens (service.ts).
        const rows = await db.all<{
          active: boolean | null;
          changed: boolean | null;
          rotated: number;
          touched: number;
        }>(
          rotationStatement({
            jti,
            userId,
            now: now.toISOString(),
            revokedFrom: revokedFrom.toISOString(),
            nextJti: next.jti,
            family: next.family,
            nextUserId: next.userId,
            expiresAt: next.expiresAt.toISOString(),
          }),
        );
        const row = rows[0];
        if (row?.active !== true) return { user: 'invalid', rotated: false, touched: false };
        if (row.changed === true) return { user: 'revoked', rotated: false, touched: false };
        return { user: 'ok', rotated: Number(row.rotated) > 0, touched: Number(row.touched) > 0 };
      }
      return db.transaction(async () => {
        const account = runSync<UserRow[]>(byId, { id: userId })[0];
        if (!account?.isActive) return { user: 'invalid', rotated: false, touched: false } as const;
        if (account.passwordChangedAt && account.passwordChangedAt.getTime() >= revokedFrom.getTime())
          return { user: 'revoked', rotated: false, touched: false } as const;
        const spent = runSync<RefreshRow[]>(spendStatement, { jti, now });
        const row = spent[0];
        if (!row || row.userId !== userId || row.family !== next.family)
          return { user: 'ok', rotated: false, touched: false } as const;
        runSync(insertRefreshStatement, refreshValues(next, now));
        const touched = runSync<unknown[]>(sessionStatements.touch, { id: next.family, userId, at: now });
        return { user: 'ok', rotated: true, touched: touched.length > 0 } as const;
      });
    },
    async refreshByJti(jti: string): Promise<RefreshRow | undefined> {
      return (await refreshByJtiStatement.execute({ jti }))[0];
    },
    async deleteFamily(family: string): Promise<void> {
      await deleteUntilGone(() =>
        orm.delete(refreshToken).where(eq(refreshToken.family, family)).returning({ jti: refreshToken.jti }),
      );
    },
    /**
     * The writes of a completed login, only while the password is still `passwordHash` and the user active
     * (false otherwise, and nothing is written): the login is recorded, the lockout counter reset (SPEC
     * "Account login lock") and a lock ending after `liftAfter` lifted (set while this login was in flight,
     * it counted this login's slot); the user's expired refresh records go (housekeeping) and the new one is
     * stored, with its session (SPEC-2 "Sessions": id the refresh family) and the housekeeping of the user's
     * sessions last used before `client.purgeBefore`. One statement on PostgreSQL; one transaction run without
     * yielding on SQLite, so the session exists exactly when its first token does. A password change that
     * lands after it deletes the new record (SPEC "Authentication" 8); one that lands before refuses it.
     */
    async completeLogin(
      userId: string,
      at: Date,
      refresh: NewRefresh,
      condition: { passwordHash: string; liftAfter: Date },
      client: LoginSession,
      record?: (tx: Orm) => Promise<void>,
    ): Promise<boolean> {
      const { passwordHash: hash, liftAfter } = condition;
      if (db.dialect === 'pg' && record) {
        // SPEC-3 §3: the login's webhook event commits with the login (one more statement in a transaction).
        return db.transaction(async (tx) => {
          const rows = await allIn(
            tx,
            'pg',
            completeLoginStatement!({
              userId,
              hash,
              at: at.toISOString(),
              liftAfter: liftAfter.toISOString(),
              jti: refresh.jti,
              family: refresh.family,
              expiresAt: refresh.expiresAt.toISOString(),
              userAgent: client.userAgent,
              ip: client.ip,
              purgeBefore: client.purgeBefore.toISOString(),
            }),
          );
          if (rows.length > 0) await record(tx);
          return rows.length > 0;
        });
      }
      if (db.dialect === 'pg') {
        const rows = await db.all(
          completeLoginStatement({
            userId,
            hash,
            at: at.toISOString(),
            liftAfter: liftAfter.toISOString(),
            jti: refresh.jti,
            family: refresh.family,
            expiresAt: refresh.expiresAt.toISOString(),
            userAgent: client.userAgent,
            ip: client.ip,
            purgeBefore: client.purgeBefore.toISOString(),
          }),
        );
        return rows.length > 0;
      }
      return db.transaction(async () => {
        const done = runSync<unknown[]>(recordLoginStatement, { id: userId, at, hash, liftAfter });
        if (done.length === 0) return false;
        runSync(deleteExpiredStatement, { userId, now: at });
        runSync(insertRefreshStatement, refreshValues(refresh, at));
        runSync(sessionStatements.create, {
          id: refresh.family,
          userId,
          at,
          userAgent: client.userAgent,
          ip: client.ip,
        });
        runSync(sessionStatements.purge, { userId, before: client.purgeBefore });
        if (record) await record(orm);
        return true;
      });
    },
  };
}

export type AuthStore = ReturnType<typeof createAuthStore>;
