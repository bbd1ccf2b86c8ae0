import { setTimeout as sleep } from 'node:timers/promises';
import type { SQL } from 'drizzle-orm';
import type { Settings } from '../kernel/config/schema.js';
import type { Logger } from '../kernel/log/logger.js';
import type { AttemptAdmission, WebhookOutbox } from '../kernel/ports.js';
import { LOGIN_ADMISSION_POLL_MS, LOGIN_ADMISSION_WAIT_MS, PROVISIONAL_LOCK_MS } from './constants.js';
import type { AuthStore, UserRow } from './store.js';

/**
 * The account lock of SPEC "Account login lock", safe under concurrency (docs/security.md "Concurrent
 * logins"). Every credential check (password, second factor) first takes a slot on the account's counter
 * (`failed_login_count`): counted atomically before its outcome is used, so parallel guesses never get more
 * than `login_max_attempts` outcomes. The slot then settles:
 * - wrong: it stays counted; when the counter has reached the limit the account locks (counter reset);
 * - right: the login resets the counter (a password followed by a second factor only gives its slot back,
 *   so wrong codes add up across challenges until a second factor succeeds);
 * - void (a replay of a code that was valid a moment ago): the slot is given back.
 * An attempt that finds every slot taken by attempts still in flight waits for them (bounded) instead of
 * being refused, so a right password is never answered as a wrong one because others were in flight.
 */
