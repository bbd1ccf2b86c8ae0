import { createHash, randomBytes } from 'node:crypto';
import type { Cache } from '../kernel/cache/cache.js';
import type { Settings } from '../kernel/config/schema.js';
import { mapDatabaseError } from '../kernel/errors/format.js';
import { SvcError } from '../kernel/errors/svc-error.js';
import { resolveLocale } from '../kernel/i18n/index.js';
import { assertValidUsername, isUuid, normaliseEmail, toAuthUser } from '../kernel/identity.js';
import type { TokenPair } from '../kernel/identity.js';
import type { Logger } from '../kernel/log/logger.js';
import type { AccountChange } from '../kernel/ports.js';
import type { Orm } from '../kernel/db/database.js';
import { toUserOut } from '../kernel/user-out.js';
import type { ModulePorts } from '../kernel/module.js';
import { FORGOT_RATE_LIMIT_SCOPE, INVITED_PASSWORD_HASH, TOKEN_BYTES } from './constants.js';
import type { AccountStore } from './store.js';
import type { AccountTokenPurpose } from './tables.js';

export interface AccountServiceDeps {
  settings: Settings;
  store: AccountStore;
  cache: Cache;
  log: Logger;
  ports: ModulePorts<
    'accounts',
    'loginGuard' | 'mail',
    'rateLimiter' | 'userSettings' | 'personalTokenRevoker'
  >;
  now: () => Date;
}

