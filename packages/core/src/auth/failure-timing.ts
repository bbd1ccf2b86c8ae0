import { setTimeout as sleep } from 'node:timers/promises';

/** Each failure lowers the envelope by this factor, so one slow outlier fades after a few dozen failures. */
const DECAY = 0.97;
/** Never hold a failure longer than this, whatever the envelope says. */
const MAX_FLOOR_MS = 2_000;

/**
 * Makes every failed login answer in about the same time (SPEC "Authentication routes" 1: unknown, wrong,
 * inactive and locked alike). The paths differ by a database write or two next to the Argon2 verify, which
 * a client can measure; each failure therefore waits until the envelope of recent failure durations (it rises
 * to the slowest at once and decays slowly), without blocking the event loop.
 */
export function createFailureTiming(now: () => number = () => performance.now()) {
  let floorMs = 0;
  return {
    /** The start of an attempt, to pass to {@link settle}. */
    start: now,
    /** Waits until this failure took as long as the slowest recent ones. */
    async settle(startedAt: number): Promise<void> {
      const elapsed = now() - startedAt;
      floorMs = Math.min(MAX_FLOOR_MS, Math.max(elapsed, floorMs * DECAY));
      const wait = floorMs - elapsed;
      if (wait > 1) await sleep(wait);
    },
  };
}
