import type { Settings } from '../kernel/config/schema.js';
import { mapDatabaseError } from '../kernel/errors/format.js';
import { SvcError } from '../kernel/errors/svc-error.js';
import { pageOf, resolveOrderBy, type Page } from '../kernel/pagination.js';
import type { Orm } from '../kernel/db/database.js';
import { userUpdatedTogether } from '../kernel/db/user-update.js';
import type {
  EventSink,
  TokenRevoker,
  UserChange,
  AccountLinks,
  OrganizationAccess,
  WebhookOutbox,
} from '../kernel/ports.js';
import { isCanonicalUuid, normaliseEmail } from '../kernel/identity.js';
import { DEFAULT_USER_ORDER } from './constants.js';
import { toUserOut, type UserListQuery, type UserOut, type UserPatchBody } from './schemas.js';
import {
  sortableUserColumns,
  type GuardedOutcome,
  type StoredUser,
  type UserChanges,
  type UserStore,
} from './store.js';
import type { CoreTables } from '../kernel/db/tables.js';

/** What the service needs; ports are read at call time because later modules provide them. */
export interface UserServiceDeps {
  settings: Settings;
  store: UserStore;
  user: CoreTables['user'];
  hashPassword(password: string): Promise<string>;
  tokens(): TokenRevoker;
  events(): EventSink;
  /** The webhook outbox (SPEC-3 §3), written in the transaction of each change. */
  webhooks(): WebhookOutbox;
  /** Account links, when the accounts module is there (a changed email gets a verification link). */
  accounts(): AccountLinks | undefined;
  /** Organizations, when there: deleting an account checks the last-owner rule (SPEC-3 §2). */
  organizations?(): OrganizationAccess | undefined;
  now: () => Date;
}

/** The fields whose change is a `user.updated` (SPEC-3 §3: profile fields, flags, email). */
const PROFILE_FIELDS = ['email', 'firstName', 'lastName', 'isStaff', 'isActive', 'isSuperuser'] as const;

/** The acting superuser (null with `global_noauth`). */
export type Actor = { id: string } | null;

function notFound(): SvcError {
  // SPEC "Errors": admin lookups answer user.not_found with 404 (the registry default is the 401 of tokens).
  return new SvcError('user.not_found', { status: 404, loc: ['path', 'user_id'] });
}

/** SPEC "Authentication" 6: the password policy (`password_min_length`), with `params.min_length`. */
export function assertPasswordPolicy(password: string, minLength: number, loc: (string | number)[]): void {
  if (password.length < minLength) {
    throw new SvcError('auth.password_too_short', { loc, params: { min_length: minLength } });
  }
}

