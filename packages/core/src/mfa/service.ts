import { randomUUID } from 'node:crypto';
import type { Cache } from '../kernel/cache/cache.js';
import type { Settings } from '../kernel/config/schema.js';
import { SvcError } from '../kernel/errors/svc-error.js';
import { isUuid } from '../kernel/identity.js';
import type { Logger } from '../kernel/log/logger.js';
import type { ModulePorts } from '../kernel/module.js';
import type { AuthUser, LoginMethod, SecondFactor, TokenPair } from '../kernel/ports.js';
import { generateBackupCodes, normaliseBackupCode } from './backup-codes.js';
import {
  BACKUP_CODE_CAS_RETRIES,
  BACKUP_CODE_REPLAY_TTL_SECONDS,
  MFA_RATE_LIMIT_SCOPE,
  TOTP_USED_STEP_TTL_SECONDS,
} from './constants.js';
import { generateOtpCode, normaliseOtpCode } from './one-time-codes.js';
import { decryptSecret, deriveMfaKeys, encryptSecret, hashCode, hashesEqual } from './secrets.js';
import type { MfaSender } from './sender.js';
import type { MfaConfigRow, MfaRecord, MfaStore } from './store.js';
import type { MfaMethod } from './tables.js';
import { generateTotpSecret, matchTotpStep, totpIssuer, totpUri } from './totp.js';

/** `GET /mfa/status` (SPEC "MFA configuration"). */
export interface MfaStatus {
  enabled: boolean;
  method: MfaMethod | null;
}

export interface MfaServiceDeps {
  settings: Settings;
  cache: Cache;
  store: MfaStore;
  sender: MfaSender;
  log: Logger;
  /** Read at request time: `loginGuard` and `rateLimiter` come from `auth`. */
  /** The login guard and the token service; the rate limiter and passkeys when provided. */
  ports: ModulePorts<never, 'loginGuard' | 'tokens', 'rateLimiter' | 'passkeys'>;
  now?: () => Date;
}

/** The claim of the `mfa_token` carrying the challenge id. */
const CHALLENGE_CLAIM = 'cid';
/** The claim of the `mfa_token` carrying the user's `password_changed_at` (epoch ms or null) at its start. */
const PASSWORD_CLAIM = 'pwc';
/**
 * The claim of the `mfa_token` carrying how the first factor was proven when not by password (SPEC-3 §3
 * `user.login`'s `method`: a social login's MFA step still reports `oauth`). In the signed token, bound to its
 * challenge, so the pending challenge's table needs no column for it; absent means `password`.
 */
const METHOD_CLAIM = 'lm';
const FIRST_FACTORS: readonly LoginMethod[] = ['password', 'passkey', 'oauth'];

/** A presented second factor: valid, wrong (a guess), or valid a moment ago and already used. */
type CodeOutcome = 'ok' | 'wrong' | 'replayed';

