import { and, eq, gt, inArray, isNotNull, isNull, lt, or, sql } from 'drizzle-orm';
import type { Database, Orm } from '../kernel/db/database.js';
import type { CoreTables } from '../kernel/db/tables.js';
import { sameEmail } from '../kernel/identity.js';
import { insertUser } from '../kernel/db/user-update.js';
import type { AccountChange, WebhookOutbox } from '../kernel/ports.js';
import { INVITED_PASSWORD_HASH } from './constants.js';
import type { AccountTables, AccountTokenPurpose } from './tables.js';

/** SPEC-3 §7 rule 4: the link purposes each change of an account ends. */
const ENDED_BY: Record<AccountChange, AccountTokenPurpose[]> = {
  email_changed: ['password_reset', 'email_verify'],
  deactivated: ['password_reset', 'email_verify', 'invitation'],
};

export interface IssuedToken {
  digest: string;
  purpose: AccountTokenPurpose;
  userId: string;
  email: string;
  expiresAt: Date;
  createdAt: Date;
}

/** Account tokens and the user fields the account routes read (one indexed statement each). */
export function createAccountStore(db: Database, tables: AccountTables, core: CoreTables) {
  const { accountToken: t } = tables;
  const { user } = core;
  /** What the account routes read of a user; `invited`: the invitation is not accepted yet. */
  const accountFields = {
    id: user.id,
    email: user.email,
    isActive: user.isActive,
    passwordChangedAt: user.passwordChangedAt,
    emailVerifiedAt: user.emailVerifiedAt,
    invited: sql<boolean>`${user.passwordHash} = ${INVITED_PASSWORD_HASH}`,
  };
  return {
    async userByEmail(email: string) {
      const [row] = await db.orm
        .select(accountFields)
        .from(user)
        .where(sameEmail(user.email, email))
        .limit(1);
      return row;
    },
    async userById(id: string) {
      const [row] = await db.orm.select(accountFields).from(user).where(eq(user.id, id)).limit(1);
      return row;
    },
    /**
     * Stores a new token of `purpose` for the user: the user's earlier unused tokens of that purpose stop
     * working, and the user's expired or used rows go (SPEC-2 "One-time account tokens").
     */
    async issue(token: IssuedToken, now: Date): Promise<void> {
      await db.orm
        .delete(t)
        .where(
          and(
            eq(t.userId, token.userId),
            or(eq(t.purpose, token.purpose), lt(t.expiresAt, now), isNotNull(t.usedAt)),
          ),
        );
      await db.orm.insert(t).values({ ...token, usedAt: null });
    },
    /**
     * Ends the user's unused links a change of the account ends (SPEC-3 §7 rule 4). The one home of that
     * rule: the `accounts` port of the server and `svc users update` both call it.
     */
    async endLinks(userId: string, change: AccountChange): Promise<void> {
      await db.orm
        .delete(t)
        .where(and(eq(t.userId, userId), inArray(t.purpose, ENDED_BY[change]), isNull(t.usedAt)));
    },
    /** The unused, unexpired token of `purpose` with this digest. */
    async findUsable(digest: string, purpose: AccountTokenPurpose, now: Date) {
      const [row] = await db.orm
        .select()
        .from(t)
        .where(and(eq(t.digest, digest), eq(t.purpose, purpose), isNull(t.usedAt), gt(t.expiresAt, now)))
        .limit(1);
      return row;
    },
    /** The whole user row with this address (any letter case). */
    async accountByEmail(email: string) {
      const [row] = await db.orm.select().from(user).where(sameEmail(user.email, email)).limit(1);
      return row;
    },
    async accountById(id: string) {
      return (await db.orm.select().from(user).where(eq(user.id, id)).limit(1))[0];
    },
    async usernameTaken(username: string): Promise<boolean> {
      const rows = await db.orm
        .select({ id: user.id })
        .from(user)
        .where(eq(user.username, username))
        .limit(1);
      return rows.length > 0;
    },
    /** The ids among `groupIds` that name no group. */
    async unknownGroups(groupIds: number[]): Promise<number[]> {
      if (groupIds.length === 0) return [];
      const found = await db.orm
        .select({ id: core.group.id })
        .from(core.group)
        .where(inArray(core.group.id, groupIds));
      const known = new Set(found.map((g) => g.id));
      return groupIds.filter((id) => !known.has(id));
    },
    /**
     * An invited user: active, without a usable password (the marker never verifies), email unverified,
     * in the given groups (checked by the caller with `unknownGroups`). `record` writes the `user.created`
     * event in the insert's transaction; with `recordWith` (PostgreSQL, webhooks on) and no groups, the insert
     * and its event are one statement instead.
     */
    async insertInvited(
      values: {
        username: string;
        email: string;
        firstName: string;
        lastName: string;
        isStaff: boolean;
        groupIds: number[];
      },
      record?: (tx: Orm, row: typeof user.$inferSelect) => Promise<void>,
      recordWith?: WebhookOutbox['recordWith'],
    ) {
      const { groupIds, ...fields } = values;
      const invited = { ...fields, isActive: true, isSuperuser: false, passwordHash: INVITED_PASSWORD_HASH };
      // SPEC-3 §3: the `user.created` webhook event with the user and their groups (kernel/db/user-update.ts).
      return insertUser(db, user, invited, {
        record,
        recordWith,
        ...(groupIds.length > 0
          ? {
              alsoWrite: async (tx: Orm, row: typeof user.$inferSelect) => {
                await tx
                  .insert(core.userGroup)
                  .values(groupIds.map((groupId) => ({ userId: row.id, groupId })));
              },
            }
          : {}),
      });
    },
    /**
     * Uses the verification token and sets `emailVerifiedAt` when the address is still `email` and not verified
     * yet, in one transaction; `record` gets the verified row there (SPEC-3 §3: `user.updated` in the change's
     * transaction). False when another presentation used the token first (one winner).
     */
    async verify(
      digest: string,
      userId: string,
      email: string,
      at: Date,
      record?: (tx: Orm, row: typeof user.$inferSelect) => Promise<void>,
    ): Promise<boolean> {
      return db.transaction(async (tx) => {
        const used = await tx
          .update(t)
          .set({ usedAt: at })
          .where(and(eq(t.digest, digest), isNull(t.usedAt), gt(t.expiresAt, at)))
          .returning({ digest: t.digest });
        if (used.length !== 1) return false;
        const [row] = await tx
          .update(user)
          .set({ emailVerifiedAt: at })
          .where(and(eq(user.id, userId), sameEmail(user.email, email), isNull(user.emailVerifiedAt)))
          .returning();
        if (row && record) await record(tx, row);
        return true;
      });
    },
    /** Marks the token used; false when another presentation used it first (one statement: one winner). */
    async consume(digest: string, now: Date): Promise<boolean> {
      const rows = await db.orm
        .update(t)
        .set({ usedAt: now })
        .where(and(eq(t.digest, digest), isNull(t.usedAt), gt(t.expiresAt, now)))
        .returning({ digest: t.digest });
      return rows.length === 1;
    },
  };
}

export type AccountStore = ReturnType<typeof createAccountStore>;
