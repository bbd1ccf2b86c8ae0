import { writeSync } from 'node:fs';
import { currentRequestId } from './context.js';

/** A named logger; `exc` on error/warning is logged as `exc_info`. */
export interface Logger {
  debug(message: string, meta?: Record<string, unknown>): void;
  info(message: string, meta?: Record<string, unknown>): void;
  warn(message: string, meta?: Record<string, unknown>): void;
  error(message: string, meta?: Record<string, unknown> & { exc?: unknown }): void;
  child(name: string): Logger;
  /** Whether a record of `level` is written at all (a caller can skip building one); absent: every level. */
  enabled?(level: 'debug' | 'info' | 'warning' | 'error'): boolean;
  /** Writes the lines still buffered, synchronously where the stream allows (stderr: pipes and files). */
  flush?(): void;
}

// Levels from the SPEC's names: CRITICAL, ERROR, WARNING, INFO, DEBUG.
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
  /**
   * Lines are collected and written in batches: after this many milliseconds, at
   * {@link LOG_FLUSH_BYTES}, on `flush()` and on process exit. 0 writes them at the end of the current
   * microtask queue (still one write for the lines of one synchronous burst).
   * @default 50 for process.stderr and process.stdout, 0 for any other stream
   */
  flushIntervalMs?: number;
}

/** docs/performance.md: the access log at INFO cost up to half of a request when every line was its own write. */
export const LOG_FLUSH_INTERVAL_MS = 50;
/** A batch this large is written at once instead of waiting for the interval. */
export const LOG_FLUSH_BYTES = 64 * 1024;

/** Buffers not yet written, flushed synchronously when the process exits (exit(), end of loop, uncaught). */
const pending = new Set<LineBuffer>();
let exitHookInstalled = false;

/**
 * Collects formatted lines and writes them as one chunk (docs/performance.md: one `write` system call per access line,
 * synchronous for stderr pipes and files, cost a third to half of GET /api/auth/user at INFO). Nothing is
 * lost on a normal exit, `process.exit()` or an uncaught exception: the `exit` hook writes what is left, and
 * stderr writes are synchronous there. A SIGKILL loses at most the last interval's lines.
 */
class LineBuffer {
  private chunks: string[] = [];
  private bytes = 0;
  private timer: NodeJS.Timeout | undefined;
  private scheduled = false;

  constructor(
    private readonly stream: NodeJS.WritableStream,
    private readonly intervalMs: number,
  ) {}

  push(line: string): void {
    this.chunks.push(line);
    this.bytes += line.length;
    if (this.bytes >= LOG_FLUSH_BYTES) return this.flush();
    if (this.scheduled) return;
    this.scheduled = true;
    pending.add(this);
    installExitHook();
    if (this.intervalMs > 0) {
      this.timer = setTimeout(() => this.flush(), this.intervalMs);
      this.timer.unref();
    } else queueMicrotask(() => this.flush());
  }

  /** Writes what is collected; `atExit`: synchronously to the file descriptor, see {@link writeAllSync}. */
  flush(atExit = false): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.scheduled = false;
    pending.delete(this);
    if (this.chunks.length === 0) return;
    const text = this.chunks.length === 1 ? this.chunks[0]! : this.chunks.join('');
    this.chunks = [];
    this.bytes = 0;
    const fd = (this.stream as { fd?: unknown }).fd;
    if (atExit && typeof fd === 'number') writeAllSync(fd, text);
    else this.stream.write(text);
  }
}

/**
 * At exit nothing asynchronous runs any more, and a stderr pipe is non-blocking: a write the reader has no
 * room for would be queued and lost. Write directly, waiting for room, for at most a second.
 */
function writeAllSync(fd: number, text: string): void {
  let data = Buffer.from(text);
  const deadline = Date.now() + 1_000;
  while (data.length > 0 && Date.now() < deadline) {
    try {
      data = data.subarray(writeSync(fd, data));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EAGAIN') return;
    }
  }
}

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const buffer of [...pending]) buffer.flush(true);
  });
}

function formatException(exc: unknown): string | undefined {
  if (exc === undefined || exc === null) return undefined;
  if (exc instanceof Error) return exc.stack ?? `${exc.name}: ${exc.message}`;
  return String(exc);
}

/** One record on its way to its line. */
type Info = Record<string, unknown>;

/** The request id and the exception's text, as the record's own fields. */
function addContext(info: Info): Info {
  info.request_id ??= currentRequestId();
  if (info.exc !== undefined) {
    info.exc_info = formatException(info.exc);
    delete info.exc;
  }
  return info;
}

function jsonLine(info: Info): string {
  const { level, message, logger, request_id, exc_info, timestamp, ...rest } = info;
  return JSON.stringify({
    time: timestamp,
    level: LEVEL_NAMES[level as string] ?? level,
    logger,
    message,
    request_id,
    ...(exc_info !== undefined ? { exc_info } : {}),
    ...rest,
  });
}

function textLine(info: Info): string {
  const { level, message, logger, request_id, exc_info, timestamp } = info;
  const line = `${timestamp as string} ${LEVEL_NAMES[level as string] ?? level} [${logger as string}] [${request_id as string}] ${message as string}`;
  return exc_info ? `${line}\n${exc_info as string}` : line;
}

/** The process's root logger: one line per record on stderr, text or JSON. */
export function createLogger(options: LoggerOptions, name = 'svc'): Logger {
  const stream = options.stream ?? process.stderr;
  const standard = stream === process.stderr || stream === process.stdout;
  const buffer = new LineBuffer(stream, options.flushIntervalMs ?? (standard ? LOG_FLUSH_INTERVAL_MS : 0));
  const levelName = options.level.toLowerCase() === 'warn' ? 'warning' : options.level.toLowerCase();
  const threshold: number = LEVELS[levelName as keyof typeof LEVELS] ?? LEVELS.info;
  // The line formats winston's `format.combine(context, format.timestamp(), printf(line))` applied, written
  // out (docs/performance.md "The CLI's start": importing winston for them cost every command and every start
  // about 65 ms); `timestamp` as logform's: a record's own is kept, else the time in ISO 8601.
  const line = options.format === 'json' ? jsonLine : textLine;
  const root: Root = {
    enabled: (level) => LEVELS[level] <= threshold,
    write(level, message, meta) {
      const info = addContext({ logger: name, ...meta, level, message });
      if (!info.timestamp) info.timestamp = new Date().toISOString();
      buffer.push(`${line(info)}\n`);
    },
    flush: () => buffer.flush(),
  };
  return wrap(root, name);
}

interface Root {
  enabled(level: keyof typeof LEVELS): boolean;
  write(level: keyof typeof LEVELS, message: string, meta: Record<string, unknown>): void;
  flush(): void;
}

function wrap(root: Root, name: string): Logger {
  const log = (level: keyof typeof LEVELS, message: string, meta?: Record<string, unknown>) => {
    // docs/performance.md: a filtered record costs nothing
    if (!root.enabled(level)) return;
    root.write(level, message, { logger: name, ...(meta ?? {}) });
  };
  return {
    debug: (m, meta) => log('debug', m, meta),
    info: (m, meta) => log('info', m, meta),
    warn: (m, meta) => log('warning', m, meta),
    error: (m, meta) => log('error', m, meta),
    child: (child) => wrap(root, `${name}.${child}`),
    enabled: (level) => root.enabled(level),
    flush: root.flush,
  };
}
