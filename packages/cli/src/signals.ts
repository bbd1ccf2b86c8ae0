/**
 * Ctrl-C reaches the whole foreground process group, and each package manager in between relays it again:
 * pnpm's lifecycle runner forwards the SIGINT it got to its script and turns a second one into SIGTERM, so
 * under `pnpm demo` `svc serve` receives two or three stop signals within milliseconds for one keypress.
 * Signals that close to the first are that same keypress; only a SIGINT that comes later is a second Ctrl-C,
 * the user's way to stop waiting for in-flight requests.
 */
export const RELAYED_SIGNAL_WINDOW_MS = 1_000;

/**
 * Calls `stop` on the first SIGTERM or SIGINT and `force` on a SIGINT at least
 * {@link RELAYED_SIGNAL_WINDOW_MS} later; other signals while stopping are ignored. The handlers stay until the
 * process ends ({@link exitAfterStop}), so no late copy meets the default action.
 */
export function onStopSignals(stop: () => void, force: () => void): void {
  let stoppedAt: number | undefined;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stoppedAt === undefined) {
      stoppedAt = Date.now();
      stop();
    } else if (signal === 'SIGINT' && Date.now() - stoppedAt >= RELAYED_SIGNAL_WINDOW_MS) {
      force();
    }
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
}

/**
 * Ends a process that stopped on a signal. Not by letting the event loop drain: a natural exit first closes the
 * signal handles, which puts back the default action, and a relayed copy of the Ctrl-C that arrives in that
 * moment kills the process by SIGINT, which pnpm then reports as a failed script. The logger flushes on
 * 'exit' (kernel/log/logger.ts), so nothing written is lost.
 */
export function exitAfterStop(code: number): never {
  process.exit(code);
}
