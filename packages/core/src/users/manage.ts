import { and, asc, eq, inArray, ne, sql } from 'drizzle-orm';
import type { Database, Orm } from '../kernel/db/database.js';
import type { CoreTables } from '../kernel/db/tables.js';
import {
  checkUsername,
  describeUsernameProblem,
  normaliseEmail,
  sameEmail,
  usernameLookupKeys,
} from '../kernel/identity.js';
import { textContains } from '../kernel/db/sql.js';
import { insertUser } from '../kernel/db/user-update.js';
import type { AccountChange, WebhookOutbox } from '../kernel/ports.js';
import { toUserOut } from '../kernel/user-out.js';
import { isLastActiveSuperuser, removesSuperuserPower, type StoredUser } from './store.js';

/** What `svc users create` stores (the password already checked by the caller). */
export interface NewUserInput {
  username: string;
  password: string;
  email?: string | null;
  firstName?: string;
  lastName?: string;
  isActive?: boolean;
  isStaff?: boolean;
  isSuperuser?: boolean;
}

/** What `svc users update` changes; `email: null` clears the address. */
export interface UserUpdateInput {
  email?: string | null;
  firstName?: string;
  lastName?: string;
  password?: string;
  isActive?: boolean;
  isStaff?: boolean;
  isSuperuser?: boolean;
}

/** A refusal the command line reports as one line. */
export class UserManagementError extends Error {
  override name = 'UserManagementError';
  constructor(
    readonly reason:
      'user_exists' | 'user_not_found' | 'email_exists' | 'last_superuser' | 'username_invalid',
    message: string,
  ) {
    super(message);
  }
}

/** SPEC "User administration": the shell keeps one active superuser too (it is how one is made again). */
function lastSuperuser(username: string): UserManagementError {
  return new UserManagementError(
    'last_superuser',
    `'${username}' is the last active superuser: make another user superuser first`,
  );
}

export interface UserManagerDeps {
  db: Database;
  tables: Pick<CoreTables, 'user' | 'refreshToken'>;
  hashPassword(password: string): Promise<string>;
  now: () => Date;
  /**
   * Ends the user's links after a change of email or a deactivation (SPEC-3 §7 rule 4; the accounts store's
   * `endLinks`). `svc users update` always gives it; without it no link is ended.
   */
  endLinks?(userId: string, change: AccountChange): Promise<void>;
  /**
   * The webhook outbox (SPEC-3 §3: a change by any command emits its event, in the change's transaction);
   * `svc users` gives it while `webhooks_enabled`. Without it no event is recorded.
   */
  webhooks?: WebhookOutbox;
  /**
   * SPEC-3 §4: a superuser demoted or deactivated ends their impersonations, the end recorded in the activity
   * log (`svc users update` gives it; auth/impersonation-end.ts `endImpersonationsByCommand`).
   */
  endImpersonations?(
    superuser: { id: string; username: string },
    cause: 'demotion' | 'deactivation',
  ): Promise<void>;
  /**
   * Ends the user's sessions after a new password or a deactivation (SPEC "Authentication" 8, SPEC-2
   * "Sessions"), recording the end of an impersonation among them (SPEC-3 §4); `svc users update` gives it.
   * Without it only the refresh records go (in the update's transaction).
   */
  endSessions?(user: { id: string; username: string }): Promise<void>;
  /**
   * Runs in the deletion's transaction before the user row goes (`svc users delete`: the organizations'
   * `beforeUserDeleted`, SPEC-3 §2/§3). Without it nothing else happens. A function it resolves with is
   * called once the deletion has committed (the memberships' live events, SPEC-3 §2).
   */
  beforeDelete?(tx: Orm, userId: string): Promise<void | (() => void)>;
}

/**
 * User maintenance outside HTTP for `svc users` (SPEC "Command-line interface"): the same stored effects as
 * the admin routes, on the auth database directly. Policies (password lengths) stay with the caller, because
 * the CLI's differ from the server's.
 */