export function createLoginAttempts(deps: {
  settings: Settings;
  store: AuthStore;
  log: Logger;
  now: () => Date;
  /** The webhook outbox (SPEC-3 §3). */
  webhooks?: () => WebhookOutbox;
}) {
  const { settings, store, log, now } = deps;
  const lockoutMs = settings.login_lockout_minutes * 60_000;
  // Attempts of this process waiting for a slot, woken when an attempt of the same account settles here;
  // attempts of other processes are seen by polling.
  const waiting = new Map<string, Set<() => void>>();

  function wake(userId: string): void {
    const set = waiting.get(userId);
    if (!set) return;
    waiting.delete(userId);
    for (const resolve of set) resolve();
  }

  async function waitForSettle(userId: string): Promise<void> {
    let resolve!: () => void;
    const woken = new Promise<void>((r) => (resolve = r));
    let set = waiting.get(userId);
    if (!set) waiting.set(userId, (set = new Set()));
    set.add(resolve);
    const ac = new AbortController();
    await Promise.race([
      woken,
      sleep(LOGIN_ADMISSION_POLL_MS, undefined, { signal: ac.signal }).catch(() => undefined),
    ]);
    ac.abort();
    set.delete(resolve);
  }

  function warnLocked(userId: string, username: string | undefined, lockedUntil: Date): void {
    log.warn('account locked after too many failed attempts', {
      userId,
      username: username ?? '',
      lockedUntil: lockedUntil.toISOString(),
    });
  }

  /** Locks when the counter has reached the limit; true when this call set the lock. */
  async function lockIfFull(userId: string, username?: string): Promise<boolean> {
    const at = now();
    const lockUntil = new Date(at.getTime() + lockoutMs);
    // SPEC-3 §3: `user.locked` commits with the lock.
    const webhooks = deps.webhooks?.();
    const locked = await store.lockIfFull(
      userId,
      settings.login_max_attempts,
      at,
      lockUntil,
      webhooks?.enabled
        ? (tx, row) => webhooks.record(tx, 'user.locked', { userId: row.id, username: row.username })
        : undefined,
    );
    if (locked) warnLocked(userId, username, lockUntil);
    return locked;
  }

  /** A slot taken at `at`: any lock found when its check settles was set after the reservation committed. */
  function admitted(userId: string, at: Date, waitedMs: number): AttemptAdmission {
    return {
      userId,
      admitted: true,
      // A lock before the reservation would have refused it; the margin covers a locker that read its clock
      // before this one.
      liftLocksAfter: new Date(at.getTime() + lockoutMs - PROVISIONAL_LOCK_MS),
      lockedUntil: null,
      waitedMs,
    };
  }

  return {
    /**
     * A password login's first step: the active account named `username` looked up and a slot taken on its
     * counter in one statement. Undefined when there is no such active account or no slot is free right now:
     * the caller then looks the user up and takes {@link admit}, which waits for slots in flight or refuses.
     * `state`: an SQL expression over the user's row read with it (`row.state`; auth/store.ts).
     */
    async admitByUsername(
      username: string,
      state?: SQL,
    ): Promise<{ row: UserRow & { state?: unknown }; admission: AttemptAdmission } | undefined> {
      const at = now();
      const row = await store.reserveAttemptByUsername(username, settings.login_max_attempts, at, state);
      return row ? { row, admission: admitted(row.id, at, 0) } : undefined;
    },

    /**
     * Takes a slot for one credential check. 'locked': the account is locked (or gone); nothing was counted.
     * A lock set in the last {@link PROVISIONAL_LOCK_MS} may still be lifted by a right password that was in
     * flight when it was set, so an attempt meeting one waits like one meeting a full counter.
     */
    async admit(userId: string, username?: string): Promise<AttemptAdmission> {
      const deadline = Date.now() + LOGIN_ADMISSION_WAIT_MS;
      // Only the time asleep waiting for others' attempts: the queries are the same for every attempt.
      let waitedMs = 0;
      const result = (admission: Omit<AttemptAdmission, 'waitedMs'>): AttemptAdmission => ({
        ...admission,
        waitedMs,
      });
      for (;;) {
        const at = now();
        if (await store.reserveAttempt(userId, settings.login_max_attempts, at)) {
          return admitted(userId, at, waitedMs);
        }
        const row = await store.userById(userId);
        if (!row) return result({ userId, admitted: false, liftLocksAfter: at, lockedUntil: null });
        const lockedUntil =
          row.lockedUntil && row.lockedUntil.getTime() > at.getTime() ? row.lockedUntil : null;
        // Set (at lockedUntil - lockout) within the last PROVISIONAL_LOCK_MS; a lock that ends later than the
        // lockout could have set (an administrator's, or a changed setting) is never provisional.
        const setAgo = lockedUntil ? at.getTime() - (lockedUntil.getTime() - lockoutMs) : Infinity;
        // A little below zero too: this check's clock was read just before another request set the lock.
        const provisional = setAgo > -PROVISIONAL_LOCK_MS && setAgo < PROVISIONAL_LOCK_MS;
        if (lockedUntil && !provisional)
          return result({ userId, admitted: false, liftLocksAfter: at, lockedUntil });
        if (Date.now() >= deadline) {
          // Still full after the wait: slots taken by attempts that never settled (a process killed while
          // verifying). They were counted before their check, so they count as failures: lock.
          if (!lockedUntil) await lockIfFull(userId, username);
          const after = await store.userById(userId);
          return result({
            userId,
            admitted: false,
            liftLocksAfter: at,
            lockedUntil: after?.lockedUntil ?? null,
          });
        }
        const asleep = Date.now();
        await waitForSettle(userId);
        waitedMs += Date.now() - asleep;
      }
    },

    /** A wrong credential: the slot stays counted; true when this attempt locked the account. */
    async settleWrong(admission: AttemptAdmission, username?: string): Promise<boolean> {
      try {
        return await lockIfFull(admission.userId, username);
      } finally {
        wake(admission.userId);
      }
    },

    /**
     * Gives the slot back without resetting the counter (a right password before the second factor, or a
     * replayed code), and lifts a lock set while this attempt was in flight: that lock counted this slot.
     */
    async release(admission: AttemptAdmission): Promise<void> {
      try {
        await store.releaseAttempt(admission.userId, admission.liftLocksAfter);
      } finally {
        wake(admission.userId);
      }
    },

    /** A completed login reset the counter in its own write ({@link AuthStore.completeLogin}): wake waiters. */
    settled(admission: AttemptAdmission): void {
      wake(admission.userId);
    },
  };
}

export type LoginAttempts = ReturnType<typeof createLoginAttempts>;
