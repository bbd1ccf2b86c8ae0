import { resolve } from 'node:path';
import { createLogger, loadSettings, type Logger } from '@svc/core/internal';

/** The two values of the setting `log_format`. */
export type LogFormat = 'text' | 'json';

/** Levels of the CLI's own lines: a progress note, a warning, a problem (usually followed by exit 1 or 2). */
export type CliLineLevel = 'info' | 'warning' | 'error';

/** Logger name of the CLI's own lines in JSON (the app's records are `svc`, `svc.http`, `svc.db`, …). */
export const CLI_LOGGER_NAME = 'svc.cli';

let projectDir = '.';
let fixedFormat: LogFormat | undefined;
let jsonLogger: Logger | undefined;

/**
 * The project whose settings decide the format of the CLI's own lines until {@link useLogFormat} fixes it.
 * @example
 * useProjectDir(resolveBaseDir(argv.baseDir));
 */
export function useProjectDir(baseDir: string): void {
  projectDir = resolve(baseDir);
}

/**
 * Fixes the format of the CLI's own lines to the one the process's app logs with (its runtime settings, which
 * also hold what `createApp({ settings })` set), instead of reading the project's settings for each line.
 * @example
 * useLogFormat(runtime.settings.log_format);
 */
export function useLogFormat(format: LogFormat): void {
  fixedFormat = format;
}

/** Most settings a configuration can get wrong at once before {@link logFormatOf} gives up and says text. */
const MAX_INVALID_SETTINGS = 20;

/**
 * The `log_format` of the project in `baseDir` (environment, `.env`, `svc.yaml`), `text` when it cannot be
 * read. Another invalid setting does not hide it: the line that reports that problem must be JSON too when
 * the project asked for JSON (SPEC "Startup rules" 5), so such a setting is dropped and the rest read again.
 * @example
 * logFormatOf('/srv/notes') // 'json' with SVC_LOG_FORMAT=json in the environment or .env
 */
export function logFormatOf(
  baseDir: string,
  env: Record<string, string | undefined> = process.env,
): LogFormat {
  const overrides: Record<string, unknown> = {};
  for (let attempt = 0; attempt < MAX_INVALID_SETTINGS; attempt++) {
    try {
      return loadSettings({ baseDir, env, overrides, requireSecretKey: false }).log_format;
    } catch (error) {
      const key = /^invalid setting '([^']+)'/.exec((error as Error)?.message ?? '')?.[1];
      // log_format itself invalid, or a problem that is not one setting (a secret in svc.yaml): text.
      if (key === undefined || key === 'log_format' || key in overrides) return 'text';
      overrides[key] = undefined; // its default, or absent
    }
  }
  return 'text';
}

/** Format of the next line: the fixed one, else the project's settings as they are now (`svc dev` reloads them). */
function currentFormat(): LogFormat {
  return fixedFormat ?? logFormatOf(projectDir);
}

/**
 * Writes one line of the CLI's own on stderr. As text it is `svc: <message>` (`svc: warning: <message>` for a
 * warning), the form the docs and scripts know. With `log_format=json` it is one JSON object with `time`,
 * `level`, `logger` (`svc.cli`), `message`, `request_id` and, for an exception, `exc_info`, like every other
 * line of the process (SPEC "Startup rules" 5): a log collector never meets a line it cannot parse. The
 * CLI's lines are not filtered by `log_level`, in either format: they say that the server listens or why
 * the program stops.
 * @example
 * cliLine('info', `listening on ${url}`);
 * cliLine('error', 'unexpected error: boom', error);
 */
export function cliLine(level: CliLineLevel, message: string, exc?: unknown): void {
  if (currentFormat() === 'json') {
    jsonLogger ??= createLogger(
      { level: 'debug', format: 'json', stream: process.stderr, flushIntervalMs: 0 },
      CLI_LOGGER_NAME,
    );
    const meta = exc === undefined ? undefined : { exc };
    if (level === 'error') jsonLogger.error(message, meta);
    else if (level === 'warning') jsonLogger.warn(message, meta);
    else jsonLogger.info(message, meta);
    // Written now, not at the end of the microtask queue: a process.exit() may follow.
    jsonLogger.flush?.();
    return;
  }
  const text = level === 'warning' ? `warning: ${message}` : message;
  const stack = exc instanceof Error && exc.stack ? `\n${exc.stack}` : '';
  process.stderr.write(`svc: ${text}${stack}\n`);
}

// Kept here for the modules that import it from output.ts; it lives in argv.ts, which loads nothing else.
export { baseDirOfArgv } from './argv.js';
