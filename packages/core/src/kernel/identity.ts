import { sql, type SQL, type SQLWrapper } from 'drizzle-orm';
import { z } from 'zod';

// How the service names a user, in one place: user ids, and (below) usernames and email addresses. Every
// feature that takes one of them from a request or the command line goes through these functions, so that
// two spellings of the same identity can never be told apart by one check and confused by the next.

/** A user id as stored: the lower-case 8-4-4-4-12 form `randomUUID()` produces (SPEC "User": id is a UUID). */
const CANONICAL_UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ANY_CASE_UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Whether `value` is a user id in its stored, lower-case form. */
export function isCanonicalUuid(value: string): boolean {
  return CANONICAL_UUID.test(value);
}

/** The stored (lower-case) form of a UUID written in any letter case; `null` when `value` is not a UUID. */
export function canonicalUuid(value: string): string | null {
  return ANY_CASE_UUID.test(value) ? value.toLowerCase() : null;
}

/**
 * A `user_id` path parameter. A UUID in any letter case becomes its lower-case form here, where the path is
 * parsed, so every handler, guard and event compares the id PostgreSQL's `uuid` type would match (it ignores
 * case while SQLite compares text). Anything else passes unchanged: the services answer 404 `user.not_found`
 * for it (SPEC "User administration"), which a 422 here would change.
 */
export const UserIdParam = z
  .string()
  .max(64)
  .transform((value) => canonicalUuid(value) ?? value);

/** A user id in a query filter (`userId`): a UUID in any letter case, passed on in its stored form. */
export const UserIdQuery = z.uuid().transform((value) => value.toLowerCase());

// ---------------------------------------------------------------------------------------------------------------
// Email addresses

/**
 * An email address as it is stored: trimmed, in the letter case the user wrote (it is shown back to them and
 * used to send MFA codes); `null` for none (SPEC "User": an empty value clears it).
 * @example normaliseEmail('  Alice@Example.com ') // 'Alice@Example.com'
 */
export function normaliseEmail(raw: string | null | undefined): string | null {
  const email = raw?.trim() ?? '';
  return email === '' ? null : email;
}

/**
 * SQL condition: `column` holds `email`, regardless of letter case (SPEC "User": unique across accounts). Both
 * sides go through the database's `lower()`, the expression of the unique index on the user table
 * (kernel/db/tables.ts), so a lookup finds exactly the addresses the index would call duplicates.
 * @example orm.select().from(user).where(sameEmail(user.email, 'ALICE@example.com'))
 */
export function sameEmail(column: SQLWrapper, email: string): SQL {
  return sql`lower(${column}) = lower(${email})`;
}