/** The rules of SPEC "User administration (superuser only)". */
export function createUserService(deps: UserServiceDeps) {
  const { store, settings } = deps;
  const sortable = sortableUserColumns(deps.user);

  async function load(userId: string): Promise<StoredUser> {
    // Ids arrive lower-cased by the path schema; any other form names no user (and would be a type error on pg).
    if (!isCanonicalUuid(userId)) throw notFound();
    const row = await store.findById(userId);
    if (!row) throw notFound();
    return row;
  }

  /**
   * Deletes the user (logins, MFA, settings and tokens cascade) and closes their event sockets: one deletion
   * for the admin route and `DELETE /auth/user` (SPEC-2 "Administration and self-service"). False: no such user.
   */
  async function deleteAccount(userId: string, loc: (string | number)[]): Promise<boolean> {
    // SPEC-3 §2: not while the user is the only owner of an organization that has other members.
    const organizations = deps.organizations?.();
    await organizations?.assertUserRemovable(userId, loc);
    const webhooks = deps.webhooks();
    // SPEC-3 §3: `user.deleted` is stored in the deletion's transaction, and so are the organization
    // memberships' `organization.member_removed` (read before the cascade takes them).
    let announceMemberships: (() => void) | undefined;
    const outcome = await store.delete(
      userId,
      webhooks.enabled
        ? (tx, row) => webhooks.record(tx, 'user.deleted', { id: row.id, username: row.username })
        : undefined,
      organizations
        ? async (tx) => {
            announceMemberships = await organizations.beforeUserDeleted(tx, userId);
          }
        : undefined,
    );
    if ('lastSuperuser' in outcome) throw new SvcError('user.last_superuser', { loc });
    if ('notFound' in outcome) return false;
    // SPEC-3 §2: each removed membership is announced once the deletion committed, before the user's own
    // sockets close (the member is part of the audience).
    announceMemberships?.();
    deps.events().userChanged(userId, 'deleted');
    return true;
  }

  return {
    /** The `accountRemoval` port: the caller's own account (gone meanwhile: 401 `user.not_found`). */
    async deleteAccount(userId: string, loc: (string | number)[]): Promise<void> {
      if (!isCanonicalUuid(userId) || !(await deleteAccount(userId, loc)))
        throw new SvcError('user.not_found');
    },

    /** The `accountRemoval` port: 400 `user.last_superuser` ahead of `deleteAccount`. */
    async assertRemovable(userId: string, loc: (string | number)[]): Promise<void> {
      if (await store.isOnlyActiveSuperuser(userId)) throw new SvcError('user.last_superuser', { loc });
      await deps.organizations?.()?.assertUserRemovable(userId, loc);
    },

    async list(query: UserListQuery): Promise<Page<UserOut>> {
      const { column, descending } = resolveOrderBy(query.orderBy, sortable, DEFAULT_USER_ORDER);
      const { rows, total } = await store.list({
        search: query.search,
        orderBy: column,
        descending,
        limit: query.pageSize,
        offset: (query.page - 1) * query.pageSize,
      });
      return pageOf(rows.map(toUserOut), total, query);
    },

    async get(userId: string): Promise<UserOut> {
      return toUserOut(await load(userId));
    },

    async update(actor: Actor, userId: string, body: UserPatchBody): Promise<UserOut> {
      const current = await load(userId);
      const self = actor?.id === current.id;
      // SPEC "User administration": a superuser cannot deactivate themselves or drop their own flag.
      if (self && body.isActive === false) {
        throw new SvcError('user.cannot_demote_self', { loc: ['body', 'isActive'] });
      }
      if (self && body.isSuperuser === false) {
        throw new SvcError('user.cannot_demote_self', { loc: ['body', 'isSuperuser'] });
      }
      const changes: UserChanges = {};
      if (body.email !== undefined) {
        const email = normaliseEmail(body.email);
        if (email !== current.email) {
          if (email !== null && (await store.emailTaken(email, current.id))) {
            throw new SvcError('user.email_exists', { loc: ['body', 'email'] });
          }
          changes.email = email;
          // A verification belongs to the address that was verified, not to its replacement.
          changes.emailVerifiedAt = null;
        }
      }
      if (body.firstName !== undefined) changes.firstName = body.firstName;
      if (body.lastName !== undefined) changes.lastName = body.lastName;
      if (body.isStaff !== undefined) changes.isStaff = body.isStaff;
      if (body.isActive !== undefined) changes.isActive = body.isActive;
      if (body.isSuperuser !== undefined) changes.isSuperuser = body.isSuperuser;
      if (body.password !== undefined) {
        assertPasswordPolicy(body.password, settings.password_min_length, ['body', 'password']);
        changes.passwordHash = await deps.hashPassword(body.password);
        // SPEC "Account login lock": an admin password change lifts the lock and stamps password_changed_at.
        changes.passwordChangedAt = deps.now();
        changes.failedLoginCount = 0;
        changes.lockedUntil = null;
      }

      // SPEC-3 §3: a change of profile fields, flags or email emits `user.updated`; a password change only
      // `user.password_changed`; both stored in the update's transaction.
      const profileChanged = PROFILE_FIELDS.some(
        (field) => changes[field] !== undefined && changes[field] !== current[field],
      );
      const webhooks = deps.webhooks();
      const record =
        webhooks.enabled && (profileChanged || changes.passwordHash !== undefined)
          ? async (tx: Orm, row: StoredUser) => {
              if (profileChanged) await webhooks.record(tx, 'user.updated', toUserOut(row));
              if (changes.passwordHash !== undefined) {
                await webhooks.record(tx, 'user.password_changed', {
                  userId: row.id,
                  username: row.username,
                });
              }
            }
          : undefined;
      // A change of profile fields or flags alone: on PostgreSQL the update and its `user.updated` in one
      // statement (kernel/db/user-update.ts).
      const together =
        profileChanged && changes.passwordHash === undefined
          ? userUpdatedTogether(webhooks, current, changes)
          : undefined;
      let outcome: GuardedOutcome<StoredUser>;
      try {
        outcome = await store.update(current.id, changes, record, together);
      } catch (error) {
        // Two admins racing for one address: the unique index answers, reported like the check above.
        if (changes.email && mapDatabaseError(error)?.code === 'db.conflict') {
          throw new SvcError('user.email_exists', { loc: ['body', 'email'], cause: error });
        }
        throw error;
      }
      if ('lastSuperuser' in outcome) {
        // SPEC "User administration": one active superuser always remains, also when two act on each other.
        throw new SvcError('user.last_superuser', {
          loc: ['body', changes.isSuperuser === false ? 'isSuperuser' : 'isActive'],
        });
      }
      if ('notFound' in outcome) throw notFound();
      const updated = outcome.done;
      const deactivated = current.isActive && !updated.isActive;
      // SPEC-3 §7 rule 4: the links sent before a change of address or a deactivation end with it (before
      // the new address's verification link is issued below).
      const accounts = deps.accounts();
      if (changes.email !== undefined) await accounts?.endLinks(updated.id, 'email_changed');
      if (deactivated) {
        await accounts?.endLinks(updated.id, 'deactivated');
        // docs/organizations.md "Invitations end with the account": to their address and sent by them.
        await deps.organizations?.()?.endInvitationsOf(updated.id);
      }
      // SPEC-2 "Email verification": the admin route's email change sends a link to the new address too.
      if (changes.email) accounts?.sendVerification(updated.id);

      // SPEC "Authentication" 8: a password change or deactivation ends every login of the user at once.
      const passwordChanged = changes.passwordHash !== undefined;
      if (passwordChanged || deactivated) await deps.tokens().revokeAll(updated.id);
      const notices: UserChange[] = [];
      if (passwordChanged) notices.push('password_changed');
      if (deactivated) notices.push('deactivated');
      if (current.isSuperuser !== updated.isSuperuser) notices.push('superuser_changed');
      for (const change of notices) deps.events().userChanged(updated.id, change);
      // SPEC-3 §4: a superuser demoted or deactivated ends their impersonations at once (the guard already
      // refuses their tokens; this records the end and tells superusers).
      if (current.isSuperuser && (!updated.isSuperuser || deactivated))
        await deps.tokens().endImpersonationsBy?.(updated.id, {
          cause: deactivated ? 'deactivation' : 'demotion',
        });
      return toUserOut(updated);
    },

    async remove(actor: Actor, userId: string): Promise<void> {
      if (actor && actor.id === userId)
        throw new SvcError('user.cannot_delete_self', { loc: ['path', 'user_id'] });
      if (!isCanonicalUuid(userId) || !(await deleteAccount(userId, ['path', 'user_id']))) throw notFound();
    },
  };
}

export type UserService = ReturnType<typeof createUserService>;
