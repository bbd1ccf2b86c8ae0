import type { ModulePorts } from '../kernel/module.js';
import type { Cache } from '../kernel/cache/cache.js';
import type { Settings } from '../kernel/config/schema.js';
import { mapDatabaseError } from '../kernel/errors/format.js';
import { SvcError } from '../kernel/errors/svc-error.js';
import {
  assertPasswordPolicy,
  assertValidUsername,
  isUuid,
  normaliseEmail,
  toAuthUser,
  usernameLookupKeys,
  type TokenPair,
} from '../kernel/identity.js';
import type { Logger } from '../kernel/log/logger.js';
import type { Orm } from '../kernel/db/database.js';
import { userUpdatedTogether } from '../kernel/db/user-update.js';
import type {
  AttemptAdmission,
  AuthUser,
  Authenticator,
  LoginGuard,
  LoginMethod,
  TokenService,
  WebhookOutbox,
} from '../kernel/ports.js';
import { toUserOut } from '../kernel/user-out.js';
import { createFailureTiming } from './failure-timing.js';
import { createLoginAttempts } from './login-attempts.js';
import { TOKEN_TYPES } from './constants.js';
import { createDummyHash, hashPassword, isUsableHash, needsRehash, verifyPassword } from './passwords.js';
import { createRateLimiter } from './rate-limit.js';
import type { AuthStore, UserRow, UserUpdate } from './store.js';
import type { SessionService } from './sessions.js';
import type { TokenFailure, TokenSigner } from './tokens.js';

export type LoginResult = TokenPair | { mfa_required: true; mfa_token: string };

export interface AuthServiceDeps {
  settings: Settings;
  store: AuthStore;
  /** SPEC-2 "Sessions": every login is one, every access token names it. */
  sessions: SessionService;
  signer: TokenSigner;
  cache: Cache;
  log: Logger;
  /** The event sink, and the second factor when the MFA module is there. */
  ports: ModulePorts<never, never, 'secondFactor' | 'accounts' | 'organizations'>;
  now: () => Date;
  /** Hash verified for unknown usernames (computed once at startup). @default a fresh random hash */
  dummyHash?: string;
}

const ACCESS_FAILURES: Record<
  TokenFailure,
  'auth.token_invalid' | 'auth.token_wrong_type' | 'auth.token_no_subject'
> = {
  invalid: 'auth.token_invalid',
  wrong_type: 'auth.token_wrong_type',
  no_subject: 'auth.token_no_subject',
};

const invalidCredentials = () => new SvcError('auth.invalid_credentials', { loc: ['body', 'username'] });

/**
 * The rules of SPEC "Authentication", "Account login lock" and "Refresh token and login": login, refresh
 * rotation, logout, registration, own profile and password, and the ports other features use.
 */
