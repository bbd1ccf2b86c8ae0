import { eq, sql } from 'drizzle-orm';
import { tableName, type Settings } from '../config/schema.js';
import { isUsableHash } from '../identity.js';
import type { Database, Orm } from './database.js';
import { allIn, forUpdate } from './sql.js';
import type { CoreTables } from './tables.js';

/** The ways a user can log in (SPEC-3 section 1 `auth.last_login_method`), read under the user's lock. */
export interface SignInMethods {
  /** An Argon2 hash a password can match (not a marker such as `!social` or `!invited`). */
  hasPassword: boolean;
  identities: number;
  passkeys: number;
}

/**
 * SPEC-3 section 1: an account without a password keeps a passkey or an identity. Every deletion of a way to
 * log in (an identity unlinked, a passkey deleted) runs its check and its deletion inside `db.transaction`,
 * starting with this call: it locks the user's row (PostgreSQL `FOR UPDATE`; SQLite write transactions are
 * serialised) and counts the user's passkeys and identities. The deletions of both kinds thus take the same
 * per-user lock, so two of them sent together never both pass the check on what the other removes. The tables
 * of the two modules are read by their configured names (one schema whatever the settings, so they exist);
 * undefined when there is no such user.
 */
export async function lockSignInMethods(
  db: Database,
  tx: Orm,
  settings: Settings,
  user: CoreTables['user'],
  userId: string,
): Promise<SignInMethods | undefined> {
  const [owner] = await forUpdate(
    db.dialect,
    tx.select({ passwordHash: user.passwordHash }).from(user).where(eq(user.id, userId)),
  );
  if (!owner) return undefined;
  const passkeys = sql.identifier(tableName(settings, 'passkey'));
  const identities = sql.identifier(tableName(settings, 'user_identity'));
  const [counts] = await allIn<{ passkeys: number | string; identities: number | string }>(
    tx,
    db.dialect,
    sql`select (select count(*) from ${passkeys} where user_id = ${userId}) as passkeys,
               (select count(*) from ${identities} where user_id = ${userId}) as identities`,
  );
  return {
    hasPassword: isUsableHash(owner.passwordHash),
    identities: Number(counts?.identities ?? 0),
    passkeys: Number(counts?.passkeys ?? 0),
  };
}
