import { and, eq, isNull, lt, lte, or, sql } from 'drizzle-orm';
import type { Database, Orm } from '../kernel/db/database.js';
import { prepareNamed } from '../kernel/db/sql.js';
import type { CoreTables } from '../kernel/db/tables.js';
import type { AuthUser } from '../kernel/ports.js';
import type { MfaMethod, MfaTables } from './tables.js';

export type MfaConfigRow = MfaTables['mfaConfig']['$inferSelect'];
export type MfaPendingRow = MfaTables['mfaPending']['$inferSelect'];

/** What an enrolment writes (SPEC "MFA enrolment": setup → pending). */
export interface PendingEnrolment {
  userId: string;
  method: MfaMethod;
  totpSecret: string | null;
  backupCodes: string[];
  phoneNumber: string | null;
  pendingCodeHash: string | null;
  pendingCodeExpiresAt: Date | null;
  /** Set when a code is sent; null keeps the previous send time (the cooldown spans method changes). */
  sentAt: Date | null;
  now: Date;
}

/** Every query on the MFA tables (and the reads MFA needs of the core user table). */
/** SPEC-3 §3: writes `mfa.enabled` / `mfa.disabled` with `method` in the change's transaction. */
export type MfaRecord = (tx: Orm, method: string) => Promise<void>;

