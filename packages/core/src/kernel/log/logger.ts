import winston from 'winston';
import { currentRequestId } from './context.js';

/** A named logger; `exc` on error/warning is logged as `exc_info`. */
export interface Logger {
  debug(message: string, meta?: Record<string, unknown>): void;
  info(message: string, meta?: Record<string, unknown>): void;
  warn(message: string, meta?: Record<string, unknown>): void;
  error(message: string, meta?: Record<string, unknown> & { exc?: unknown }): void;
  child(name: string): Logger;
}

// winston levels from the SPEC's names: CRITICAL, ERROR, WARNING, INFO, DEBUG.
const LEVELS = { critical: 0, error: 1, warning: 2, info: 3, debug: 4 } as const;
const LEVEL_NAMES: Record<string, string> = {
  critical: 'CRITICAL',
  error: 'ERROR',
  warning: 'WARNING',
  info: 'INFO',
  debug: 'DEBUG',
};

export interface LoggerOptions {
  level: string; // SPEC names, any case
  format: 'text' | 'json';
  /** Where lines go. @default process.stderr */
  stream?: NodeJS.WritableStream;
}

function formatException(exc: unknown): string | undefined {
  if (exc === undefined || exc === null) return undefined;
  if (exc instanceof Error) return exc.stack ?? `${exc.name}: ${exc.message}`;
  return String(exc);
}

const addContext = winston.format((info) => {
  info.request_id ??= currentRequestId();
  if (info.exc !== undefined) {
    info.exc_info = formatException(info.exc);
    delete info.exc;
  }
  return info;
});

const jsonLine = winston.format.printf((info) => {
  const { level, message, logger, request_id, exc_info, timestamp, ...rest } = info as Record<
    string,
    unknown
  >;
  const extra = Object.fromEntries(Object.entries(rest).filter(([k]) => typeof k === 'string'));
  return JSON.stringify({
    time: timestamp,
    level: LEVEL_NAMES[level as string] ?? level,
    logger,
    message,
    request_id,
    ...(exc_info !== undefined ? { exc_info } : {}),
    ...extra,
  });
});

const textLine = winston.format.printf((info) => {
  const { level, message, logger, request_id, exc_info, timestamp } = info as Record<string, unknown>;
  const line = `${timestamp as string} ${LEVEL_NAMES[level as string] ?? level} [${logger as string}] [${request_id as string}] ${message as string}`;
  return exc_info ? `${line}\n${exc_info as string}` : line;
});

/** The process's root logger: one line per record on stderr, text or JSON. */
export function createLogger(options: LoggerOptions, name = 'svc'): Logger {
  const stream = options.stream ?? process.stderr;
  const base = winston.createLogger({
    levels: LEVELS,
    level: options.level.toLowerCase() === 'warn' ? 'warning' : options.level.toLowerCase(),
    format: winston.format.combine(
      addContext(),
      winston.format.timestamp(),
      options.format === 'json' ? jsonLine : textLine,
    ),
    transports: [new winston.transports.Stream({ stream })],
  });
  return wrap(base, name);
}

function wrap(base: winston.Logger, name: string): Logger {
  const log = (level: keyof typeof LEVELS, message: string, meta?: Record<string, unknown>) => {
    // issue 9: a filtered record costs nothing (winston would copy and format it before its level check)
    if (!base.isLevelEnabled(level)) return;
    base.log(level, message, { logger: name, ...(meta ?? {}) });
  };
  return {
    debug: (m, meta) => log('debug', m, meta),
    info: (m, meta) => log('info', m, meta),
    warn: (m, meta) => log('warning', m, meta),
    error: (m, meta) => log('error', m, meta),
    child: (child) => wrap(base, `${name}.${child}`),
  };
}
