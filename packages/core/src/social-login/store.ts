import { randomUUID } from 'node:crypto';
import { and, asc, count, eq, sql } from 'drizzle-orm';
import { tableName, type Settings } from '../kernel/config/schema.js';
import type { Database, Orm } from '../kernel/db/database.js';
import type { CoreTables } from '../kernel/db/tables.js';
import { allIn, forUpdate } from '../kernel/db/sql.js';
import { mapDatabaseError } from '../kernel/errors/format.js';
import { sameEmail } from '../kernel/identity.js';
import type { SocialLoginTables } from './tables.js';

export type IdentityRow = SocialLoginTables['userIdentity']['$inferSelect'];
export type UserRow = CoreTables['user']['$inferSelect'];

/**
 * The webhook outbox's part of a change (SPEC-3 §3): run in the change's transaction with the changed row, so
 * the event commits or rolls back with it. Absent while webhooks are off (the change keeps its one statement).
 */
export type RecordIn<R> = (tx: Orm, row: R) => Promise<void>;

/** True when `error` is a unique-constraint violation (either dialect). */
function isConflict(error: unknown): boolean {
  return mapDatabaseError(error)?.code === 'db.conflict';
}

/**
 * Every query on the identity table, and the reads and writes of the core user table a social login needs
 * (SPEC-3 section 1). The passkey table is another module's: the count of a user's passkeys (the last-login-method
 * rule) reads it by its configured name, without importing that module.
 */
