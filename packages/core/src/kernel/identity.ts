import { sql, type SQL, type SQLWrapper } from 'drizzle-orm';
import { z } from 'zod';
import { SvcError } from './errors/svc-error.js';
import { UNICODE_SCRIPTS } from './unicode-scripts.js';

// How the service names a user, in one place: user ids, and (below) usernames and email addresses. Every
// feature that takes one of them from a request or the command line goes through these functions, so that
// two spellings of the same identity can never be told apart by one check and confused by the next.

/** A UUID in its 8-4-4-4-12 form, any letter case (SPEC "User": id is a UUID). */
const ANY_CASE_UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Whether `value` is a UUID in any letter case (a token's `sub`: PostgreSQL's `uuid` type ignores case). */
export function isUuid(value: string): boolean {
  return ANY_CASE_UUID.test(value);
}

/** Whether `value` is a user id in its stored, lower-case form. */
export function isCanonicalUuid(value: string): boolean {
  // Stored ids are the lower-case form `randomUUID()` produces.
  return ANY_CASE_UUID.test(value) && value === value.toLowerCase();
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
// The user and the token pair, as every feature sees them

/** The user as the kernel and features see it (camelCase fields of SPEC "User", without secrets). */
export interface AuthUser {
  id: string;
  username: string;
  email: string | null;
  firstName: string;
  lastName: string;
  isActive: boolean;
  isStaff: boolean;
  isSuperuser: boolean;
  emailVerifiedAt: Date | null;
  lastLoginAt: Date | null;
  createdAt: Date;
  passwordChangedAt: Date | null;
  /**
   * The session (login) of the access token the request came with (SPEC-2 "Sessions": its `sid` claim);
   * absent for tokens issued before sessions existed and outside a request.
   */
  sessionId?: string;
  /**
   * When the session of the request's access token began with a login (SPEC-3 §7 rule 1: its `auth_time`
   * claim, seconds since the epoch; a refresh keeps it). Absent for personal tokens and older access tokens.
   */
  authTime?: number;
  /**
   * SPEC-3 §4: the superuser impersonating this user (the `act` claim of an impersonation session's token,
   * checked against the session in the guard's query); absent otherwise.
   */
  impersonatorId?: string;
  /**
   * Whether the account has a usable password (SPEC-3 section 1: `GET /auth/user` says `hasPassword`); set by
   * the authenticator from the row it reads anyway, absent outside a request.
   */
  hasPassword?: boolean;
}

/** The stored user fields an {@link AuthUser} is read from (a row of the user table, with or without secrets). */
export interface StoredUserFields {
  id: string;
  username: string;
  email?: string | null;
  firstName: string;
  lastName: string;
  isActive: boolean;
  isStaff: boolean;
  isSuperuser: boolean;
  emailVerifiedAt?: Date | null;
  lastLoginAt?: Date | null;
  createdAt: Date;
  passwordChangedAt?: Date | null;
}

/**
 * The user without its secrets and lock state (the password hash, `failed_login_count`, `locked_until` stay
 * behind). One mapping for every feature that loads a user row.
 * @example const user = toAuthUser(await store.userById(id));
 */
export function toAuthUser(row: StoredUserFields): AuthUser {
  return {
    id: row.id,
    username: row.username,
    email: row.email ?? null,
    firstName: row.firstName,
    lastName: row.lastName,
    isActive: row.isActive,
    isStaff: row.isStaff,
    isSuperuser: row.isSuperuser,
    emailVerifiedAt: row.emailVerifiedAt ?? null,
    lastLoginAt: row.lastLoginAt ?? null,
    createdAt: row.createdAt,
    passwordChangedAt: row.passwordChangedAt ?? null,
  };
}

/** The token pair of a completed login: login, refresh and MFA verify (SPEC "Authentication routes": OAuth2, snake_case). */
export interface TokenPair {
  access_token: string;
  token_type: 'bearer';
  refresh_token: string;
}

// ---------------------------------------------------------------------------------------------------------------
// Passwords

/**
 * The password policy (SPEC "User": `password_min_length`), for the HTTP routes and the command line alike.
 * @example if (!meetsPasswordPolicy(password, settings.password_min_length)) …
 */
export function meetsPasswordPolicy(password: string, minLength: number): boolean {
  return password.length >= minLength;
}

/**
 * 422 `auth.password_too_short` with `params.min_length` unless `password` follows the policy.
 * @example assertPasswordPolicy(body.newPassword, settings.password_min_length, ['body', 'newPassword']);
 */
export function assertPasswordPolicy(password: string, minLength: number, loc: (string | number)[]): void {
  if (!meetsPasswordPolicy(password, minLength)) {
    throw new SvcError('auth.password_too_short', { loc, params: { min_length: minLength } });
  }
}

/** One line saying what the policy asks, for the command line. */
export function describePasswordPolicy(minLength: number): string {
  return `the password must be at least ${minLength} characters long (password_min_length)`;
}

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

// ---------------------------------------------------------------------------------------------------------------
// Usernames

/** SPEC "User" and "Limits": 3 to 150 characters, counted as code points of the normal form (as `varchar`). */
export const USERNAME_MIN_LENGTH = 3;
/** SPEC "User" and "Limits": 3 to 150 characters. */
export const USERNAME_MAX_LENGTH = 150;

/** Why a username is refused: its length, a character nobody can see or trust, or letters of several scripts. */
export type UsernameProblem = 'length' | 'characters' | 'mixed_scripts';

/** The outcome of `checkUsername`. */
export interface UsernameCheck {
  /** The normal form (what is stored and compared). */
  username: string;
  problem: UsernameProblem | null;
  /** With `characters`: the first refused character, as `U+XXXX`. */
  character?: string;
  /** With `mixed_scripts`: the scripts found, sorted. */
  scripts?: string[];
}

/**
 * The normal form of a username (SPEC "User": trimmed and lower-cased): NFKC first, so compatibility forms
 * (full-width `ＡＤＭＩＮ`, the ligature `ﬁ`, a no-break space) become the plain characters they stand for,
 * then lower case, then trimmed.
 * @example normaliseUsername(' ＡＤＭＩＮ ') // 'admin'
 */
export function normaliseUsername(raw: string): string {
  return raw.normalize('NFKC').toLowerCase().normalize('NFKC').trim();
}

/**
 * Characters a username may not hold: controls, format characters (zero-width, soft hyphen, bidi controls and
 * isolates), everything Unicode calls default-ignorable (rendered as nothing: variation selectors, Hangul
 * fillers, tags), surrogates, private use, unassigned code points, line and paragraph separators, whitespace
 * other than a single space, and two spaces in a row (HTML shows them as one).
 */
const REFUSED_CHARACTER =
  /[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}\p{Bidi_Control}]|(?! )\s| (?=\s)/u;