export function createUserManager(deps: UserManagerDeps) {
  const { db, tables } = deps;
  const { user, refreshToken } = tables;

  /** The user a name given on the command line means, looked up like a login name (kernel/identity.ts). */
  async function find(username: string): Promise<StoredUser | undefined> {
    const keys = usernameLookupKeys(username);
    if (keys.length === 0) return undefined;
    const rows = await db.orm.select().from(user).where(inArray(user.username, keys));
    for (const key of keys) {
      const row = rows.find((r) => r.username === key);
      if (row) return row;
    }
    return undefined;
  }

  async function assertEmailFree(email: string, exceptId?: string): Promise<void> {
    const same = sameEmail(user.email, email);
    const [row] = await db.orm
      .select({ id: user.id })
      .from(user)
      .where(exceptId ? and(same, ne(user.id, exceptId)) : same)
      .limit(1);
    if (row) throw new UserManagementError('email_exists', `the email ${email} is used by another account`);
  }

  return {
    find,

    /** The user with this id, or undefined. */
    async findById(id: string): Promise<StoredUser | undefined> {
      const [row] = await db.orm.select().from(user).where(eq(user.id, id));
      return row;
    },

    /** Creates a user under the normal form of `input.username`, refused unless it follows the username rule. */
    async create(input: NewUserInput): Promise<StoredUser> {
      const check = checkUsername(input.username);
      if (check.problem) throw new UserManagementError('username_invalid', describeUsernameProblem(check));
      const username = check.username;
      if (await find(input.username)) {
        throw new UserManagementError('user_exists', `user '${username}' already exists`);
      }
      const email = normaliseEmail(input.email);
      if (email) await assertEmailFree(email);
      const passwordHash = await deps.hashPassword(input.password);
      const webhooks = deps.webhooks;
      // SPEC-3 §3: `user.created` with the insert (kernel/db/user-update.ts: one statement on PostgreSQL).
      return insertUser(
        db,
        user,
        {
          username,
          email,
          firstName: input.firstName ?? '',
          lastName: input.lastName ?? '',
          passwordHash,
          isActive: input.isActive ?? true,
          isStaff: input.isStaff ?? false,
          isSuperuser: input.isSuperuser ?? false,
        },
        webhooks?.enabled
          ? {
              record: (tx, row) => webhooks.record(tx, 'user.created', toUserOut(row)),
              recordWith: webhooks.recordWith,
            }
          : {},
      );
    },

    /** Applies `input`; returns the names of the fields that changed (empty: nothing to do). */
    async update(username: string, input: UserUpdateInput): Promise<string[]> {
      const current = await find(username);
      if (!current) throw new UserManagementError('user_not_found', `user '${username}' does not exist`);
      const changes: Partial<typeof user.$inferInsert> = {};
      const changed: string[] = [];
      const email = input.email === undefined ? undefined : normaliseEmail(input.email);
      if (email !== undefined && email !== current.email) {
        if (email) await assertEmailFree(email, current.id);
        changes.email = email;
        // A verification belongs to the address that was verified.
        changes.emailVerifiedAt = null;
        changed.push('email');
      }
      const flags = ['firstName', 'lastName', 'isActive', 'isStaff', 'isSuperuser'] as const;
      for (const field of flags) {
        const value = input[field];
        if (value !== undefined && value !== current[field]) {
          (changes as Record<string, unknown>)[field] = value;
          changed.push(field);
        }
      }
      if (input.password !== undefined) {
        changes.passwordHash = await deps.hashPassword(input.password);
        // SPEC "Account login lock": a CLI password change stamps password_changed_at and lifts the lock.
        changes.passwordChangedAt = deps.now();
        changes.failedLoginCount = 0;
        changes.lockedUntil = null;
        changed.push('password');
      }
      if (changed.length === 0) return changed;
      // SPEC "Authentication" 8: a new password or a deactivation ends every login (refresh records deleted).
      const endLogins = input.password !== undefined || (current.isActive && changes.isActive === false);
      await db.transaction(async (tx) => {
        if (
          removesSuperuserPower(changes) &&
          (await isLastActiveSuperuser(tx, db.dialect, user, current.id))
        ) {
          throw lastSuperuser(username);
        }
        const [row] = await tx.update(user).set(changes).where(eq(user.id, current.id)).returning();
        if (endLogins) await tx.delete(refreshToken).where(eq(refreshToken.userId, current.id));
        // SPEC-3 §3: profile fields, flags or email emit `user.updated`; a password only `user.password_changed`.
        if (deps.webhooks?.enabled && row) {
          if (changed.some((field) => field !== 'password'))
            await deps.webhooks.record(tx, 'user.updated', toUserOut(row));
          if (input.password !== undefined)
            await deps.webhooks.record(tx, 'user.password_changed', {
              userId: row.id,
              username: row.username,
            });
        }
      });
      if (endLogins) await deps.endSessions?.(current);
      // SPEC-3 §7 rule 4: the links sent before the change end with it.
      if (changes.email !== undefined) await deps.endLinks?.(current.id, 'email_changed');
      const deactivated = current.isActive && changes.isActive === false;
      if (deactivated) await deps.endLinks?.(current.id, 'deactivated');
      // SPEC-3 §4: the superuser's impersonations end with the power (the guard refuses them already).
      if (current.isSuperuser && (changes.isSuperuser === false || deactivated))
        await deps.endImpersonations?.(current, deactivated ? 'deactivation' : 'demotion');
      return changed;
    },

    /** Deletes the user; groups, permissions, settings, MFA data and refresh records go through the FK cascades. */
    async remove(username: string): Promise<void> {
      const found = await find(username);
      const committed: { announce?: () => void } = {};
      const rows = found
        ? await db.transaction(async (tx) => {
            if (await isLastActiveSuperuser(tx, db.dialect, user, found.id)) throw lastSuperuser(username);
            const after = await deps.beforeDelete?.(tx, found.id);
            if (typeof after === 'function') committed.announce = after;
            const deleted = await tx
              .delete(user)
              .where(eq(user.id, found.id))
              .returning({ id: user.id, username: user.username });
            if (deleted[0] && deps.webhooks?.enabled)
              await deps.webhooks.record(tx, 'user.deleted', deleted[0]);
            return deleted;
          })
        : [];
      if (rows.length === 0)
        throw new UserManagementError('user_not_found', `user '${username}' does not exist`);
      committed.announce?.();
    },

    /** Users by username; `filter` is a case-insensitive substring of username or email. */
    async list(filter?: string): Promise<StoredUser[]> {
      const text = filter?.trim();
      const contains = text ? textContains(db.dialect, text) : undefined;
      const where = contains
        ? sql`(${contains(user.username)} or ${contains(sql`coalesce(${user.email}, '')`)})`
        : undefined;
      return db.orm.select().from(user).where(where).orderBy(asc(user.username));
    },
  };
}

export type UserManager = ReturnType<typeof createUserManager>;
