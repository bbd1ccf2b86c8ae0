// The wall clock of the test process, moved ahead without waiting. The server of `startTestApp` runs in the
// test's own process and every service reads `new Date()`, so moving `Date` moves the app's clock: token
// `iat`/`exp`/`auth_time`, their verification and the recent-login check alike. Only `Date` is replaced;
// timers, `performance` and `process.hrtime` stay real, so sockets, pools and timeouts behave as usual.
// Jest's own fake timers do the work (`import.meta.jest` in an ES module test).

const jestObject = (import.meta as unknown as { jest: typeof jest }).jest;

/** Everything but `Date`: kept real. */
const REAL = [
  'hrtime',
  'nextTick',
  'performance',
  'queueMicrotask',
  'requestAnimationFrame',
  'cancelAnimationFrame',
  'requestIdleCallback',
  'cancelIdleCallback',
  'setImmediate',
  'clearImmediate',
  'setInterval',
  'clearInterval',
  'setTimeout',
  'clearTimeout',
] as const;

let moved = false;

/**
 * Moves `Date` `ms` milliseconds ahead of what it reads now; it keeps running at the real pace from there.
 * Call {@link restoreClock} in `afterEach`/`afterAll`.
 * @example moveClockAhead(6 * 60_000); // six minutes later
 */
export function moveClockAhead(ms: number): void {
  const target = Date.now() + ms;
  if (moved) {
    jestObject.setSystemTime(target);
    return;
  }
  jestObject.useFakeTimers({ doNotFake: [...REAL], now: target, advanceTimers: true });
  moved = true;
}

/** Puts the real `Date` back. */
export function restoreClock(): void {
  if (!moved) return;
  jestObject.useRealTimers();
  moved = false;
}