export async function createAuthService(deps: AuthServiceDeps) {
  const { settings, store, sessions, signer, cache, log, ports, now } = deps;
  const dummyHash = deps.dummyHash ?? (await createDummyHash());
  // SPEC "Authentication routes" 1: every failed login answers in about the same time.
  const failureTiming = createFailureTiming();

  // Falls back to an in-process counter while the shared cache is down (docs/deployment.md "Redis").
  const rateLimit = createRateLimiter({ cache, settings, log });
  const attempts = createLoginAttempts({ settings, store, log, now, webhooks: () => ports.get('webhooks') });

  function retryAfter(lockedUntil: Date): string {
    return String(Math.max(1, Math.ceil((lockedUntil.getTime() - now().getTime()) / 1000)));
  }

  function lockedError(code: 'auth.too_many_attempts' | 'mfa.too_many_attempts', lockedUntil: Date | null) {
    return new SvcError(code, { headers: lockedUntil ? { 'Retry-After': retryAfter(lockedUntil) } : {} });
  }

  function isLocked(row: UserRow): boolean {
    return (
      row.lockedUntil !== null && row.lockedUntil !== undefined && row.lockedUntil.getTime() > now().getTime()
    );
  }

  /**
   * Verifies `password` against a user's stored hash. An account without a usable password (an invitation
   * not accepted yet) matches nothing, but costs the same Argon2 verification, against the dummy hash: its
   * marker fails at once otherwise, and the answer time would tell it apart (SPEC-3 §7 rule 5).
   */
  async function verifyStored(stored: string, password: string): Promise<boolean> {
    if (isUsableHash(stored)) return verifyPassword(stored, password);
    await verifyPassword(dummyHash, password);
    return false;
  }

  /**
   * One password check on the lockout counter (login-attempts.ts): its slot is taken before the outcome is
   * used, so parallel guesses never get more than `login_max_attempts` outcomes. Argon2 runs while the slot
   * is taken, so a locked account costs the same verification (SPEC "Authentication" 6: as slow as an
   * unknown one). 'ok' holds the slot: the caller settles it ({@link completeLogin} resets the counter, or
   * `attempts.release` gives it back).
   */
  async function attemptPassword(
    row: UserRow,
    password: string,
    reserved?: AttemptAdmission,
  ): Promise<{ result: 'ok' | 'wrong' | 'locked'; admission: AttemptAdmission }> {
    // `reserved`: the slot was taken with the lookup of `row` (attempts.admitByUsername).
    const [admission, matches] = await Promise.all([
      reserved ?? attempts.admit(row.id, row.username),
      verifyStored(row.passwordHash, password),
    ]);
    if (!admission.admitted) return { result: 'locked', admission };
    if (matches) return { result: 'ok', admission };
    await attempts.settleWrong(admission, row.username);
    return { result: 'wrong', admission };
  }

  /** A password-prompt check (not a login): a right password gives its slot back. */
  async function checkPasswordPrompt(row: UserRow, password: string): Promise<'ok' | 'wrong' | 'locked'> {
    const { result, admission } = await attemptPassword(row, password);
    if (result === 'ok') await attempts.release(admission);
    return result;
  }

  /**
   * SPEC "Authentication" 8: a password change or a deactivation ends every login; SPEC-2 "Sessions": their
   * sessions are ended too (the caller's own notice, `password_changed` or `deactivated`, closes the sockets).
   */
  async function endAllLogins(userId: string): Promise<void> {
    // Ending all of them deletes every refresh record of the user, rows from before sessions included.
    await sessions.revoke(userId, {}, false);
  }

  function policy(password: string, field: string) {
    assertPasswordPolicy(password, settings.password_min_length, ['body', field]);
  }

  /**
   * Issues the pair of a completed login, only while the password is still the one verified and the user
   * active (SPEC "Authentication" 8: no pair obtained with a password outlives its change); otherwise the
   * uniform failure of the calling route.
   */
  async function completeLogin(
    user: AuthUser,
    passwordHash: string,
    admission: AttemptAdmission | undefined,
    refused: () => Promise<SvcError> | SvcError,
    method: LoginMethod = 'password',
  ): Promise<TokenPair> {
    const at = now();
    // SPEC-3 §7 rule 1: the login's time rides in its tokens (`auth_time`), so the recent-login check of the
    // guard reads the token it has verified anyway: no query on any request (auth/tokens.ts).
    const authTime = Math.floor(at.getTime() / 1000);
    const refresh = signer.signRefresh(user.id, undefined, authTime);
    let done = false;
    try {
      // SPEC-2 "Sessions": the login's session is recorded in the same atomic step as its first token.
      done = await store.completeLogin(
        user.id,
        at,
        { jti: refresh.jti, family: refresh.family, userId: user.id, expiresAt: refresh.expiresAt },
        { passwordHash, liftAfter: admission?.liftLocksAfter ?? at },
        sessions.loginSession(at),
        // SPEC-3 §3: `user.login` commits with the login (its session is the refresh family).
        recorder((webhooks, tx) =>
          webhooks.record(tx, 'user.login', {
            userId: user.id,
            username: user.username,
            sessionId: refresh.family,
            method,
          }),
        ),
      );
    } finally {
      if (admission && !done) await attempts.release(admission).catch(() => undefined);
      else if (admission) attempts.settled(admission);
    }
    if (!done) throw await refused();
    ports.get('events').emit('login', { userId: user.id, username: user.username });
    return {
      access_token: signer.signAccess(user.id, refresh.family, authTime),
      token_type: 'bearer',
      refresh_token: refresh.token,
    };
  }

  /**
   * The webhook outbox's part of a change (SPEC-3 §3), for a store to run in the change's transaction;
   * undefined while webhooks are off, so the store keeps its single statement.
   */
  function recorder<A extends unknown[]>(
    write: (webhooks: WebhookOutbox, tx: Orm, ...args: A) => Promise<void>,
  ): ((tx: Orm, ...args: A) => Promise<void>) | undefined {
    const webhooks = ports.get('webhooks');
    return webhooks.enabled ? (tx, ...args) => write(webhooks, tx, ...args) : undefined;
  }

  const passwordChanged = (webhooks: WebhookOutbox, tx: Orm, row: UserRow) =>
    webhooks.record(tx, 'user.password_changed', { userId: row.id, username: row.username });

  async function loadUser(id: string): Promise<UserRow> {
    const row = isUuid(id) ? await store.userById(id) : undefined;
    if (!row) throw new SvcError('user.not_found');
    return row;
  }

  const authenticator: Authenticator = {
    async authenticate(token, options = {}) {
      const check = signer.check(token, TOKEN_TYPES.access);
      if (!check.ok) throw new SvcError(ACCESS_FAILURES[check.failure]);
      const { sub, iat, sid, auth_time: authTime, act } = check.claims;
      // SPEC-2 "Sessions": a token's session is read in the same statement as its user.
      if (sid !== undefined && (typeof sid !== 'string' || !isUuid(sid)))
        throw new SvcError('auth.token_invalid');
      // SPEC-3 §2: an organization route reads the caller's membership with the user (the guard checked the id).
      const organizations = options.organizationId !== undefined ? ports.find('organizations') : undefined;
      const row = !isUuid(sub)
        ? undefined
        : organizations && options.organizationId !== undefined
          ? await store.userWithOrganization(sub, sid, organizations.membershipColumn, options.organizationId)
          : options.withPermissions
            ? await store.userWithPermissions(sub, sid)
            : await store.userForToken(sub, sid);
      if (!row) throw new SvcError('user.not_found');
      // SPEC "Refresh token and login": one-second resolution, a token of the same second stays valid.
      if (row.passwordChangedAt && iat < Math.floor(row.passwordChangedAt.getTime() / 1000)) {
        throw new SvcError('auth.token_revoked');
      }
      if (!row.isActive) throw new SvcError('user.disabled');
      // SPEC-2 "Sessions": a revoked session's tokens are refused at once; tokens without `sid` are not checked.
      // SPEC-3 §4: an impersonation token (`act`) is good only in its live impersonation session (2: its
      // superuser is still an active superuser), a login's token only in a login's session (1).
      const impersonatorId = typeof act?.sub === 'string' && isUuid(act.sub) ? act.sub : undefined;
      if (act !== undefined && (impersonatorId === undefined || sid === undefined))
        throw new SvcError('auth.token_invalid');
      if (sid !== undefined && row.sessionState !== (impersonatorId ? 2 : 1))
        throw new SvcError('auth.session_revoked');
      const user = {
        ...toAuthUser(row),
        // SPEC-3 section 1: `GET /auth/user` says whether the account has a password, from this same row.
        hasPassword: isUsableHash(row.passwordHash),
        ...(sid !== undefined ? { sessionId: sid } : {}),
        ...(authTime !== undefined ? { authTime } : {}),
        ...(impersonatorId !== undefined ? { impersonatorId } : {}),
      };
      const withPermissions =
        'permissions' in row ? { ...user, permissions: row.permissions as string[] } : user;
      return organizations && 'membership' in row
        ? { ...withPermissions, organization: organizations.parseMembership(row.membership) }
        : withPermissions;
    },
    sessionActive: (userId, sessionId) => sessions.isActive(userId, sessionId),
    peek(token) {
      const check = signer.check(token, TOKEN_TYPES.access);
      return check.ok ? { userId: check.claims.sub } : null;
    },
    async firstSuperuser() {
      const row = await store.firstSuperuser();
      return row ? toAuthUser(row) : null;
    },
  };

  const loginGuard: LoginGuard = {
    async assertNotLocked(userId, code) {
      const row = await store.userById(userId);
      if (row && isLocked(row)) throw lockedError(code, row.lockedUntil);
    },
    async verifyPassword(userId, password) {
      const row = isUuid(userId) ? await store.userById(userId) : undefined;
      if (!row) {
        await verifyPassword(dummyHash, password);
        return false;
      }
      return (await checkPasswordPrompt(row, password)) === 'ok';
    },
    admitAttempt: (userId) => attempts.admit(userId),
    settleWrong: (admission) => attempts.settleWrong(admission),
    releaseAttempt: (admission) => attempts.release(admission),
    async completeLogin(user, proof, admission, method) {
      const challengeGone = () => new SvcError('mfa.challenge_not_found');
      const row = await store.userById(user.id);
      const stillValid =
        row &&
        (!proof ||
          ('passwordHash' in proof
            ? proof.passwordHash === row.passwordHash
            : proof.passwordChangedAt === (row.passwordChangedAt?.getTime() ?? null)));
      if (!row || !stillValid) {
        if (admission) await attempts.release(admission);
        throw challengeGone();
      }
      return completeLogin(toAuthUser(row), row.passwordHash, admission, challengeGone, method);
    },
    hashPassword,
    async setPassword(userId, newPassword, { field, verifyEmail, consume }) {
      const row = await loadUser(userId);
      policy(newPassword, field);
      if (row.passwordHash && (await verifyPassword(row.passwordHash, newPassword))) {
        throw new SvcError('auth.password_unchanged', { loc: ['body', field] });
      }
      const passwordHash = await hashPassword(newPassword);
      // Consumed only now: a refused password above leaves the proof usable (SPEC-2 "One-time account tokens").
      await consume();
      const at = now();
      await store.updateUser(
        userId,
        {
          passwordHash,
          passwordChangedAt: at,
          failedLoginCount: 0,
          lockedUntil: null,
          ...(verifyEmail && !row.emailVerifiedAt ? { emailVerifiedAt: at } : {}),
        },
        recorder(passwordChanged),
      );
      await endAllLogins(userId);
      ports.get('events').userChanged(userId, 'password_changed');
    },
  };

  const tokens: TokenService = {
    async revokeAll(userId) {
      await endAllLogins(userId);
    },
    signMfa: (userId, claims) => signer.signMfa(userId, claims),
    checkMfa(token) {
      const check = signer.check(token, TOKEN_TYPES.mfa);
      if (!check.ok) return null;
      const { sub, ...claims } = check.claims;
      return { userId: sub, claims };
    },
  };

  return {
    authenticator,
    loginGuard,
    tokens,
    rateLimit,

    /** `POST /auth/token` (SPEC "Authentication routes" 1: one uniform 401 for every failure). */
    async login(input: { username: string; password: string; ip: string }): Promise<LoginResult> {
      await rateLimit(input.ip, 'login');
      const startedAt = failureTiming.start();
      // Time spent waiting for a slot (others' attempts in flight) is not part of the uniform failure time.
      let waitedMs = 0;
      const fail = async () => {
        await failureTiming.settle(startedAt + waitedMs);
        return invalidCredentials();
      };
      // SPEC "User": the name as written (names stored before the username rule), then its normal form
      // (docs/users-and-tokens.md "Usernames").
      const keys = usernameLookupKeys(input.username);
      const secondFactor = settings.mfa_enabled ? ports.find('secondFactor') : undefined;
      // The usual case in one statement: the active user by the name as written, a slot on their counter
      // taken with it (SPEC "Account login lock": counted before the check), and the second factor's state
      // of the user (kernel/ports.ts `loginState`). Otherwise the lookup, and the slot taken or waited for by
      // id as for every other credential check.
      const reserved =
        keys[0] === undefined ? undefined : await attempts.admitByUsername(keys[0], secondFactor?.loginState);
      let row: UserRow | undefined = reserved?.row;
      for (const key of reserved ? [] : keys) {
        row = await store.userByUsername(key);
        if (row) break;
      }
      if (!row) {
        await verifyPassword(dummyHash, input.password);
        throw await fail();
      }
      if (!row.isActive) {
        await verifyStored(row.passwordHash, input.password);
        throw await fail();
      }
      const { result, admission } = await attemptPassword(row, input.password, reserved?.admission);
      waitedMs = admission.waitedMs;
      if (result !== 'ok') throw await fail();
      if (settings.require_verified_email && !row.isSuperuser && !row.emailVerifiedAt) {
        // SPEC-2 "Email verification": told only after the password was verified (a wrong one got the 401).
        await attempts.release(admission);
        throw new SvcError('auth.email_unverified');
      }
      let passwordHash = row.passwordHash;
      try {
        if (needsRehash(row.passwordHash)) {
          // SPEC "User": outdated parameters are re-hashed on the next successful login (not a password
          // change); conditional on the hash verified, so it never overwrites a concurrent change.
          passwordHash = await hashPassword(input.password);
          if (!(await store.replaceHash(row.id, row.passwordHash, passwordHash)))
            passwordHash = row.passwordHash;
        }
        const user = toAuthUser(row);
        if (secondFactor) {
          // The state read before the password check: MFA turned on while it ran is the same race as MFA
          // turned on just after the login (a login that began before it completes without it).
          const known = reserved && secondFactor.loginState ? { state: reserved.row.state } : undefined;
          const mfaToken = await secondFactor.startChallenge(user, known);
          if (mfaToken) {
            // The password alone is not a login: its slot is given back, but the counter is not reset, so
            // wrong second-factor codes add up across challenges until one succeeds (SPEC "Account login
            // lock": locked after login_max_attempts wrong codes in total).
            await attempts.release(admission);
            return { mfa_required: true, mfa_token: mfaToken };
          }
        }
      } catch (error) {
        await attempts.release(admission).catch(() => undefined);
        throw error;
      }
      return completeLogin(toAuthUser(row), passwordHash, admission, fail);
    },

    /** `POST /auth/refresh-token`: the state table of SPEC "Refresh token and login". */
    async refresh(token: string): Promise<Omit<TokenPair, 'refresh_token'> & { refresh_token?: string }> {
      const check = signer.check(token, TOKEN_TYPES.refresh);
      if (
        !check.ok ||
        typeof check.claims.jti !== 'string' ||
        typeof check.claims.fam !== 'string' ||
        !isUuid(check.claims.fam)
      ) {
        throw new SvcError('auth.refresh_token_invalid');
      }
      const { sub, jti } = check.claims;
      const userInvalid = () => new SvcError('auth.refresh_user_invalid');
      if (!isUuid(sub)) throw userInvalid();
      const revoked = () => new SvcError('auth.refresh_token_revoked');

      // SPEC-2 "Sessions": the refresh family is the session; its access tokens name it.
      const sid = check.claims.fam;
      // SPEC-3 §7 rule 1: a refresh is not a login; the new tokens keep the login's `auth_time`.
      const authTime = check.claims.auth_time;
      if (!settings.refresh_token_rotation) {
        const row = await store.userById(sub);
        if (!row || !row.isActive) throw userInvalid();
        const record = await store.refreshByJti(jti);
        if (!record || record.userId !== sub || record.spentAt) throw revoked();
        if (!(await sessions.touch(sid, sub, now()))) throw revoked();
        return { access_token: signer.signAccess(sub, sid, authTime), token_type: 'bearer' };
      }
      const at = now();
      // The successor is signed first and stored in the same atomic step as the spend (store.rotateRefresh),
      // which reads the user too: a refresh that succeeds is one statement on PostgreSQL.
      const next = signer.signRefresh(sub, sid, authTime);
      // SPEC "Refresh token and login": a password change revokes the logins before it. Its deletion of the
      // records is the rule; the swap compares the token with the change as well (one-second resolution, as
      // for access tokens: a change in the token's own second leaves it valid), so a record that escaped the
      // deletion is refused all the same.
      const revokedFrom = new Date((check.claims.iat + 1) * 1000);
      const { user, rotated, touched } = await store.rotateRefresh(
        jti,
        sub,
        at,
        { jti: next.jti, family: next.family, userId: sub, expiresAt: next.expiresAt },
        revokedFrom,
      );
      if (user === 'invalid') throw userInvalid();
      if (user === 'revoked') throw revoked();
      if (!rotated) {
        const record = await store.refreshByJti(jti);
        if (record?.spentAt && record.userId === sub) {
          const grace = settings.refresh_reuse_grace_seconds;
          const age = at.getTime() - record.spentAt.getTime();
          // Within the grace window a reuse (a concurrent refresh of the same client) is refused but the
          // login survives; after it, reuse means a stolen token: the whole login is revoked.
          if (grace === 0 || age > grace * 1000) {
            await store.deleteFamily(record.family);
            log.warn('refresh token reused after its rotation: login revoked', { userId: sub });
          }
        }
        throw revoked();
      }
      // The session is touched after the spend, in the swap's own step: a revocation that landed while this
      // refresh was in flight (it marked the session first) refuses it here, so the successor never comes
      // back to life (SPEC-2 "Sessions"). Not touched: revoked, or a family from before sessions, which
      // `sessions.touch` adopts (it refuses a revoked one again).
      if (!touched && !(await sessions.touch(sid, sub, at))) throw revoked();
      return {
        access_token: signer.signAccess(sub, sid, authTime),
        token_type: 'bearer',
        refresh_token: next.token,
      };
    },

    /** `POST /auth/logout`: the caller's own refresh token revokes its login, anything else all logins. */
    async logout(user: AuthUser, refreshToken: string | undefined): Promise<void> {
      const check = refreshToken ? signer.check(refreshToken, TOKEN_TYPES.refresh) : undefined;
      // SPEC-2 "Sessions": the session it ends refuses its access tokens as well.
      if (check?.ok && check.claims.sub === user.id && typeof check.claims.fam === 'string') {
        const family = check.claims.fam;
        const ended = isUuid(family) ? await sessions.revoke(user.id, { only: family }) : [];
        // An ended session took its refresh records with it; a login from before sessions has none to end.
        if (ended.length === 0) await store.deleteFamily(family);
      } else {
        // Every refresh record of the user goes with it (session-store.ts `revoke`).
        await sessions.revoke(user.id);
      }
      ports.get('events').emit('logout', { userId: user.id, username: user.username });
    },

    /**
     * `DELETE /auth/session` (SPEC-3 §5): ends the caller's session as `POST /auth/logout` with its refresh
     * token does (its refresh records and access tokens with it); a token from before sessions ends them all.
     */
    async endSession(user: AuthUser): Promise<void> {
      await sessions.revoke(user.id, user.sessionId ? { only: user.sessionId } : {});
      ports.get('events').emit('logout', { userId: user.id, username: user.username });
    },

    /** `POST /auth/register` (SPEC "Authentication routes" 2 and 6). */
    async register(input: {
      username: string;
      password: string;
      email?: string | null;
      firstName?: string;
      lastName?: string;
      ip: string;
    }): Promise<UserRow> {
      if (!settings.registration_enabled) throw new SvcError('auth.registration_disabled');
      await rateLimit(input.ip, 'register');
      policy(input.password, 'password');
      const username = assertValidUsername(input.username);
      if (await store.userByUsername(username)) throw new SvcError('auth.username_taken');
      const email = normaliseEmail(input.email);
      if (email && (await store.userByEmail(email))) {
        throw new SvcError('user.username_or_email_exists', { loc: ['body', 'email'] });
      }
      const passwordHash = await hashPassword(input.password);
      try {
        // Privileges are never taken from the request: active, non-staff, non-superuser.
        const created = await store.insertUser(
          {
            username,
            email,
            firstName: input.firstName ?? '',
            lastName: input.lastName ?? '',
            passwordHash,
            isActive: true,
            isStaff: false,
            isSuperuser: false,
          },
          recorder((webhooks, tx, row: UserRow) => webhooks.record(tx, 'user.created', toUserOut(row))),
          ports.get('webhooks').recordWith,
        );
        // SPEC-2 "Email verification": a registration with an email gets a verification link.
        if (email) ports.find('accounts')?.sendVerification(created.id);
        return created;
      } catch (error) {
        if (mapDatabaseError(error)?.code !== 'db.conflict') throw error;
        // SPEC-3 §7 rule 9: a parallel registration took the name or the address since the checks above;
        // this one answers what it would have a moment later.
        if (await store.userByUsername(username)) throw new SvcError('auth.username_taken', { cause: error });
        throw new SvcError('user.username_or_email_exists', { loc: ['body', 'email'], cause: error });
      }
    },

    /** The user as `GET /auth/user` shows it (SPEC-3 §5: also the cookie routes' `{user}`). */
    currentUserOut(user: AuthUser & { permissions?: string[] }) {
      // SPEC-3 section 1: `hasPassword` comes from the row `authenticate` read (a password login has one).
      return {
        ...toUserOut(user),
        permissions: user.permissions ?? [],
        hasPassword: user.hasPassword ?? true,
      };
    },

    /** The caller with effective permissions (`GET /auth/user`). */
    async profile(userId: string): Promise<UserRow & { permissions: string[] }> {
      const row = isUuid(userId) ? await store.userWithPermissions(userId) : undefined;
      if (!row) throw new SvcError('user.not_found');
      return row;
    },

    /** `PATCH /auth/user` (SPEC "Authentication routes" 3). */
    async updateProfile(
      userId: string,
      input: { firstName?: string; lastName?: string; email?: string | null; currentPassword?: string },
    ): Promise<UserRow & { permissions: string[] }> {
      const row = await loadUser(userId);
      const changes: UserUpdate = {};
      if (input.firstName !== undefined) changes.firstName = input.firstName;
      if (input.lastName !== undefined) changes.lastName = input.lastName;
      if (input.email !== undefined) {
        const email = normaliseEmail(input.email);
        if (email !== (row.email ?? null)) {
          // The email receives MFA codes: changing it needs the current password, counted on the lock.
          if (!input.currentPassword) throw new SvcError('auth.password_incorrect');
          if (isLocked(row)) throw lockedError('auth.too_many_attempts', row.lockedUntil);
          const result = await checkPasswordPrompt(row, input.currentPassword);
          if (result === 'locked')
            throw lockedError('auth.too_many_attempts', (await loadUser(userId)).lockedUntil);
          if (result === 'wrong') throw new SvcError('auth.password_incorrect');
          if (email) {
            const holder = await store.userByEmail(email);
            if (holder && holder.id !== row.id) throw new SvcError('user.email_exists');
          }
          changes.email = email;
          changes.emailVerifiedAt = null;
        }
      }
      if (Object.keys(changes).length > 0) {
        try {
          await store.updateUser(
            userId,
            changes,
            recorder((webhooks, tx, row: UserRow) => webhooks.record(tx, 'user.updated', toUserOut(row))),
            // On PostgreSQL the update and its event in one statement (kernel/db/user-update.ts).
            userUpdatedTogether(ports.get('webhooks'), row, changes),
          );
        } catch (error) {
          if (mapDatabaseError(error)?.code === 'db.conflict') throw new SvcError('user.email_exists');
          throw error;
        }
      }
      // SPEC-3 §7 rule 4: the links sent to the old address end; SPEC-2 "Email verification": a new address
      // gets a verification link.
      if (changes.email !== undefined) await ports.find('accounts')?.endLinks(userId, 'email_changed');
      if (changes.email) ports.find('accounts')?.sendVerification(userId);
      const updated = await store.userWithPermissions(userId);
      if (!updated) throw new SvcError('user.not_found');
      return updated;
    },

    /** `POST /auth/user/password` (SPEC "Authentication routes" 4, "Authentication" 8). */
    async changePassword(
      userId: string,
      input: { currentPassword: string; newPassword: string },
    ): Promise<void> {
      const row = await loadUser(userId);
      if (isLocked(row)) throw lockedError('auth.too_many_attempts', row.lockedUntil);
      const result = await checkPasswordPrompt(row, input.currentPassword);
      if (result === 'locked')
        throw lockedError('auth.too_many_attempts', (await loadUser(userId)).lockedUntil);
      if (result === 'wrong') throw new SvcError('auth.password_incorrect');
      policy(input.newPassword, 'newPassword');
      if (input.newPassword === input.currentPassword) throw new SvcError('auth.password_unchanged');
      const passwordHash = await hashPassword(input.newPassword);
      await store.updateUser(userId, { passwordHash, passwordChangedAt: now() }, recorder(passwordChanged));
      await endAllLogins(userId);
      ports.get('events').userChanged(userId, 'password_changed');
    },
  };
}

export type AuthService = Awaited<ReturnType<typeof createAuthService>>;
