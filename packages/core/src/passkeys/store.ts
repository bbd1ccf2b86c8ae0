import { and, asc, count, eq, inArray, lt } from 'drizzle-orm';
import type { Database } from '../kernel/db/database.js';
import type { CoreTables } from '../kernel/db/tables.js';
import { toAuthUser } from '../kernel/identity.js';
import type { AuthUser } from '../kernel/ports.js';
import type { PasskeyTables } from './tables.js';

export type PasskeyRow = PasskeyTables['passkey']['$inferSelect'];

/** Every query on the passkey table (and the reads of the core user table a passkey login needs). */
export function createPasskeyStore(db: Database, tables: PasskeyTables, core: Pick<CoreTables, 'user'>) {
  const { passkey: k } = tables;
  const u = core.user;
  const orm = db.orm;

  return {
    /** The user's passkeys, oldest first (one indexed query). */
    async list(userId: string): Promise<PasskeyRow[]> {
      return orm.select().from(k).where(eq(k.userId, userId)).orderBy(asc(k.createdAt), asc(k.id));
    },

    /** How many passkeys the user has (SPEC-3 §7 rule 1: `passkeys_max_per_user`). */
    async count(userId: string): Promise<number> {
      const [row] = await orm.select({ n: count() }).from(k).where(eq(k.userId, userId));
      return Number(row?.n ?? 0);
    },

    async byCredentialId(credentialId: string): Promise<PasskeyRow | undefined> {
      const [row] = await orm.select().from(k).where(eq(k.credentialId, credentialId));
      return row;
    },

    /** Stores a registered credential; false when its credential id is registered already. */
    async insert(row: PasskeyRow): Promise<boolean> {
      const rows = await orm
        .insert(k)
        .values(row)
        .onConflictDoNothing({ target: k.credentialId })
        .returning({ id: k.id });
      return rows.length === 1;
    },

    async rename(userId: string, id: string, name: string): Promise<PasskeyRow | undefined> {
      const [row] = await orm
        .update(k)
        .set({ name })
        .where(and(eq(k.id, id), eq(k.userId, userId)))
        .returning();
      return row;
    },

    async remove(userId: string, id: string): Promise<boolean> {
      const rows = await orm
        .delete(k)
        .where(and(eq(k.id, id), eq(k.userId, userId)))
        .returning({ id: k.id });
      return rows.length === 1;
    },

    /**
     * Records a use with the authenticator's new signature counter, only while the stored one is below it (or
     * both are 0: an authenticator without a counter). False when another assertion raised it meanwhile: the
     * counter went backwards (WebAuthn "Verifying an Authentication Assertion" step 21).
     */
    async recordUse(id: string, counter: number, at: Date): Promise<boolean> {
      const rows = await orm
        .update(k)
        .set({ counter, lastUsedAt: at })
        .where(and(eq(k.id, id), counter === 0 ? eq(k.counter, 0) : lt(k.counter, counter)))
        .returning({ id: k.id });
      return rows.length === 1;
    },

    /** The user as the ports see it (kernel/identity.ts drops the secrets), or undefined. */
    async user(userId: string): Promise<AuthUser | undefined> {
      const [row] = await orm.select().from(u).where(eq(u.id, userId));
      return row ? toAuthUser(row) : undefined;
    },

    /**
     * The user a login name means, in one query whatever the name: the first of `keys` (kernel/identity.ts
     * `usernameLookupKeys`, in their order) that names a user, as `svc users` and the password login find it.
     */
    async userIdByUsername(keys: string[]): Promise<string | undefined> {
      if (keys.length === 0) return undefined;
      const rows = await orm
        .select({ id: u.id, username: u.username })
        .from(u)
        .where(inArray(u.username, keys));
      for (const key of keys) {
        const row = rows.find((r) => r.username === key);
        if (row) return row.id;
      }
      return undefined;
    },
  };
}

export type PasskeyStore = ReturnType<typeof createPasskeyStore>;