/** Characters of every script: digits, punctuation, symbols (`Common`) and combining marks (`Inherited`). */
const ANY_SCRIPT = /[\p{Script=Common}\p{Script=Inherited}]/u;

/**
 * UTS #39 "highly restrictive": a name is written in one script, or in Latin plus the scripts of one East Asian
 * writing system, which mixes scripts by nature (Japanese kana with kanji, Chinese with Bopomofo, Korean with
 * Hanja).
 */
const WRITING_SYSTEMS = [
  ['Latin', 'Han', 'Hiragana', 'Katakana'],
  ['Latin', 'Han', 'Bopomofo'],
  ['Latin', 'Han', 'Hangul'],
];

let scriptPatterns: [string, RegExp][] | undefined;

/** `\p{Script=…}` of every script the running engine knows, built on first use. */
function scriptsOfEngine(): [string, RegExp][] {
  if (!scriptPatterns) {
    scriptPatterns = [];
    for (const name of UNICODE_SCRIPTS) {
      try {
        scriptPatterns.push([name, new RegExp(`\\p{Script=${name}}`, 'u')]);
      } catch {
        // A script newer than this engine's Unicode tables: its characters are unassigned (refused) here.
      }
    }
  }
  return scriptPatterns;
}

/** The scripts of the letters of `text`, leaving out characters common to all scripts. */
function scriptsOf(text: string): Set<string> {
  const found = new Set<string>();
  let last: [string, RegExp] | undefined;
  for (const ch of text) {
    if (ANY_SCRIPT.test(ch)) continue;
    // Names are mostly in one script: try the last one found before scanning the list.
    if (!last?.[1].test(ch)) last = scriptsOfEngine().find(([, pattern]) => pattern.test(ch));
    found.add(last?.[0] ?? 'Unknown');
  }
  return found;
}

