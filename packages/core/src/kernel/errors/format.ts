import type { Translate } from '../i18n/index.js';
import { SvcError } from './svc-error.js';

/** One item of the uniform error body (SPEC "Errors"). */
export interface ErrorItem {
  loc: (string | number)[];
  msg: string;
  type: string;
  code: string;
  params?: Record<string, unknown>;
}

/** `{detail: [...]}` for an SvcError (and the further items it carries). */
export function errorBody(error: SvcError, t: Translate): { detail: ErrorItem[] } {
  return { detail: [error, ...error.extra].map((e) => errorItem(e, t)) };
}

function errorItem(error: SvcError, t: Translate): ErrorItem {
  const item: ErrorItem = {
    loc: error.loc,
    msg: t(error.code, error.params, error.message !== error.code ? error.message : undefined),
    type: error.type,
    code: error.code,
  };
  if (error.params !== undefined) item.params = error.params;
  return item;
}

const SQLITE_UNIQUE = new Set(['SQLITE_CONSTRAINT_UNIQUE', 'SQLITE_CONSTRAINT_PRIMARYKEY']);

/**
 * Code of the error a PostgreSQL statement gets when the client stopped waiting for its answer
 * (`db_statement_timeout_seconds` and a margin passed without a word from the server).
 */
export const NO_ANSWER_CODE = 'DB_NO_ANSWER';
/** Code of the error a file-database statement gets while its shared-memory file cannot be written. */
export const SHM_UNWRITABLE_CODE = 'DB_SHM_UNWRITABLE';

/**
 * Faults of the database itself that a `SELECT 1` does not show: a statement that ran out of time
 * (`57014` query_canceled: statement_timeout or a cancel) or got no answer, and storage that refuses work
 * (every extended code of SQLite's I/O error, read-only, full, corrupt and not-a-database results).
 */
const FAULT_CODES = new Set(['57014', NO_ANSWER_CODE, SHM_UNWRITABLE_CODE, 'SQLITE_FULL', 'SQLITE_NOTADB']);
const SQLITE_FAULT_PREFIXES = ['SQLITE_IOERR', 'SQLITE_READONLY', 'SQLITE_CORRUPT'];

function isFaultCode(code: string): boolean {
  return FAULT_CODES.has(code) || SQLITE_FAULT_PREFIXES.some((p) => code === p || code.startsWith(`${p}_`));
}
const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'CONNECTION_CLOSED',
  'CONNECTION_ENDED',
  'CONNECTION_DESTROYED',
  'CONNECT_TIMEOUT',
  '57P01', // admin_shutdown
  '57P03', // cannot_connect_now
  '55P03', // lock_not_available: lock_timeout or NOWAIT
  'SQLITE_BUSY',
  'SQLITE_CANTOPEN',
]);

/** The driver code of `error` or of one of its causes that says the database itself failed, if any. */
export function databaseFaultOf(error: unknown): string | undefined {
  const seen = new Set<unknown>();
  for (let current = error; current && typeof current === 'object' && !seen.has(current);) {
    seen.add(current);
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && isFaultCode(code)) return code;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/**
 * Maps database driver errors to stable codes: duplicates → 409 `db.conflict`, dangling references → 400
 * `db.invalid_value`, an unreachable database, a statement past its bound and storage that fails → 503
 * `db.unavailable` (SPEC "Errors": the client can only try again later). Anything else: undefined.
 */
export function mapDatabaseError(error: unknown): SvcError | undefined {
  const seen = new Set<unknown>();
  let current: unknown = error;
  while (current && typeof current === 'object' && !seen.has(current)) {
    seen.add(current);
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') {
      if (code === '23505' || SQLITE_UNIQUE.has(code)) return new SvcError('db.conflict', { cause: error });
      if (code === '23503' || code === 'SQLITE_CONSTRAINT_FOREIGNKEY')
        return new SvcError('db.invalid_value', { cause: error });
      if (CONNECTION_CODES.has(code) || isFaultCode(code))
        return new SvcError('db.unavailable', { cause: error });
    }
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/** True when `error` (or a cause of it) says a table does not exist, on either dialect. */
export function isMissingTableError(error: unknown): boolean {
  const seen = new Set<unknown>();
  for (
    let e = error as { code?: unknown; message?: unknown; cause?: unknown } | undefined;
    e && !seen.has(e);
  ) {
    seen.add(e);
    if (e.code === '42P01') return true; // PostgreSQL undefined_table
    if (typeof e.message === 'string' && /no such table/i.test(e.message)) return true; // SQLite
    e = e.cause as typeof e;
  }
  return false;
}