/** The stored form of a link token (SPEC-2 "One-time account tokens": only the SHA-256 digest). */
export function tokenDigest(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** The base of links in mails: `public_url`, else the server's own address (SPEC-2 "Mail and links"). */
export function publicBase(settings: Settings): string {
  return (settings.public_url || `http://${settings.host}:${settings.port}`).replace(/\/+$/, '');
}

/** A link from its template: `{public_url}` and `{token}` filled in. */
export function accountLink(settings: Settings, template: string, token: string): string {
  return template
    .replaceAll('{public_url}', publicBase(settings))
    .replaceAll('{token}', encodeURIComponent(token));
}

/** Password reset by mail (SPEC-2 "Routes", "Password reset"). */
export function createAccountService(deps: AccountServiceDeps) {
  const { settings, store, cache, log, ports, now } = deps;

  /** SPEC-3 §3: `user.created` for an invited user, written with the user. */
  function recordCreated() {
    const webhooks = ports.get('webhooks');
    return webhooks.enabled
      ? (tx: Orm, row: Parameters<typeof toUserOut>[0]) => webhooks.record(tx, 'user.created', toUserOut(row))
      : undefined;
  }

  async function localeOf(userId: string): Promise<string> {
    const chosen = await ports
      .find('userSettings')
      ?.get(userId, 'preferences.locale')
      .catch(() => null);
    return resolveLocale(typeof chosen === 'string' && chosen ? chosen : settings.default_locale);
  }

  /** One mail of `purpose` per account and cooldown (SPEC-2 `account_mail_cooldown_seconds`). */
  async function cooledDown(purpose: AccountTokenPurpose, userId: string): Promise<boolean> {
    const seconds = settings.account_mail_cooldown_seconds;
    if (seconds === 0) return true;
    // SPEC-3 §7 rule 6: a cooldown is security state, never evicted by other (anonymous) entries.
    return cache.setIfAbsent(`account-mail:${purpose}:${userId}`, 1, seconds, { keep: 'security' });
  }

  async function issue(purpose: AccountTokenPurpose, userId: string, email: string, minutes: number) {
    const token = randomBytes(TOKEN_BYTES).toString('base64url');
    const createdAt = now();
    const expiresAt = new Date(createdAt.getTime() + minutes * 60_000);
    await store.issue(
      { digest: tokenDigest(token), purpose, userId, email, expiresAt, createdAt },
      createdAt,
    );
    return { token, expiresAt };
  }

  /** The link mail of each purpose: its link template, lifetime and mail operation (SPEC-2 "Mail and links"). */
  const LINKS = {
    password_reset: {
      url: () => settings.password_reset_url,
      minutes: () => settings.password_reset_expire_minutes,
    },
    email_verify: {
      url: () => settings.email_verify_url,
      minutes: () => settings.email_verify_expire_hours * 60,
    },
    invitation: { url: () => settings.invitation_url, minutes: () => settings.invitation_expire_hours * 60 },
  } satisfies Record<AccountTokenPurpose, { url(): string; minutes(): number }>;

  /** Issues a token of `purpose` for the address: its link and expiry. */
  async function makeLink(purpose: AccountTokenPurpose, userId: string, email: string) {
    const link = LINKS[purpose];
    const { token, expiresAt } = await issue(purpose, userId, email, link.minutes());
    return { url: accountLink(settings, link.url(), token), expiresAt };
  }

  /** Issues a token of `purpose` for the address and mails its link in the user's language. */
  async function sendLink(purpose: AccountTokenPurpose, userId: string, email: string, invitedBy?: string) {
    const mail = { userId, email, ...(await makeLink(purpose, userId, email)) };
    const delivery = ports.get('mail');
    if (purpose === 'password_reset') delivery.passwordReset({ ...mail, locale: await localeOf(userId) });
    else if (purpose === 'email_verify')
      delivery.emailVerification({ ...mail, locale: await localeOf(userId) });
    // An invited user has chosen no language yet.
    else
      delivery.invitation({
        ...mail,
        locale: resolveLocale(settings.default_locale),
        invitedBy: invitedBy ?? '',
      });
  }

  async function sendReset(email: string): Promise<void> {
    const address = normaliseEmail(email);
    if (!address) return;
    const user = await store.userByEmail(address);
    if (!user || !user.isActive || !user.email) return;
    if (user.invited) {
      // SPEC-3 §7 rule 4: an invited user who has not accepted has no password to reset; they get a new
      // invitation (it replaces the earlier one), under the invitation's cooldown. The inviter is not kept:
      // the application invites, as `svc users invite` does.
      if (!(await cooledDown('invitation', user.id))) return;
      await sendLink('invitation', user.id, user.email, settings.app_name);
      return;
    }
    if (!(await cooledDown('password_reset', user.id))) return;
    await sendLink('password_reset', user.id, user.email);
  }

  /** After registration or an email change: silent on cooldown (the change itself was answered). */
  function sendVerification(userId: string): void {
    setImmediate(() => {
      (async () => {
        const user = await store.userById(userId);
        if (!user?.email || !user.isActive || user.emailVerifiedAt) return;
        if (!(await cooledDown('email_verify', userId))) return;
        await sendLink('email_verify', userId, user.email);
      })().catch((error: unknown) =>
        log.error('verification mail failed', {
          user_id: userId,
          error: String((error as Error)?.message ?? error),
        }),
      );
    });
  }

  return {
    sendVerification,

    /** The `accounts` port's `endLinks` (SPEC-3 §7 rule 4). */
    async endLinks(userId: string, change: AccountChange): Promise<void> {
      if (isUuid(userId)) await store.endLinks(userId, change);
    },

    /**
     * `POST /admin/user/invite` (SPEC-2 "Invitations"): a new active user without a usable password and an
     * invitation link; inviting the address of a pending invitation sends a new link that replaces the old
     * one (`created` false). Any other account's address is 400 `user.email_exists`. With `printLink` (`svc
     * users invite --print-link`) the link is returned instead of mailed.
     */
    async invite(
      invitedBy: string,
      input: {
        email: string;
        username?: string;
        firstName?: string;
        lastName?: string;
        isStaff?: boolean;
        groupIds?: number[];
      },
      options: { printLink?: boolean } = {},
    ) {
      const deliver = async (userId: string, address: string) => {
        if (options.printLink) return makeLink('invitation', userId, address);
        await sendLink('invitation', userId, address, invitedBy);
        return undefined;
      };
      // The body schema checked the address; normaliseEmail only trims and lower-cases it.
      const email = normaliseEmail(input.email) ?? input.email;
      /** The address belongs to an account: a pending invitation is renewed, any other refuses. */
      const renew = async (existing: NonNullable<Awaited<ReturnType<typeof store.accountByEmail>>>) => {
        if (existing.passwordHash !== INVITED_PASSWORD_HASH) {
          throw new SvcError('user.email_exists', { loc: ['body', 'email'] });
        }
        const link = await deliver(existing.id, existing.email ?? email);
        return { created: false, user: existing, link };
      };
      const existing = await store.accountByEmail(email);
      if (existing) return renew(existing);
      const username = assertValidUsername(input.username ?? email);
      const groupIds = input.groupIds ?? [];
      let user: Awaited<ReturnType<typeof store.insertInvited>>;
      try {
        if (await store.usernameTaken(username)) throw new SvcError('auth.username_taken');
        const unknown = await store.unknownGroups(groupIds);
        if (unknown.length > 0) {
          throw new SvcError('db.invalid_value', {
            loc: ['body', 'groupIds'],
            params: { groupIds: unknown },
          });
        }
        user = await store.insertInvited(
          {
            username,
            email,
            firstName: input.firstName ?? '',
            lastName: input.lastName ?? '',
            isStaff: input.isStaff ?? false,
            groupIds,
          },
          recordCreated(),
          ports.get('webhooks').recordWith,
        );
      } catch (error) {
        // SPEC-3 §7 rule 9: a parallel invitation took the address or the name since the check above (on
        // PostgreSQL the unique index refuses the second insert). This one answers what it would have a
        // moment later: the address's pending invitation is renewed, else the documented code.
        const conflict = mapDatabaseError(error)?.code === 'db.conflict';
        if (!conflict && !(error instanceof SvcError && error.code === 'auth.username_taken')) throw error;
        const raced = await store.accountByEmail(email);
        if (raced) return renew(raced);
        if (!conflict || (await store.usernameTaken(username))) {
          throw new SvcError('auth.username_taken', { cause: error });
        }
        throw new SvcError('user.email_exists', { loc: ['body', 'email'], cause: error });
      }
      const link = await deliver(user.id, email);
      return { created: true, user, link };
    },

    /**
     * `svc users reset-link` (SPEC-2 "Administration and self-service"): a password-reset link for support
     * staff to hand over, not mailed. It replaces the user's earlier reset links; no cooldown (staff act on
     * purpose). The token records no address: using it verifies no email, since no mail proved the address.
     */
    async passwordResetLink(userId: string): Promise<{ url: string; expiresAt: Date } | null> {
      const user = await store.userById(userId);
      if (!user?.isActive || user.invited) return null;
      return makeLink('password_reset', userId, '');
    },

    /**
     * `POST /auth/invitation/accept`: sets the password (policy refusals keep the token) and the verified
     * email, then answers with a token pair as a login does.
     */
    async acceptInvitation(token: string, password: string): Promise<TokenPair> {
      const invalid = () => new SvcError('auth.invitation_invalid');
      const digest = tokenDigest(token);
      const row = await store.findUsable(digest, 'invitation', now());
      if (!row || !isUuid(row.userId)) throw invalid();
      const user = await store.userById(row.userId);
      if (!user || !user.isActive || !user.invited) throw invalid();
      const guard = ports.get('loginGuard');
      await guard.setPassword(user.id, password, {
        field: 'password',
        verifyEmail: normaliseEmail(user.email) === normaliseEmail(row.email),
        async consume() {
          if (!(await store.consume(digest, now()))) throw invalid();
        },
      });
      // The account by id: its address may have changed since the invitation (then it stays unverified).
      const account = await store.accountById(user.id);
      if (!account) throw invalid();
      return guard.completeLogin(toAuthUser(account));
    },

    /** `POST /auth/user/email/verify-request` (SPEC-2 "Email verification"). */
    async requestVerification(userId: string): Promise<void> {
      const user = await store.userById(userId);
      if (!user?.email) throw new SvcError('user.no_email');
      if (user.emailVerifiedAt) throw new SvcError('user.email_already_verified');
      if (!(await cooledDown('email_verify', userId))) {
        const left = await cache.ttl(`account-mail:email_verify:${userId}`);
        throw new SvcError('account.mail_cooldown', {
          headers: { 'Retry-After': String(Math.max(1, left ?? settings.account_mail_cooldown_seconds)) },
        });
      }
      await sendLink('email_verify', userId, user.email);
    },

    /**
     * `POST /auth/email/verify`: marks the address verified when the account's email still is the one the
     * token was sent to; the token is used once, by one statement.
     */
    async verifyEmail(token: string): Promise<void> {
      const invalid = () => new SvcError('auth.verify_token_invalid');
      const digest = tokenDigest(token);
      const row = await store.findUsable(digest, 'email_verify', now());
      if (!row) throw invalid();
      const user = await store.userById(row.userId);
      if (!user || !user.email || normaliseEmail(user.email) !== normaliseEmail(row.email)) throw invalid();
      // SPEC-3 §3: the verified flag is a change of the user (`emailVerifiedAt`): `user.updated`, stored in
      // the transaction that uses the token and sets the flag.
      const webhooks = ports.get('webhooks');
      const record = webhooks.enabled
        ? (tx: Orm, verified: Parameters<typeof toUserOut>[0]) =>
            webhooks.record(tx, 'user.updated', toUserOut(verified))
        : undefined;
      if (!(await store.verify(digest, user.id, row.email, now(), record))) throw invalid();
    },

    /**
     * `POST /auth/password/forgot`: counted against `auth_rate_limit`, then answered at once; the lookup,
     * the token and the mail run after the answer, so its time says nothing about the address.
     */
    async forgot(email: string, clientIp: string): Promise<void> {
      await ports.find('rateLimiter')?.hit(clientIp, FORGOT_RATE_LIMIT_SCOPE);
      setImmediate(() => {
        sendReset(email).catch((error: unknown) =>
          log.error('password reset mail failed', { error: String((error as Error)?.message ?? error) }),
        );
      });
    },

    /**
     * `POST /auth/password/reset`: the token must be unused, unexpired, not superseded and issued after the
     * user's last password change; it is consumed only once the new password is accepted, by one statement
     * that only one of concurrent presentations wins. `revokeTokens` deletes the personal tokens as well.
     */
    async reset(token: string, newPassword: string, options: { revokeTokens?: boolean } = {}): Promise<void> {
      const invalid = () => new SvcError('auth.reset_token_invalid');
      const at = now();
      const digest = tokenDigest(token);
      const row = await store.findUsable(digest, 'password_reset', at);
      if (!row || !isUuid(row.userId)) throw invalid();
      const user = await store.userById(row.userId);
      // A password change by any route after the token was issued ends it (SPEC-2 "One-time account tokens").
      const changedAfter =
        user?.passwordChangedAt && user.passwordChangedAt.getTime() >= row.createdAt.getTime();
      if (!user || !user.isActive || changedAfter) throw invalid();
      // SPEC-3 §7 rule 4: a mailed link works only while the account's address is the one it went to (the
      // change also deleted it; this holds should a change ever come by a path that did not).
      if (row.email !== '' && normaliseEmail(user.email) !== normaliseEmail(row.email)) throw invalid();
      await ports.get('loginGuard').setPassword(user.id, newPassword, {
        field: 'newPassword',
        // The mail reached the account's address: it is verified (not for a link handed over without a
        // mail: `svc users reset-link`).
        verifyEmail: row.email !== '',
        async consume() {
          if (!(await store.consume(digest, now()))) throw invalid();
        },
      });
      // SPEC-3 §7 rule 2: on request the reset ends the personal tokens too (a password change alone does not,
      // SPEC-2 "Personal access tokens"); only once the password is set, so a refused one deletes nothing.
      if (options.revokeTokens) await ports.find('personalTokenRevoker')?.deleteAll(user.id);
    },
  };
}

export type AccountService = ReturnType<typeof createAccountService>;