export function createMfaStore(db: Database, tables: MfaTables, core: Pick<CoreTables, 'user'>) {
  const { mfaConfig: c, mfaPending: p } = tables;
  const u = core.user;
  const orm = db.orm;

  /** Runs `change` (one statement returning the changed rows), with `record` in its transaction when given. */
  async function withRecord(
    change: (tx: Orm) => PromiseLike<unknown[]>,
    record: MfaRecord | undefined,
    method: string,
  ): Promise<boolean> {
    if (!record) return (await change(orm)).length === 1;
    return db.transaction(async (tx) => {
      const done = (await change(tx)).length === 1;
      if (done) await record(tx, method);
      return done;
    });
  }
  // Read by every login (is MFA active?): built once and, on PostgreSQL, a named prepared statement that the
  // server parses and plans once per connection (docs/performance.md "PostgreSQL round trips").
  const configStatement = prepareNamed(
    orm
      .select()
      .from(c)
      .where(eq(c.userId, sql.placeholder('userId'))),
    'svc_mfa_config_by_user',
  );

  /**
   * The method of the user's active MFA configuration, or null: a scalar subquery over the core user table's
   * row, which a password login reads in the statement that finds the user (the `secondFactor` port's
   * `loginState`; docs/performance.md "PostgreSQL round trips"). The primary key lookup of `configStatement`.
   */
  const activeMethod = sql<MfaMethod | null>`(SELECT ${c.method} FROM ${c} WHERE ${and(eq(c.userId, u.id), eq(c.isActive, true))})`;

  return {
    activeMethod,

    async config(userId: string): Promise<MfaConfigRow | undefined> {
      const [row] = await configStatement.execute({ userId });
      return row;
    },

    /**
     * Writes a pending enrolment unless MFA is active or (when `cooldownSince` is given) a code was sent
     * after it, in one statement so that concurrent setups cannot both pass. Null when nothing was written.
     */
    async upsertPending(input: PendingEnrolment, cooldownSince: Date | null): Promise<MfaConfigRow | null> {
      const values = {
        method: input.method,
        isActive: false,
        totpSecret: input.totpSecret,
        lastTotpStep: null,
        backupCodes: JSON.stringify(input.backupCodes),
        phoneNumber: input.phoneNumber,
        pendingCodeHash: input.pendingCodeHash,
        pendingCodeExpiresAt: input.pendingCodeExpiresAt,
        pendingAttempts: 0,
        createdAt: input.now,
        ...(input.sentAt ? { lastSentAt: input.sentAt } : {}),
      };
      const open = eq(c.isActive, false);
      const setWhere = cooldownSince
        ? and(open, or(isNull(c.lastSentAt), lte(c.lastSentAt, cooldownSince)))
        : open;
      const [row] = await orm
        .insert(c)
        .values({ userId: input.userId, ...values })
        .onConflictDoUpdate({ target: c.userId, set: values, setWhere })
        .returning();
      return row ?? null;
    },

    /** Activates a pending TOTP enrolment with the step of the confirm code (it counts as used). */
    async activateTotp(userId: string, secret: string, step: number, record?: MfaRecord): Promise<boolean> {
      const activate = (tx: Orm) =>
        tx
          .update(c)
          .set({ isActive: true, lastTotpStep: step })
          .where(
            and(
              eq(c.userId, userId),
              eq(c.method, 'totp'),
              eq(c.isActive, false),
              eq(c.totpSecret, secret),
              or(isNull(c.lastTotpStep), lt(c.lastTotpStep, step)),
            ),
          )
          .returning({ userId: c.userId });
      return withRecord(activate, record, 'totp');
    },

    /** Counts one confirm attempt of a pending email/SMS code; the new count, or null when none may be made. */
    async countEnrolmentAttempt(
      userId: string,
      method: MfaMethod,
      max: number,
    ): Promise<MfaConfigRow | null> {
      const [row] = await orm
        .update(c)
        .set({ pendingAttempts: sql`${c.pendingAttempts} + 1` })
        .where(
          and(
            eq(c.userId, userId),
            eq(c.method, method),
            eq(c.isActive, false),
            sql`${c.pendingCodeHash} is not null`,
            lt(c.pendingAttempts, max),
          ),
        )
        .returning();
      return row ?? null;
    },

    /** Activates a pending email/SMS enrolment whose code hash is still the one checked. */
    async activateWithCode(
      userId: string,
      method: MfaMethod,
      codeHash: string,
      record?: MfaRecord,
    ): Promise<boolean> {
      const activate = (tx: Orm) =>
        tx
          .update(c)
          .set({ isActive: true, pendingCodeHash: null, pendingCodeExpiresAt: null, pendingAttempts: 0 })
          .where(
            and(
              eq(c.userId, userId),
              eq(c.method, method),
              eq(c.isActive, false),
              eq(c.pendingCodeHash, codeHash),
            ),
          )
          .returning({ userId: c.userId });
      return withRecord(activate, record, method);
    },

    /** Forgets a pending enrolment code (exhausted attempts). */
    async clearEnrolmentCode(userId: string): Promise<void> {
      await orm
        .update(c)
        .set({ pendingCodeHash: null, pendingCodeExpiresAt: null })
        .where(and(eq(c.userId, userId), eq(c.isActive, false)))
        .returning({ userId: c.userId });
    },

    /** Records a used TOTP step if it is later than the last one (SPEC "Multi-factor routes" 4). */
    async consumeTotpStep(userId: string, step: number): Promise<boolean> {
      const rows = await orm
        .update(c)
        .set({ lastTotpStep: step })
        .where(and(eq(c.userId, userId), or(isNull(c.lastTotpStep), lt(c.lastTotpStep, step))))
        .returning({ userId: c.userId });
      return rows.length === 1;
    },

    /** Replaces the backup-code list only if it is still `expected` (compare-and-swap). */
    async swapBackupCodes(userId: string, expected: string, next: string[]): Promise<boolean> {
      const rows = await orm
        .update(c)
        .set({ backupCodes: JSON.stringify(next) })
        .where(and(eq(c.userId, userId), eq(c.backupCodes, expected)))
        .returning({ userId: c.userId });
      return rows.length === 1;
    },

    /** Replaces the backup codes of an active configuration; false when none is active. */
    async replaceBackupCodes(userId: string, hashes: string[]): Promise<boolean> {
      const rows = await orm
        .update(c)
        .set({ backupCodes: JSON.stringify(hashes) })
        .where(and(eq(c.userId, userId), eq(c.isActive, true)))
        .returning({ userId: c.userId });
      return rows.length === 1;
    },

    /** Removes the configuration and the user's pending challenges. */
    /** `record` runs with the deletion of an active configuration, in its transaction (`mfa.disabled`). */
    async deleteConfig(userId: string, record?: MfaRecord): Promise<boolean> {
      const remove = async (tx: Orm) => {
        const rows = await tx
          .delete(c)
          .where(eq(c.userId, userId))
          .returning({ userId: c.userId, method: c.method, isActive: c.isActive });
        await tx.delete(p).where(eq(p.userId, userId)).returning({ id: p.id });
        if (rows[0]?.isActive && record) await record(tx, rows[0].method);
        return rows.length === 1;
      };
      return record ? db.transaction(remove) : remove(orm);
    },

    async createChallenge(row: typeof p.$inferInsert): Promise<void> {
      await orm.insert(p).values(row).returning({ id: p.id });
    },

    /** Drops the user's expired challenges (keeps the table small; each login creates one). */
    async purgeExpiredChallenges(userId: string, now: Date): Promise<void> {
      await orm
        .delete(p)
        .where(and(eq(p.userId, userId), lt(p.expiresAt, now)))
        .returning({ id: p.id });
    },

    async challenge(id: string): Promise<MfaPendingRow | undefined> {
      const [row] = await orm.select().from(p).where(eq(p.id, id));
      return row;
    },

    /**
     * SPEC "Multi-factor routes" 5: counts one attempt before the code is checked, only while fewer than
     * `max` were made, so parallel guesses cannot exceed the limit. The row after counting, or null.
     */
    async countChallengeAttempt(id: string, max: number): Promise<MfaPendingRow | null> {
      const [row] = await orm
        .update(p)
        .set({ attempts: sql`${p.attempts} + 1` })
        .where(and(eq(p.id, id), lt(p.attempts, max)))
        .returning();
      return row ?? null;
    },

    /** Deletes a challenge; true for the one caller that deleted it. */
    async deleteChallenge(id: string): Promise<boolean> {
      const rows = await orm.delete(p).where(eq(p.id, id)).returning({ id: p.id });
      return rows.length === 1;
    },

    /** The user as the ports see it (no secrets), or undefined. */
    async user(userId: string): Promise<AuthUser | undefined> {
      const [row] = await orm
        .select({
          id: u.id,
          username: u.username,
          email: u.email,
          firstName: u.firstName,
          lastName: u.lastName,
          isActive: u.isActive,
          isStaff: u.isStaff,
          isSuperuser: u.isSuperuser,
          emailVerifiedAt: u.emailVerifiedAt,
          lastLoginAt: u.lastLoginAt,
          createdAt: u.createdAt,
          passwordChangedAt: u.passwordChangedAt,
        })
        .from(u)
        .where(eq(u.id, userId));
      return row;
    },

    /** Rows whose TOTP secret is still plain text (`users encrypt-mfa-secrets`). */
    async plainSecrets(): Promise<{ userId: string; totpSecret: string }[]> {
      const rows = await orm
        .select({ userId: c.userId, totpSecret: c.totpSecret })
        .from(c)
        .where(and(sql`${c.totpSecret} is not null`, sql`${c.totpSecret} not like 'enc:%'`));
      return rows as { userId: string; totpSecret: string }[];
    },

    /** Replaces one plain secret by its encrypted form, unless it changed meanwhile. */
    async encryptSecret(userId: string, plain: string, encrypted: string): Promise<boolean> {
      const rows = await orm
        .update(c)
        .set({ totpSecret: encrypted })
        .where(and(eq(c.userId, userId), eq(c.totpSecret, plain)))
        .returning({ userId: c.userId });
      return rows.length === 1;
    },
  };
}

export type MfaStore = ReturnType<typeof createMfaStore>;