/** The rules of SPEC "MFA enrolment", "MFA login challenge" and "Multi-factor routes". */
export function createMfaService(deps: MfaServiceDeps) {
  const { settings, cache, store, sender, log, ports } = deps;
  const now = deps.now ?? (() => new Date());
  const keys = deriveMfaKeys(settings);
  const otpMinutes = settings.mfa_otp_expire_minutes;

  const loginGuard = () => ports.get('loginGuard');
  // The mfa_token is signed and checked by auth's token service: one key, one clock, the rules of every token.
  const tokens = () => ports.get('tokens');

  /** SPEC "Limits": the MFA check and email/SMS setup count against `auth_rate_limit`. */
  /** SPEC-3 §3: the webhook event of an MFA change, for the store to write in the change's transaction. */
  function recorder(type: 'mfa.enabled' | 'mfa.disabled', userId: string): MfaRecord | undefined {
    const webhooks = deps.ports.get('webhooks');
    return webhooks.enabled ? (tx, method) => webhooks.record(tx, type, { userId, method }) : undefined;
  }

  async function rateLimit(clientIp: string): Promise<void> {
    // The limiter is auth's; without it (auth module replaced or disabled) there is nothing to count on.
    await ports.find('rateLimiter')?.hit(clientIp, MFA_RATE_LIMIT_SCOPE);
  }

  function backupHash(userId: string, normalised: string): string {
    return hashCode(keys.codeHash, `backup:${userId}`, normalised);
  }

  function newBackupCodes(userId: string): { codes: string[]; hashes: string[] } {
    const codes = generateBackupCodes();
    return { codes, hashes: codes.map((code) => backupHash(userId, normaliseBackupCode(code)!)) };
  }

  function assertSetupAllowed(): void {
    // SPEC "Multi-factor routes" 1: TOTP and email setup need mfa_enabled (SMS setup is not gated there).
    if (!settings.mfa_enabled) throw new SvcError('mfa.disabled');
  }

  /**
   * Records the step of a TOTP code in the cache and in `last_totp_step`: 'ok' for the caller who used it
   * first, 'replayed' for the others (a valid code presented twice: a double-submit, not a guess).
   */
  async function consumeTotpStep(userId: string, step: number): Promise<CodeOutcome> {
    // SPEC-3 §7 rule 6: a used step is security state, never evicted by other entries.
    const fresh = await cache.setIfAbsent(`mfa:totp:${userId}:${step}`, 1, TOTP_USED_STEP_TTL_SECONDS, {
      keep: 'security',
    });
    if (!fresh) return 'replayed';
    return (await store.consumeTotpStep(userId, step)) ? 'ok' : 'replayed';
  }

  /**
   * Consumes one backup code atomically (compare-and-swap on the list): 'ok' for exactly one caller. A code
   * that was in the list when read is remembered for a while, so its other presentations (parallel or
   * repeated submits of a code that was valid) are 'replayed', not guesses counted on the account.
   */
  async function consumeBackupCode(userId: string, normalised: string): Promise<CodeOutcome> {
    const hash = backupHash(userId, normalised);
    const usedKey = `mfa:backup-used:${userId}:${hash}`;
    for (let attempt = 0; attempt < BACKUP_CODE_CAS_RETRIES; attempt++) {
      const config = await store.config(userId);
      if (!config?.isActive) return 'wrong';
      const hashes = parseHashes(config.backupCodes);
      if (!hashes.includes(hash)) return (await cache.get(usedKey)) ? 'replayed' : 'wrong';
      await cache.set(usedKey, 1, BACKUP_CODE_REPLAY_TTL_SECONDS, { keep: 'security' });
      if (
        await store.swapBackupCodes(
          userId,
          config.backupCodes,
          hashes.filter((h) => h !== hash),
        )
      )
        return 'ok';
      // Another code of the same user was consumed meanwhile: read again.
    }
    return 'wrong';
  }

  function parseHashes(stored: string): string[] {
    try {
      const value: unknown = JSON.parse(stored);
      return Array.isArray(value) ? value.filter((h): h is string => typeof h === 'string') : [];
    } catch {
      return [];
    }
  }

  /** Hands a code to the sender in the background (SPEC "Multi-factor routes" 6: a failure is only logged). */
  function deliver(method: 'email' | 'sms', userId: string, target: string, otpCode: string): void {
    const task =
      method === 'email'
        ? () => sender.sendEmailCode({ userId, email: target, otpCode, expiresInMinutes: otpMinutes })
        : () => sender.sendSmsCode({ userId, phoneNumber: target, otpCode, expiresInMinutes: otpMinutes });
    setImmediate(() => {
      Promise.resolve()
        .then(task)
        .catch((error: unknown) =>
          log.error(`MFA ${method} code delivery failed`, { exc: error, user_id: userId }),
        );
    });
  }

  async function setupWithCode(
    user: AuthUser,
    method: 'email' | 'sms',
    target: string,
  ): Promise<{ backup_codes: string[] }> {
    const at = now();
    const code = generateOtpCode();
    const { codes, hashes } = newBackupCodes(user.id);
    const cooldownMs = settings.mfa_send_cooldown_seconds * 1000;
    const row = await store.upsertPending(
      {
        userId: user.id,
        method,
        totpSecret: null,
        backupCodes: hashes,
        phoneNumber: method === 'sms' ? target : null,
        pendingCodeHash: hashCode(keys.codeHash, `enrol:${method}:${user.id}`, code),
        pendingCodeExpiresAt: new Date(at.getTime() + otpMinutes * 60_000),
        sentAt: at,
        now: at,
      },
      cooldownMs > 0 ? new Date(at.getTime() - cooldownMs) : null,
    );
    if (!row) {
      const current = await store.config(user.id);
      if (current?.isActive) throw new SvcError('mfa.already_enabled');
      // SPEC "Multi-factor routes" 2: sends are spaced by mfa_send_cooldown_seconds. A setup inside the
      // cooldown is refused (the code sent before stays valid) rather than queued.
      const sentAt = current?.lastSentAt?.getTime() ?? at.getTime();
      const retryAfter = Math.max(1, Math.ceil((sentAt + cooldownMs - at.getTime()) / 1000));
      throw new SvcError('auth.rate_limited', {
        headers: { 'Retry-After': String(retryAfter) },
        params: { retry_after: retryAfter },
      });
    }
    deliver(method, user.id, target, code); // stored above, before the response (rule 6)
    return { backup_codes: codes };
  }

  async function confirmWithCode(user: AuthUser, method: 'email' | 'sms', input: string): Promise<MfaStatus> {
    const invalid = method === 'email' ? 'mfa.email_code_invalid' : 'mfa.sms_code_invalid';
    const noSetup = method === 'email' ? 'mfa.no_email_setup' : 'mfa.no_sms_setup';
    const config = await store.config(user.id);
    if (config?.isActive) throw new SvcError('mfa.already_enabled');
    if (!config || config.method !== method || !config.pendingCodeHash) throw new SvcError(noSetup);
    // Counted before checking, like the login challenge: at most mfa_max_attempts guesses per sent code.
    const counted = await store.countEnrolmentAttempt(user.id, method, settings.mfa_max_attempts);
    if (!counted) {
      await store.clearEnrolmentCode(user.id);
      throw new SvcError(invalid);
    }
    const code = normaliseOtpCode(input);
    const expired =
      !counted.pendingCodeExpiresAt || counted.pendingCodeExpiresAt.getTime() <= now().getTime();
    const hash = code ? hashCode(keys.codeHash, `enrol:${method}:${user.id}`, code) : '';
    if (expired || !code || !hashesEqual(hash, counted.pendingCodeHash!)) {
      if (counted.pendingAttempts >= settings.mfa_max_attempts) await store.clearEnrolmentCode(user.id);
      throw new SvcError(invalid);
    }
    if (!(await store.activateWithCode(user.id, method, hash, recorder('mfa.enabled', user.id))))
      throw new SvcError(invalid);
    return { enabled: true, method };
  }

  /** SPEC "Account login lock": password-prompt routes (disable, regenerate) with the lockout rules. */
  async function checkPassword(userId: string, password: string): Promise<void> {
    const guard = loginGuard();
    await guard.assertNotLocked(userId, 'mfa.too_many_attempts');
    if (!(await guard.verifyPassword(userId, password))) {
      throw new SvcError('auth.password_incorrect', { loc: ['body', 'password'] });
    }
  }

  function invalidToken(): SvcError {
    return new SvcError('mfa.token_invalid');
  }

  function readMfaToken(token: string): {
    userId: string;
    challengeId: string;
    /** Absent in tokens signed before the claim existed. */
    passwordChangedAt: number | null | undefined;
    method: LoginMethod;
  } {
    const checked = tokens().checkMfa(token);
    if (!checked) throw invalidToken();
    const challengeId = checked.claims[CHALLENGE_CLAIM];
    if (typeof challengeId !== 'string') throw invalidToken();
    const changedAt = checked.claims[PASSWORD_CLAIM];
    if (typeof changedAt !== 'number' && changedAt !== null && changedAt !== undefined) throw invalidToken();
    const method = checked.claims[METHOD_CLAIM] ?? 'password';
    if (!FIRST_FACTORS.includes(method as LoginMethod)) throw invalidToken();
    return {
      userId: checked.userId,
      challengeId,
      passwordChangedAt: changedAt,
      method: method as LoginMethod,
    };
  }

  /** Whether `input` is a valid second factor of `config` for this challenge, consuming what it uses. */
  async function checkCode(
    config: MfaConfigRow,
    challengeCodeHash: string | null,
    challengeId: string,
    input: string,
  ): Promise<CodeOutcome> {
    const otp = normaliseOtpCode(input);
    if (otp) {
      if (config.method === 'totp') {
        const secret = config.totpSecret ? decryptSecret(config.totpSecret, keys.encryption) : null;
        if (!secret) {
          log.error(
            'a stored TOTP secret cannot be decrypted (was secret_key or mfa_encryption_key changed?)',
            {
              user_id: config.userId,
            },
          );
          return 'wrong';
        }
        const step = matchTotpStep(secret, otp, now());
        return step === null ? 'wrong' : consumeTotpStep(config.userId, step);
      }
      if (!challengeCodeHash) return 'wrong';
      return hashesEqual(hashCode(keys.codeHash, `login:${challengeId}`, otp), challengeCodeHash)
        ? 'ok'
        : 'wrong';
    }
    const backup = normaliseBackupCode(input);
    return backup === null ? 'wrong' : consumeBackupCode(config.userId, backup);
  }

  const service = {
    status: (user: AuthUser): Promise<MfaStatus> => service.statusOf(user.id),

    async statusOf(userId: string): Promise<MfaStatus> {
      const config = await store.config(userId);
      return config?.isActive ? { enabled: true, method: config.method } : { enabled: false, method: null };
    },

    /**
     * SPEC-2 "Administration and self-service" (`DELETE /auth/user`): with MFA active (as at login), a TOTP or
     * backup code is required; a wrong one counts on the login counter like a wrong login code (SPEC "Account
     * login lock"), a replayed valid one is refused uncounted, a valid one is used up.
     */
    async checkAccountCode(userId: string, input: string | undefined): Promise<void> {
      if (!settings.mfa_enabled) return;
      const config = await store.config(userId);
      if (!config?.isActive) return;
      if (input === undefined || input.trim() === '') throw new SvcError('auth.mfa_code_required');
      const guard = loginGuard();
      const admission = await guard.admitAttempt(userId);
      if (!admission.admitted) {
        await guard.assertNotLocked(userId, 'auth.too_many_attempts');
        throw new SvcError('auth.too_many_attempts');
      }
      let settled = false;
      try {
        // No login challenge here: an email or SMS account answers with a backup code.
        const outcome = await checkCode(config, null, '', input);
        settled = true;
        if (outcome === 'wrong' && (await guard.settleWrong(admission))) {
          await guard.assertNotLocked(userId, 'auth.too_many_attempts');
          throw new SvcError('auth.too_many_attempts');
        }
        if (outcome !== 'wrong') await guard.releaseAttempt(admission);
        if (outcome !== 'ok') throw new SvcError('auth.mfa_code_incorrect');
      } finally {
        if (!settled) await guard.releaseAttempt(admission).catch(() => undefined);
      }
    },

    /** SPEC "MFA enrolment": none → TOTP pending; returns the secret, its URI and the backup codes. */
    async setupTotp(user: AuthUser) {
      assertSetupAllowed();
      const secret = generateTotpSecret();
      const { codes, hashes } = newBackupCodes(user.id);
      const at = now();
      const row = await store.upsertPending(
        {
          userId: user.id,
          method: 'totp',
          totpSecret: encryptSecret(secret, keys.encryption),
          backupCodes: hashes,
          phoneNumber: null,
          pendingCodeHash: null,
          pendingCodeExpiresAt: null,
          sentAt: null,
          now: at,
        },
        null,
      );
      if (!row) throw new SvcError('mfa.already_enabled');
      return {
        secret,
        otpauth_uri: totpUri(secret, totpIssuer(settings), user.email || user.username),
        backup_codes: codes,
      };
    },

    /** SPEC "MFA enrolment": TOTP pending → active; the confirm code's step counts as used. */
    async confirmTotp(user: AuthUser, input: string): Promise<MfaStatus> {
      const config = await store.config(user.id);
      if (config?.isActive) throw new SvcError('mfa.already_enabled');
      const invalid = () => new SvcError('mfa.totp_invalid');
      if (!config || config.method !== 'totp' || !config.totpSecret) throw invalid();
      const secret = decryptSecret(config.totpSecret, keys.encryption);
      const code = normaliseOtpCode(input);
      const step = secret && code ? matchTotpStep(secret, code, now()) : null;
      if (step === null || (config.lastTotpStep !== null && step <= config.lastTotpStep)) throw invalid();
      const fresh = await cache.setIfAbsent(`mfa:totp:${user.id}:${step}`, 1, TOTP_USED_STEP_TTL_SECONDS, {
        keep: 'security',
      });
      if (!fresh) throw invalid();
      if (!(await store.activateTotp(user.id, config.totpSecret, step, recorder('mfa.enabled', user.id))))
        throw invalid();
      return { enabled: true, method: 'totp' };
    },

    async setupEmail(user: AuthUser, clientIp: string) {
      await rateLimit(clientIp);
      assertSetupAllowed();
      const config = await store.config(user.id);
      if (config?.isActive) throw new SvcError('mfa.already_enabled');
      if (!user.email) throw new SvcError('mfa.no_email');
      return setupWithCode(user, 'email', user.email);
    },

    confirmEmail: (user: AuthUser, code: string) => confirmWithCode(user, 'email', code),

    async setupSms(user: AuthUser, phoneNumber: string, clientIp: string) {
      await rateLimit(clientIp);
      const config = await store.config(user.id);
      if (config?.isActive) throw new SvcError('mfa.already_enabled');
      return setupWithCode(user, 'sms', phoneNumber);
    },

    confirmSms: (user: AuthUser, code: string) => confirmWithCode(user, 'sms', code),

    /** SPEC "MFA enrolment": active → none with the correct password (also drops a pending setup). */
    async disable(user: AuthUser, password: string): Promise<MfaStatus> {
      await checkPassword(user.id, password);
      await store.deleteConfig(user.id, recorder('mfa.disabled', user.id));
      return { enabled: false, method: null };
    },

    /**
     * `DELETE /admin/user/{user_id}/mfa` (SPEC-2 "Administration and self-service"): removes another user's
     * MFA configuration, backup codes and pending challenges; the caller's own goes through /mfa/disable.
     */
    async resetByAdmin(actorId: string | null, userId: string): Promise<void> {
      if (actorId === userId) throw new SvcError('user.cannot_reset_own_mfa');
      // Not a UUID: no such user (PostgreSQL's uuid column would refuse the text itself).
      if (!isUuid(userId) || !(await store.user(userId))) {
        throw new SvcError('user.not_found', { status: 404, loc: ['path', 'user_id'] });
      }
      await store.deleteConfig(userId, recorder('mfa.disabled', userId));
      log.info('MFA reset by an administrator', { user_id: userId, by: actorId });
    },

    /** SPEC "MFA enrolment": a new set of backup codes with the correct password; the old set stops working. */
    async regenerateBackupCodes(user: AuthUser, password: string) {
      const config = await store.config(user.id);
      // Not a second-step failure here, so not its 401: the caller is authenticated (like user.not_found → 404).
      if (!config?.isActive) throw new SvcError('mfa.not_configured', { status: 400, loc: ['body'] });
      await checkPassword(user.id, password);
      const { codes, hashes } = newBackupCodes(user.id);
      if (!(await store.replaceBackupCodes(user.id, hashes))) {
        throw new SvcError('mfa.not_configured', { status: 400, loc: ['body'] });
      }
      return { backup_codes: codes };
    },

    /** Read by auth's login with the user's row (kernel/ports.ts `SecondFactor`). */
    loginState: store.activeMethod,

    /**
     * SPEC "MFA login challenge": none → pending. Creates the challenge and returns its `mfa_token`; for
     * email/SMS a six-digit code is stored (hashed) and handed to the sender. Null when no MFA is active.
     */
    async startChallenge(
      user: AuthUser,
      known?: { state: unknown },
      method: LoginMethod = 'password',
    ): Promise<string | null> {
      if (!settings.mfa_enabled) return null;
      // `known.state`: the active method read with the user's row by the login (`loginState` above); an SMS
      // code needs the configuration's phone number, read here as without it.
      let config: Pick<MfaConfigRow, 'method' | 'phoneNumber'>;
      if (known?.state === null) return null;
      if (known?.state === 'totp' || known?.state === 'email') {
        config = { method: known.state, phoneNumber: null };
      } else {
        const row = await store.config(user.id);
        if (!row?.isActive) return null;
        config = row;
      }
      const at = now();
      const id = randomUUID();
      const code = config.method === 'totp' ? null : generateOtpCode();
      await store.purgeExpiredChallenges(user.id, at);
      await store.createChallenge({
        id,
        userId: user.id,
        attempts: 0,
        codeHash: code ? hashCode(keys.codeHash, `login:${id}`, code) : null,
        expiresAt: new Date(at.getTime() + otpMinutes * 60_000),
        createdAt: at,
      });
      if (code) {
        const target = config.method === 'email' ? user.email : config.phoneNumber;
        if (target) deliver(config.method as 'email' | 'sms', user.id, target, code);
        else log.warn(`MFA ${config.method} code not sent: the account has no address`, { user_id: user.id });
      }
      // The password change the challenge was started after: a later change ends it (SPEC "Authentication" 8).
      const changedAt = user.passwordChangedAt?.getTime() ?? null;
      return tokens().signMfa(user.id, {
        [CHALLENGE_CLAIM]: id,
        [PASSWORD_CLAIM]: changedAt,
        ...(method === 'password' ? {} : { [METHOD_CLAIM]: method }),
      });
    },

    /**
     * SPEC "MFA login challenge", "Multi-factor routes" 5: counts the attempt on the challenge and on the
     * account before checking the code; on success consumes the code, deletes the challenge, issues tokens.
     * SPEC-2 "Passkeys": a passkey assertion (`webauthn`) is checked by the `passkeys` port in place of a code.
     */
    async verify(
      mfaToken: string,
      input: string | { webauthn: unknown },
      clientIp: string,
    ): Promise<TokenPair> {
      await rateLimit(clientIp);
      const { userId, challengeId, passwordChangedAt, method } = readMfaToken(mfaToken);
      const challenge = await store.challenge(challengeId);
      if (!challenge || challenge.userId !== userId) throw new SvcError('mfa.challenge_not_found');
      if (challenge.expiresAt.getTime() <= now().getTime()) {
        await store.deleteChallenge(challengeId);
        throw invalidToken();
      }
      const user = await store.user(userId);
      // SPEC "Authentication" 8: challenges started before a password change (or of a user deactivated
      // since) die with it.
      const changedAt = user?.passwordChangedAt?.getTime() ?? null;
      const changedSince =
        passwordChangedAt === undefined
          ? changedAt !== null && changedAt >= challenge.createdAt.getTime()
          : changedAt !== passwordChangedAt;
      if (!user?.isActive || changedSince) {
        await store.deleteChallenge(challengeId);
        throw new SvcError('mfa.challenge_not_found');
      }
      // SPEC-2 "Passkeys": a passkey answers the challenge issued by /mfa/webauthn/options, which works once.
      // It is taken before anything is counted: of parallel presentations of one assertion (a double-submit)
      // only the one that took it is counted and checked, the others are refused uncounted, so they can
      // neither use up the challenge's attempts nor beat the valid one to it.
      let assertionCheck: (() => Promise<'ok' | 'wrong'>) | undefined;
      if (typeof input !== 'string') {
        const passkeys = ports.find('passkeys');
        const taken = passkeys
          ? await passkeys.takeMfaChallenge({ userId, mfaToken, assertion: input.webauthn })
          : async () => 'wrong' as const;
        if (!taken) throw new SvcError('mfa.code_invalid', { loc: ['body', 'webauthn'] });
        assertionCheck = taken;
      }
      const guard = loginGuard();
      // The account's slot first (SPEC "Account login lock": wrong codes count on the account as well). A
      // locked account answers 429 with Retry-After (SPEC "Authentication" 7).
      const admission = await guard.admitAttempt(userId);
      if (!admission.admitted) {
        await guard.assertNotLocked(userId, 'mfa.too_many_attempts');
        throw new SvcError('mfa.too_many_attempts');
      }
      let settled = false;
      try {
        const max = settings.mfa_max_attempts;
        const counted = await store.countChallengeAttempt(challengeId, max);
        if (!counted) {
          // Attempts used up by parallel guesses, or the challenge completed/discarded meanwhile.
          await guard.releaseAttempt(admission);
          settled = true;
          if (await store.deleteChallenge(challengeId)) throw new SvcError('mfa.too_many_attempts');
          throw new SvcError('mfa.challenge_not_found');
        }
        const config = await store.config(userId);
        if (!config?.isActive) {
          await guard.releaseAttempt(admission);
          settled = true;
          await store.deleteChallenge(challengeId);
          throw new SvcError('mfa.not_configured');
        }
        const outcome = assertionCheck
          ? await assertionCheck()
          : await checkCode(config, challenge.codeHash, challengeId, input as string);
        if (outcome !== 'ok') {
          settled = true;
          if (outcome === 'wrong' && (await guard.settleWrong(admission))) {
            // This code locked the account: 429 with the lock's Retry-After.
            await guard.assertNotLocked(userId, 'mfa.too_many_attempts');
            throw new SvcError('mfa.too_many_attempts');
          }
          // A replayed valid code (a double-submit) is refused but not counted on the account.
          if (outcome === 'replayed') await guard.releaseAttempt(admission);
          if (counted.attempts >= max) {
            // SPEC: reaching mfa_max_attempts discards the challenge; 429 without Retry-After (log in again).
            await store.deleteChallenge(challengeId);
            throw new SvcError('mfa.too_many_attempts');
          }
          // SPEC "Errors": every wrong code here is 401 mfa.code_invalid. A replayed valid code (the one that just
          // confirmed TOTP, or a double-submit) says so in params.reason, and the message names both causes, as
          // confirm's mfa.totp_invalid does, so a user is not sent hunting for a typo.
          throw new SvcError(
            'mfa.code_invalid',
            typeof input !== 'string'
              ? { loc: ['body', 'webauthn'] }
              : outcome === 'replayed'
                ? { params: { reason: 'used' } }
                : {},
          );
        }
        settled = true;
        if (!(await store.deleteChallenge(challengeId))) {
          await guard.releaseAttempt(admission);
          throw new SvcError('mfa.challenge_not_found');
        }
        // SPEC-3 §3: `user.login` names the first factor (a social login's MFA step is still `oauth`).
        return await guard.completeLogin(user, { passwordChangedAt: changedAt }, admission, method);
      } finally {
        if (!settled) await guard.releaseAttempt(admission).catch(() => undefined);
      }
    },
  } satisfies SecondFactor & Record<string, unknown>;
  return service;
}

export type MfaService = ReturnType<typeof createMfaService>;