export function createSocialLoginStore(
  db: Database,
  settings: Settings,
  tables: SocialLoginTables,
  core: Pick<CoreTables, 'user'>,
) {
  const { userIdentity: i } = tables;
  const u = core.user;
  const orm = db.orm;
  const passkeyTable = tableName(settings, 'passkey');

  return {
    /** The identity `(issuer, subject)`, with one indexed query (the unique index). */
    async byIssuerSubject(issuer: string, subject: string): Promise<IdentityRow | undefined> {
      const [row] = await orm
        .select()
        .from(i)
        .where(and(eq(i.issuer, issuer), eq(i.subject, subject)));
      return row;
    },

    /**
     * The identity `(issuer, subject)` with its user, in one indexed query (the unique index, then the user's
     * primary key): what a login through an identity reads before the login's own statements.
     */
    async withUser(
      issuer: string,
      subject: string,
    ): Promise<{ identity: IdentityRow; user: UserRow } | undefined> {
      const [row] = await orm
        .select({ identity: i, user: u })
        .from(i)
        .innerJoin(u, eq(u.id, i.userId))
        .where(and(eq(i.issuer, issuer), eq(i.subject, subject)));
      return row;
    },

    async list(userId: string): Promise<IdentityRow[]> {
      return orm.select().from(i).where(eq(i.userId, userId)).orderBy(asc(i.createdAt), asc(i.id));
    },

    /**
     * Links the identity to `userId`; the row that holds the identity afterwards (another user's when a
     * concurrent callback linked it first: the unique index decides).
     */
    async link(
      values: {
        userId: string;
        provider: string;
        issuer: string;
        subject: string;
        email: string | null;
        at: Date;
      },
      record?: RecordIn<IdentityRow>,
    ): Promise<{ row: IdentityRow; created: boolean }> {
      const insert = (q: Orm) =>
        q
          .insert(i)
          .values({
            id: randomUUID(),
            userId: values.userId,
            provider: values.provider,
            issuer: values.issuer,
            subject: values.subject,
            email: values.email,
            createdAt: values.at,
            lastUsedAt: values.at,
          })
          .onConflictDoNothing({ target: [i.issuer, i.subject] })
          .returning();
      // `identity.linked` is stored only when this call linked it (DO NOTHING leaves the transaction usable).
      const inserted = record
        ? await db.transaction(async (tx) => {
            const rows = await insert(tx);
            if (rows[0]) await record(tx, rows[0]);
            return rows;
          })
        : await insert(orm);
      if (inserted[0]) return { row: inserted[0], created: true };
      const existing = await this.byIssuerSubject(values.issuer, values.subject);
      if (!existing) throw new Error('identity vanished between insert and read');
      return { row: existing, created: false };
    },

    /** SPEC-3 section 1: each login through an identity updates its `email` and `lastUsedAt`. */
    async recordUse(id: string, email: string | null, at: Date): Promise<void> {
      await orm.update(i).set({ email, lastUsedAt: at }).where(eq(i.id, id));
    },

    /** Deletes the user's identity; the deleted row, or undefined (unknown, or another user's). */
    async remove(
      userId: string,
      id: string,
      record?: RecordIn<IdentityRow>,
    ): Promise<IdentityRow | undefined> {
      const remove = async (q: Orm) => {
        const [row] = await q
          .delete(i)
          .where(and(eq(i.id, id), eq(i.userId, userId)))
          .returning();
        return row;
      };
      if (!record) return remove(orm);
      return db.transaction(async (tx) => {
        const row = await remove(tx);
        if (row) await record(tx, row);
        return row;
      });
    },

    /**
     * Deletes the user's identity unless `keeps` says the account would be left without a way to log in
     * (SPEC-3 section 1 `auth.last_login_method`): the check and the deletion in one transaction that locks the
     * user's row first (PostgreSQL `FOR UPDATE`; SQLite transactions are serialised), so two unlinks of the
     * last two identities cannot both pass the check. The deleted row, `'not_found'` or `'last'`.
     */
    async removeUnlessLast(
      userId: string,
      id: string,
      keeps: (facts: { passwordHash: string | null; identities: number; passkeys: number }) => boolean,
      record?: RecordIn<IdentityRow>,
    ): Promise<IdentityRow | 'not_found' | 'last'> {
      return db.transaction(async (tx) => {
        const [owner] = await forUpdate(
          db.dialect,
          tx.select({ passwordHash: u.passwordHash }).from(u).where(eq(u.id, userId)),
        );
        if (!owner) return 'not_found';
        const identities = await tx.select({ id: i.id }).from(i).where(eq(i.userId, userId));
        if (!identities.some((row) => row.id === id)) return 'not_found';
        const [passkeys] = await allIn<{ n: number | string }>(
          tx,
          db.dialect,
          sql`select count(*) as n from ${sql.identifier(passkeyTable)} where user_id = ${userId}`,
        );
        const facts = {
          passwordHash: owner.passwordHash,
          identities: identities.length,
          passkeys: Number(passkeys?.n ?? 0),
        };
        if (!keeps(facts)) return 'last';
        const [row] = await tx
          .delete(i)
          .where(and(eq(i.id, id), eq(i.userId, userId)))
          .returning();
        if (!row) return 'not_found';
        if (record) await record(tx, row);
        return row;
      });
    },

    async identityCount(userId: string): Promise<number> {
      const [row] = await orm.select({ n: count() }).from(i).where(eq(i.userId, userId));
      return Number(row?.n ?? 0);
    },

    /** How many passkeys the user has. */
    async passkeyCount(userId: string): Promise<number> {
      const [first] = await db.all<{ n: number | string }>(
        sql`select count(*) as n from ${sql.identifier(passkeyTable)} where user_id = ${userId}`,
      );
      return Number(first?.n ?? 0);
    },

    async user(userId: string): Promise<UserRow | undefined> {
      const [row] = await orm.select().from(u).where(eq(u.id, userId));
      return row;
    },

    /** The account holding `email`, compared without regard to letter case (the unique index's expression). */
    async userByEmail(email: string): Promise<UserRow | undefined> {
      const [row] = await orm.select().from(u).where(sameEmail(u.email, email)).limit(1);
      return row;
    },

    /**
     * Creates the account of a first social login (SPEC-3 section 1 rule 4): the username made unique by a
     * numeric suffix; undefined when the email was taken meanwhile (a concurrent registration).
     */
    async createUser(
      values: {
        username: (attempt: number) => string;
        email: string | null;
        firstName: string;
        lastName: string;
        passwordHash: string;
        emailVerifiedAt: Date | null;
      },
      record?: RecordIn<UserRow>,
    ): Promise<UserRow | undefined> {
      for (let attempt = 0; attempt < 50; attempt++) {
        const username = values.username(attempt);
        const [taken] = await orm.select({ id: u.id }).from(u).where(eq(u.username, username));
        if (taken) continue;
        try {
          const insert = async (q: Orm) => {
            const [row] = await q
              .insert(u)
              .values({
                username,
                email: values.email,
                firstName: values.firstName,
                lastName: values.lastName,
                passwordHash: values.passwordHash,
                isActive: true,
                isStaff: false,
                isSuperuser: false,
                emailVerifiedAt: values.emailVerifiedAt,
              })
              .returning();
            return row;
          };
          // A conflict throws out of the transaction (rolled back, event included) into the catch below.
          if (!record) return await insert(orm);
          return await db.transaction(async (tx) => {
            const row = await insert(tx);
            if (row) await record(tx, row);
            return row;
          });
        } catch (error) {
          if (!isConflict(error)) throw error;
          if (values.email && (await this.userByEmail(values.email))) return undefined;
          // The username was taken meanwhile: the next suffix.
        }
      }
      throw new Error('no free username after 50 attempts');
    },
  };
}

export type SocialLoginStore = ReturnType<typeof createSocialLoginStore>;