function codePointLabel(ch: string): string {
  return `U+${ch.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;
}

/**
 * The username rule, for every new name (registration, `svc users create`, `svc init`): the normal form
 * (`normaliseUsername`) must have 3 to 150 characters, hold no invisible, control or unassigned character, and be
 * written in one script (Latin with Cyrillic or Greek letters is refused: `аdmin` with a Cyrillic `а` would look
 * like `admin` in every list). Names stored before the rule are not checked again: they keep working.
 * @example checkUsername('аdmin') // { username: 'аdmin', problem: 'mixed_scripts', scripts: ['Cyrillic', 'Latin'] }
 */
export function checkUsername(raw: string): UsernameCheck {
  const username = normaliseUsername(raw);
  const length = [...username].length;
  if (length < USERNAME_MIN_LENGTH || length > USERNAME_MAX_LENGTH) return { username, problem: 'length' };
  const refused = REFUSED_CHARACTER.exec(username);
  if (refused) return { username, problem: 'characters', character: codePointLabel(refused[0]) };
  const scripts = scriptsOf(username);
  const oneSystem =
    scripts.size <= 1 || WRITING_SYSTEMS.some((system) => [...scripts].every((s) => system.includes(s)));
  if (!oneSystem) return { username, problem: 'mixed_scripts', scripts: [...scripts].sort() };
  return { username, problem: null };
}

/**
 * The normal form of a new username, or 422 `user.username_invalid` with `params.reason` (`length`,
 * `characters`, `mixed_scripts`), `min_length`, `max_length` and, where they apply, `character` or `scripts`.
 * @example const username = assertValidUsername(body.username); // at registration
 */
export function assertValidUsername(raw: string, loc: (string | number)[] = ['body', 'username']): string {
  const check = checkUsername(raw);
  if (check.problem === null) return check.username;
  throw new SvcError('user.username_invalid', {
    loc,
    params: {
      reason: check.problem,
      min_length: USERNAME_MIN_LENGTH,
      max_length: USERNAME_MAX_LENGTH,
      ...(check.character ? { character: check.character } : {}),
      ...(check.scripts ? { scripts: check.scripts } : {}),
    },
  });
}

/** One line saying why a username is refused, for the command line. */
export function describeUsernameProblem(check: UsernameCheck): string {
  switch (check.problem) {
    case 'length':
      return `the username must be ${USERNAME_MIN_LENGTH} to ${USERNAME_MAX_LENGTH} characters long`;
    case 'characters':
      return `the username holds an invisible or control character (${check.character})`;
    case 'mixed_scripts':
      return `the username mixes scripts (${check.scripts?.join(', ')}): write it in one`;
    default:
      return 'the username is valid';
  }
}

/**
 * The stored usernames a login name may mean, in the order to try them: the name as written (trimmed and
 * lower-cased, the form names had before the rule, so such names keep logging in) and its normal form (so
 * `ＡＤＭＩＮ` logs in as `admin`, like `Admin` does). One key for any plain ASCII name; none for a blank one.
 * @example usernameLookupKeys('ＡＤＭＩＮ') // ['ａｄｍｉｎ', 'admin']
 */
export function usernameLookupKeys(raw: string): string[] {
  return [...new Set([raw.trim().toLowerCase(), normaliseUsername(raw)])].filter((key) => key !== '');
}

/**
 * True when `stored` is an Argon2 PHC string a password can match; false for the markers of accounts
 * without a usable password (an invitation not accepted yet: `!invited`; a social login's account: `!social`).
 */
export function isUsableHash(stored: string | null | undefined): stored is string {
  return typeof stored === 'string' && stored.startsWith('$argon2');
}
