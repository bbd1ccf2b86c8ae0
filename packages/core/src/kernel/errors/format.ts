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
  'SQLITE_BUSY',
  'SQLITE_CANTOPEN',
]);

/**
 * Maps database driver errors to stable codes: duplicates → 409 `db.conflict`, dangling references → 400
 * `db.invalid_value`, an unreachable database → 503 `db.unavailable`. Anything else: undefined.
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
      if (CONNECTION_CODES.has(code)) return new SvcError('db.unavailable', { cause: error });
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
