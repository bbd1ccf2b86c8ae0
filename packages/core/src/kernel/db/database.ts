import { mkdirSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { sql, type SQL } from 'drizzle-orm';
import { drizzle as drizzleSqlite, type BetterSQLite3Database } from 'drizzle-orm/better-sqlite3';
import { drizzle as drizzlePg } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import type { Settings } from '../config/schema.js';
import type { Logger } from '../log/logger.js';
import { withStatementCache } from './statement-cache.js';
import type { Dialect } from './tables.js';

/**
 * The query builder every store uses. Typed as the SQLite builder; on PostgreSQL the same calls build the
 * same queries (stores use `.returning()` for affected rows so both dialects answer alike).
 */
export type Orm = BetterSQLite3Database<Record<string, never>>;

/** One database behind one interface: SQLite file (better-sqlite3) or PostgreSQL (postgres). */
export interface Database {
  readonly dialect: Dialect;
  readonly url: string;
  /** Name shown by `expose_response_database`. */
  readonly name: string;
  readonly orm: Orm;
  /** Runs raw SQL statements (DDL, migrations). */
  exec(statement: string): Promise<void>;
  /** Rows of a raw query. */
  all<T = Record<string, unknown>>(query: SQL): Promise<T[]>;
  /**
   * Runs `fn` in a transaction. On SQLite transactions are serialised in-process and `fn` must only await
   * queries of `tx` (no hashing or network inside), so nothing else interleaves.
   */
  transaction<T>(fn: (tx: Orm) => Promise<T>): Promise<T>;
  /** `SELECT 1` within `timeoutMs`; false when the database does not answer. */
  ping(timeoutMs: number): Promise<boolean>;
  close(): Promise<void>;
  /** The native client (better-sqlite3 Database or postgres Sql) for dialect-specific work. */
  readonly native: unknown;
}

export interface OpenDatabaseOptions {
  url: string;
  settings: Settings;
  log: Logger;
  /** Directory relative file URLs resolve against. @default process.cwd() */
  baseDir?: string;
}

export function dialectOf(url: string): Dialect {
  if (/^postgres(ql)?:\/\//.test(url)) return 'pg';
  if (url.startsWith('file:') || url.startsWith('sqlite:') || url === ':memory:') return 'sqlite';
  throw new Error(`unsupported database URL '${redactUrl(url)}': use file:<path> or postgres://...`);
}

/** The URL without its password, for logs and errors. */
export function redactUrl(url: string): string {
  return url.replace(/\/\/([^:/@]+):[^@/]*@/, '//$1:***@');
}

/** `file:./auth.db`, `file:///abs/auth.db`, `sqlite:///auth.db` → a filesystem path. */
export function sqlitePath(url: string, baseDir = process.cwd()): string {
  if (url === ':memory:' || url === 'file::memory:') return ':memory:';
  let path = url.replace(/^sqlite:\/\//, '').replace(/^file:/, '');
  if (path.startsWith('//')) path = path.slice(2); // file:///abs → /abs
  path = path.split('?')[0]!;
  return isAbsolute(path) ? path : resolve(baseDir, path);
}

class Mutex {
  private tail: Promise<void> = Promise.resolve();
  run<T>(fn: () => Promise<T>): Promise<T> {
    const result = this.tail.then(fn);
    this.tail = result.then(
      () => undefined,
      () => undefined,
    );
    return result;
  }
}

function drizzleLogger(log: Logger) {
  return { logQuery: (query: string, params: unknown[]) => log.debug(`SQL ${query}`, { params }) };
}

/** SPEC "Startup rules" 4 and issue #12: WAL, explicit synchronous, busy_timeout, foreign keys on. */
function openSqlite(options: OpenDatabaseOptions): Database {
  const path = sqlitePath(options.url, options.baseDir);
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const client = new BetterSqlite3(path);
  client.pragma('journal_mode = WAL');
  client.pragma(`synchronous = ${options.settings.sqlite_synchronous}`);
  client.pragma('busy_timeout = 5000');
  client.pragma('foreign_keys = ON');
  const orm = drizzleSqlite({
    client: withStatementCache(client),
    logger: options.settings.dbdebug ? drizzleLogger(options.log) : false,
  }) as unknown as Orm;
  const mutex = new Mutex();
  return {
    dialect: 'sqlite',
    url: options.url,
    name: path
      .split('/')
      .pop()!
      .replace(/\.[^.]+$/, ''),
    orm,
    native: client,
    async exec(statement) {
      client.exec(statement);
    },
    async all<T>(query: SQL) {
      return orm.all(query) as T[];
    },
    transaction<T>(fn: (tx: Orm) => Promise<T>) {
      return mutex.run(async () => {
        client.exec('BEGIN IMMEDIATE');
        try {
          const result = await fn(orm);
          client.exec('COMMIT');
          return result;
        } catch (error) {
          if (client.inTransaction) client.exec('ROLLBACK');
          throw error;
        }
      });
    },
    async ping() {
      try {
        client.prepare('SELECT 1').get();
        return true;
      } catch {
        return false;
      }
    },
    async close() {
      if (client.open) client.close();
    },
  };
}

/**
 * Ceiling of the pause before a pooled PostgreSQL connection is re-opened after a failure, seconds.
 * postgres-js counts failures across the whole pool and waits `3^failures / 100` s (up to 20 s) before the
 * next attempt; queries wait that long, so with the database down a burst of requests hung 10 to 20 s
 * before their 503 and the first requests after a restart waited as long (issue 11, faults). Capped, a
 * request fails or recovers within about a second, while a down server still sees at most one attempt per
 * connection and second.
 */
export const PG_RECONNECT_MAX_DELAY_SECONDS = 1;

/** postgres-js `backoff`: its own growth, jittered, capped at {@link PG_RECONNECT_MAX_DELAY_SECONDS}. */
export function pgReconnectDelay(failures: number): number {
  return (0.5 + Math.random() / 2) * Math.min(3 ** failures / 100, PG_RECONNECT_MAX_DELAY_SECONDS);
}

function openPostgres(options: OpenDatabaseOptions): Database {
  const s = options.settings;
  const client = postgres(options.url, {
    max: s.db_pool_size + s.db_max_overflow,
    idle_timeout: 60,
    max_lifetime: s.db_pool_recycle < 0 ? null : s.db_pool_recycle,
    connect_timeout: s.db_pool_timeout,
    backoff: pgReconnectDelay,
    onnotice: () => undefined,
    prepare: true,
  });
  const orm = drizzlePg({ client, logger: s.dbdebug ? drizzleLogger(options.log) : false }) as unknown as Orm;
  const pgOrm = orm as unknown as { transaction<T>(fn: (tx: unknown) => Promise<T>): Promise<T> };
  const name = (() => {
    try {
      return new URL(options.url).pathname.slice(1) || 'postgres';
    } catch {
      return 'postgres';
    }
  })();
  return {
    dialect: 'pg',
    url: options.url,
    name,
    orm,
    native: client,
    async exec(statement) {
      await client.unsafe(statement);
    },
    async all<T>(query: SQL) {
      const result = await (orm as unknown as { execute(q: SQL): Promise<T[]> }).execute(query);
      return [...result];
    },
    transaction<T>(fn: (tx: Orm) => Promise<T>) {
      return pgOrm.transaction((tx) => fn(tx as Orm));
    },
    async ping(timeoutMs) {
      let timer: NodeJS.Timeout | undefined;
      try {
        const timeout = new Promise<false>((resolve) => {
          timer = setTimeout(() => resolve(false), timeoutMs);
        });
        const query = client`SELECT 1`.then(() => true as const);
        query.catch(() => undefined);
        return await Promise.race([query, timeout]);
      } catch {
        return false;
      } finally {
        clearTimeout(timer);
      }
    },
    async close() {
      await client.end({ timeout: 5 });
    },
  };
}

/** Opens a database by URL: `file:` (SQLite) or `postgres://` / `postgresql://`. */
export function openDatabase(options: OpenDatabaseOptions): Database {
  return dialectOf(options.url) === 'pg' ? openPostgres(options) : openSqlite(options);
}

export { sql };
