import { accessSync, constants as fsConstants, mkdirSync } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import { dirname, isAbsolute, resolve } from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import { sql, type SQL } from 'drizzle-orm';
import type { BetterSQLite3Database } from 'drizzle-orm/better-sqlite3';
import { drizzle as drizzlePg } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import { ConfigError } from '../config/load.js';
import type { Settings } from '../config/schema.js';
import { databaseFaultOf, NO_ANSWER_CODE, SHM_UNWRITABLE_CODE } from '../errors/format.js';
import type { Logger } from '../log/logger.js';
import { sameShape, type Dialect } from './define-table.js';
import { compiledWith, compileSql, SQLITE_LOWER, sqliteLower } from './sql.js';
import { guarded, withStatementCache, type StatementHooks } from './statement-cache.js';

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
   * Rows of a raw query built once and kept by its caller, with placeholders (`sql.placeholder`,
   * `placeholderFor`) filled from `values`: compiled once per query object (sql.ts `compiledWith`), prepared
   * by the database once per connection. Rows as {@link Database.all} gives them (stored column names).
   */
  allPrepared<T = Record<string, unknown>>(query: SQL, values: Record<string, unknown>): Promise<T[]>;
  /**
   * PostgreSQL only: the rows of a read-only query run under a statement timeout of `ms` (its own
   * transaction, `SET LOCAL statement_timeout`), or undefined when the server cancelled it for that timeout
   * (57014 query_canceled), which is then no fault of the database ({@link Database.ping}). Any other error
   * is thrown. Absent on SQLite: better-sqlite3 cannot interrupt a statement.
   */
  allWithin?<T = Record<string, unknown>>(query: SQL, ms: number): Promise<T[] | undefined>;
  /**
   * Rows of a raw read as {@link Database.all} gives them, planned for these very values on every run: on
   * PostgreSQL an unnamed statement, where `all` keeps its statements prepared. For the reads whose best plan
   * depends on the values (a search that matches half of a million users, or three of them, and its count): a
   * statement kept prepared is planned for its values five times and may then keep a generic plan, planned
   * without them (docs/performance.md "A count's generic plan": the count of a search for `@example.org` went
   * from 25 ms to 134 ms on its sixth run). SQLite plans every statement per run: `all`.
   */
  allPlanned<T = Record<string, unknown>>(query: SQL): Promise<T[]>;
  /**
   * Runs `fn` in a transaction. On SQLite transactions are serialised in-process and `fn` must only await
   * queries of `tx` (no hashing or network inside), so nothing else interleaves.
   */
  transaction<T>(fn: (tx: Orm) => Promise<T>): Promise<T>;
  /**
   * `SELECT 1` within `timeoutMs`, with no fault of the database itself lately: false when the database does
   * not answer, when a statement ran out of time or storage failed in the last {@link FAULT_MEMORY_MS}, and
   * while a file database's files refuse writes.
   */
  ping(timeoutMs: number): Promise<boolean>;
  close(): Promise<void>;
  /** The native client (better-sqlite3 Database or postgres Sql) for dialect-specific work. */
  readonly native: unknown;
  /**
   * File databases: throws (`db.unavailable`) before a statement on another connection of this database (the
   * read worker's) while its `-shm` refuses writes, and before such a connection is `opening`, when either file
   * does (SIGBUS otherwise: {@link assertSqliteFilesWritable}).
   */
  readonly beforeOtherConnection?: (opening: boolean) => void;
  /**
   * Logs a statement that runs outside drizzle (the read worker of a file database) as `dbdebug` logs every
   * other one; absent when `dbdebug` is off.
   */
  readonly logStatement?: (text: string, params: unknown[]) => void;
}

export interface OpenDatabaseOptions {
  url: string;
  settings: Settings;
  log: Logger;
  /** Directory relative file URLs resolve against. @default process.cwd() */
  baseDir?: string;
  /**
   * The server's connections: every statement bounded by `db_statement_timeout_seconds`, and the files of a
   * file database watched for writes the file system refuses. Maintenance commands (migrations,
   * `svc audit purge`) leave it off: a migration or a purge of a large table may run longer.
   * @default false
   */
  server?: boolean;
}

/**
 * How long a fault of the database itself (a statement past its bound, storage that refuses work) keeps
 * {@link Database.ping} false, ms. A `SELECT 1` answers while the user table is locked or the `-wal` file
 * refuses writes; for that long after requests failed so, the readiness probe says not ready.
 */
export const FAULT_MEMORY_MS = 10_000;

/** Remembers when a statement last failed for a fault of the database itself. */
function createFaultMemory() {
  let lastAt = Number.NEGATIVE_INFINITY;
  return {
    note(error: unknown): void {
      if (databaseFaultOf(error) !== undefined) lastAt = performance.now();
    },
    recent: () => performance.now() - lastAt < FAULT_MEMORY_MS,
  };
}

/** Code of the error opening a file database gets when better-sqlite3 is not installed. */
export const SQLITE_DRIVER_MISSING_CODE = 'DB_SQLITE_DRIVER_MISSING';

/** Whether `error` says that `name` itself (not something it imports) cannot be found. */
function isMissingPackage(error: unknown, name: string): boolean {
  const { code, message } = (error ?? {}) as { code?: string; message?: string };
  return (
    (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') &&
    new RegExp(`['"]${name}['"]`).test(message ?? '')
  );
}

/**
 * The file-database driver: better-sqlite3 (a native module compiled at install when no prebuilt binary fits)
 * and drizzle's adapter for it. It is an optional peer of @svc/core that a project installs beside it, so that
 * a PostgreSQL-only project compiles nothing native; a file database then fails to open with
 * {@link SQLITE_DRIVER_MISSING_CODE} (docs/deployment.md "A PostgreSQL-only install").
 */
const sqliteDriver = await import('better-sqlite3').then(
  async (driver) => ({
    Client: driver.default,
    drizzle: (await import('drizzle-orm/better-sqlite3')).drizzle,
  }),
  (error: unknown) => {
    if (isMissingPackage(error, 'better-sqlite3')) return undefined;
    throw error;
  },
);

function sqliteDriverMissing(url: string): ConfigError {
  return Object.assign(
    new ConfigError(
      `the file database ${redactUrl(url)} needs the package better-sqlite3, which is not installed (@svc/core leaves the file-database driver to the project): run \`npm install better-sqlite3\`, or use a postgres:// database URL (${SQLITE_DRIVER_MISSING_CODE})`,
    ),
    { code: SQLITE_DRIVER_MISSING_CODE },
  );
}

/**
 * Refuses a file database URL while better-sqlite3 is not installed, with the error opening it would give, and
 * opens nothing: `svc init` checks its URL before it writes a file (docs/deployment.md "A PostgreSQL-only install").
 */
export function assertDatabaseDriver(url: string): void {
  if (dialectOf(url) === 'sqlite' && !sqliteDriver) throw sqliteDriverMissing(url);
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

/**
 * Ceiling of SQLite's `busy_timeout`, ms: how long a writer waits for another connection's write lock.
 * better-sqlite3 waits synchronously, and the whole process with it, so the server's bound
 * (`db_statement_timeout_seconds`) only lowers it. A statement itself runs on a local file and cannot be
 * interrupted; its length is the query's, not the database's.
 */
export const SQLITE_BUSY_TIMEOUT_MS = 5_000;

/** How often the server checks that the files of a file database still take writes, ms. */
export const SQLITE_STORAGE_CHECK_MS = 1_000;

/** Size of one region of SQLite's wal-index (`-shm`), which every connection maps into memory. */
const SHM_REGION_BYTES = 32_768;

/** A file of the database that refuses writes to its open descriptors, and why. */
interface StorageProblem {
  file: string;
  reason: string;
  /** The `-shm` file: SQLite stores into its mapping even to read, so every statement would be fatal. */
  shm: boolean;
}

/**
 * Watches the files of a WAL-mode database. SQLite maps `<db>-shm` into the memory of every process that uses
 * the database and stores into that mapping on every read and write; a store the kernel refuses (the file made
 * immutable, its file system remounted read-only, the file truncated under the mapping) is SIGBUS, which ends
 * the process before any JavaScript can run or log. The only defence in the process is not to call SQLite while
 * the mapping would fault: this check runs every {@link SQLITE_STORAGE_CHECK_MS}, and statements are refused
 * (503 `db.unavailable`) while it sees such a fault; a statement in the interval before it looks still crashes.
 * `EPERM` (immutable or append-only attribute) and `EROFS` refuse writes to files already open; `EACCES`
 * (permission bits) only refuses new opens, so it is logged and nothing else.
 */
function watchSqliteStorage(path: string, log: Logger) {
  let problem: StorageProblem | undefined;
  let shmMapped = 0;
  const warned = new Set<string>();
  /** Why `file` refuses writes to open descriptors (EPERM, EROFS); other refusals are logged once. */
  const refusal = async (file: string): Promise<string | undefined> => {
    try {
      await access(file, fsConstants.W_OK);
      warned.delete(file);
      return undefined;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? String(error);
      if (code === 'EPERM' || code === 'EROFS') return code;
      if (code !== 'ENOENT' && !warned.has(file)) {
        warned.add(file);
        log.warn(`file database ${file} is not writable (${code}): other processes cannot open it`);
      }
      return undefined;
    }
  };
  const find = async (): Promise<StorageProblem | undefined> => {
    for (const file of [`${path}-shm`, `${path}-wal`]) {
      const reason = await refusal(file);
      if (reason) return { file, reason, shm: file === `${path}-shm` };
    }
    // The main file only takes checkpoints: requests go on, the -wal file grows until it takes them again.
    const main = await refusal(path);
    if (main && !warned.has(path)) {
      warned.add(path);
      log.error(
        `file database ${path} refuses writes (${main}): checkpoints fail and ${path}-wal keeps growing`,
      );
    }
    // While this connection has the wal-index mapped SQLite never shrinks it: shorter means cut under us.
    let size = -1;
    try {
      size = (await stat(`${path}-shm`)).size;
    } catch {
      // absent: nothing is mapped yet
    }
    if (size >= SHM_REGION_BYTES) shmMapped = Math.max(shmMapped, size);
    else if (shmMapped > 0 && size >= 0) {
      return { file: `${path}-shm`, reason: `truncated to ${size} bytes`, shm: true };
    }
    return undefined;
  };
  // The file system calls run off the event loop (fs promises); one check at a time.
  let checking = false;
  const check = async () => {
    if (checking) return;
    checking = true;
    const found = await find().finally(() => (checking = false));
    if (found && (found.file !== problem?.file || found.reason !== problem.reason)) {
      log.error(
        `file database ${found.file} refuses writes (${found.reason}): answering 503 db.unavailable to ${
          found.shm ? 'every statement (SQLite would crash the process with SIGBUS)' : 'writes'
        } until it takes them again`,
      );
    } else if (!found && problem) {
      log.warn(`file database ${problem.file} takes writes again`);
    }
    problem = found;
  };
  const timer = setInterval(() => void check(), SQLITE_STORAGE_CHECK_MS);
  timer.unref();
  return {
    get problem() {
      return problem;
    },
    stop: () => clearInterval(timer),
  };
}

/**
 * Refuses to open a connection to a file database whose `-shm` or `-wal` file refuses writes to open files
 * (`EPERM`: immutable or append-only; `EROFS`: a read-only mount). Left behind by a process that was killed,
 * they are used by the next connection as they are: SQLite maps `-shm` and its first store into a page the kernel
 * refuses is SIGBUS, which ends the process without a log line. So the start (and every other opening: a `svc`
 * command, the read worker's connection) stops first with an error that names the file and the fix.
 */
export function assertSqliteFilesWritable(path: string): void {
  for (const file of [`${path}-shm`, `${path}-wal`]) {
    let code: string | undefined;
    try {
      accessSync(file, fsConstants.W_OK);
    } catch (error) {
      code = (error as NodeJS.ErrnoException).code;
    }
    if (code === 'EPERM' || code === 'EROFS') {
      throw Object.assign(
        new Error(
          `file database ${file} refuses writes (${code}): ${
            file.endsWith('-shm') ? 'SQLite would crash the process with SIGBUS' : 'every write would fail'
          }, so the database is not opened; make the file writable (chattr -i, a read-write mount) and start again`,
        ),
        { code: SHM_UNWRITABLE_CODE },
      );
    }
  }
}

/** SPEC "Startup rules" 4 and docs/performance.md "SQLite settings": WAL, explicit synchronous, busy_timeout, foreign keys on. */
function openSqlite(options: OpenDatabaseOptions): Database {
  if (!sqliteDriver) throw sqliteDriverMissing(options.url);
  const path = sqlitePath(options.url, options.baseDir);
  if (path !== ':memory:') {
    mkdirSync(dirname(path), { recursive: true });
    assertSqliteFilesWritable(path);
  }
  const client: BetterSqlite3.Database = new sqliteDriver.Client(path);
  client.pragma('journal_mode = WAL');
  client.pragma(`synchronous = ${options.settings.sqlite_synchronous}`);
  const busyMs = options.server
    ? Math.min(SQLITE_BUSY_TIMEOUT_MS, options.settings.db_statement_timeout_seconds * 1000)
    : SQLITE_BUSY_TIMEOUT_MS;
  client.pragma(`busy_timeout = ${busyMs}`);
  client.pragma('foreign_keys = ON');
  client.function(SQLITE_LOWER, { deterministic: true }, sqliteLower);
  const faults = createFaultMemory();
  const storage = options.server && path !== ':memory:' ? watchSqliteStorage(path, options.log) : undefined;
  const refuseWhileShmFaults = () => {
    const problem = storage?.problem;
    if (problem?.shm) {
      throw Object.assign(new Error(`${problem.file} refuses writes (${problem.reason})`), {
        code: SHM_UNWRITABLE_CODE,
      });
    }
  };
  const hooks: StatementHooks = {
    before: refuseWhileShmFaults,
    failed: faults.note,
  };
  /** A statement outside drizzle (transaction control, DDL) under the same hooks. */
  const exec = (statement: string) => guarded(hooks, () => client.exec(statement));
  const cachedClient = withStatementCache(client, undefined, hooks);
  const logSqlite = options.settings.dbdebug ? drizzleLogger(options.log).logQuery : undefined;
  const orm: Orm = sqliteDriver.drizzle({
    client: cachedClient,
    logger: options.settings.dbdebug ? drizzleLogger(options.log) : false,
  });
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
    beforeOtherConnection(opening) {
      refuseWhileShmFaults();
      if (opening && path !== ':memory:') assertSqliteFilesWritable(path);
    },
    ...(logSqlite ? { logStatement: logSqlite } : {}),
    async exec(statement) {
      exec(statement);
    },
    async all<T>(query: SQL) {
      return orm.all(query) as T[];
    },
    async allPlanned<T>(query: SQL) {
      return orm.all(query) as T[];
    },
    async allPrepared<T>(query: SQL, values: Record<string, unknown>) {
      const { sql: text, params } = compiledWith('sqlite', query, values);
      logSqlite?.(text, params);
      return cachedClient.prepare(text).all(...params) as T[];
    },
    transaction<T>(fn: (tx: Orm) => Promise<T>) {
      return mutex.run(async () => {
        exec('BEGIN IMMEDIATE');
        try {
          const result = await fn(orm);
          exec('COMMIT');
          return result;
        } catch (error) {
          if (client.inTransaction) client.exec('ROLLBACK');
          throw error;
        }
      });
    },
    async ping() {
      if (storage?.problem || faults.recent()) return false;
      try {
        // Evaluated without reading the file: safe even when the wal-index mapping would fault.
        client.prepare('SELECT 1').get();
        return true;
      } catch {
        return false;
      }
    },
    async close() {
      storage?.stop();
      if (client.open) client.close();
    },
  };
}

/**
 * Ceiling of the pause before a pooled PostgreSQL connection is re-opened after a failure, seconds.
 * postgres-js counts failures across the whole pool and waits `3^failures / 100` s (up to 20 s) before the
 * next attempt; queries wait that long, so with the database down a burst of requests hung 10 to 20 s
 * before their 503 and the first requests after a restart waited as long (docs/deployment.md "A database that does not answer"). Capped, a
 * request fails or recovers within about a second, while a down server still sees at most one attempt per
 * connection and second.
 */
export const PG_RECONNECT_MAX_DELAY_SECONDS = 1;

/** postgres-js `backoff`: its own growth, jittered, capped at {@link PG_RECONNECT_MAX_DELAY_SECONDS}. */
export function pgReconnectDelay(failures: number): number {
  return (0.5 + Math.random() / 2) * Math.min(3 ** failures / 100, PG_RECONNECT_MAX_DELAY_SECONDS);
}

/**
 * Time the client gives a PostgreSQL statement past the server's `statement_timeout` before it stops waiting,
 * ms. The server answers a statement over its bound itself (57014 query_canceled); no answer by then means a
 * network path that swallows packets, a server that accepts connections and never answers, or a statement
 * still queued for a connection behind blocked ones.
 */
export const PG_NO_ANSWER_MARGIN_MS = 1_000;

type PgSql = ReturnType<typeof postgres>;

/** SQLSTATE of a statement the server cancelled: `statement_timeout` or a cancel request. */
const QUERY_CANCELED = '57014';
const isQueryCanceled = (error: unknown) => (error as { code?: unknown } | null)?.code === QUERY_CANCELED;

/** The parts of a postgres-js query the client-side bound uses. */
interface PgQuery extends Promise<unknown> {
  /** Set when the query is handed to a connection; null while it waits for one. */
  state: unknown;
  cancel(): unknown;
  reject(error: unknown): void;
}

function noAnswerError(ms: number): Error {
  return Object.assign(new Error(`the database did not answer within ${ms} ms`), { code: NO_ANSWER_CODE });
}

/** Drops a query that still waits for a connection (postgres-js rejects it at once); a sent one is left be. */
function dropIfWaiting(query: PgQuery): void {
  if (query.state === null) void Promise.resolve(query.cancel()).catch(() => undefined);
}

/**
 * The postgres-js client drizzle uses, with a client-side bound on every statement: without an answer within
 * `boundMs` the statement fails with {@link NO_ANSWER_CODE} (503 `db.unavailable`). A statement still waiting
 * for a connection leaves the queue; one already sent is left to the server's `statement_timeout`, because a
 * cancel request over a path that swallows packets may arrive late and stop another statement of that
 * connection. The connection of an unanswered statement stays busy until its answer or its socket's end.
 * A transaction is given up when BEGIN is not answered within `boundMs`, or {@link PG_NO_ANSWER_MARGIN_MS}
 * after one of its statements went unanswered (its ROLLBACK would wait as long); if it starts later it rolls
 * back at once, so no work of an answered request is done behind its back.
 */
function boundStatements(
  sql: PgSql,
  boundMs: number,
  noteFault: (error: unknown) => void,
  onNoAnswer?: (error: Error) => void,
): PgSql {
  const watch = (query: PgQuery): PgQuery => {
    const timer = setTimeout(() => {
      const error = noAnswerError(boundMs);
      query.reject(error);
      dropIfWaiting(query);
      onNoAnswer?.(error);
    }, boundMs);
    query.then(
      () => clearTimeout(timer),
      (error: unknown) => {
        clearTimeout(timer);
        noteFault(error);
      },
    );
    return query;
  };

  const begin = (args: unknown[]) => {
    const fn = args.pop() as (tx: PgSql) => unknown;
    let gaveUp: Error | undefined;
    let giveUp!: (error: Error) => void;
    const abandoned = new Promise<never>((_, reject) => {
      giveUp = (error) => {
        gaveUp ??= error;
        noteFault(error);
        reject(error);
      };
    });
    abandoned.catch(() => undefined);
    let timer = setTimeout(() => giveUp(noAnswerError(boundMs)), boundMs);
    const run = (sql.begin as (...a: unknown[]) => Promise<unknown>)(...args, (tx: PgSql) => {
      clearTimeout(timer);
      if (gaveUp) throw gaveUp; // the request has had its answer: roll back
      return fn(
        boundStatements(tx, boundMs, noteFault, (error) => {
          clearTimeout(timer);
          timer = setTimeout(() => giveUp(error), PG_NO_ANSWER_MARGIN_MS);
        }),
      );
    });
    run.catch(() => undefined);
    return Promise.race([run, abandoned]).finally(() => clearTimeout(timer));
  };

  return new Proxy(sql, {
    get(target, property, receiver) {
      if (property === 'unsafe') {
        return (...args: unknown[]) =>
          watch((target.unsafe as (...a: unknown[]) => unknown)(...args) as PgQuery);
      }
      if (property === 'begin') return (...args: unknown[]) => begin(args);
      if (property === 'savepoint') {
        // Inside a transaction: its statements report to the transaction's bound.
        return (...args: unknown[]) => {
          const fn = args.pop() as (tx: PgSql) => unknown;
          // Only a transaction's client has `savepoint`, which postgres-js types apart from the pool's.
          const savepoint: (...a: unknown[]) => Promise<unknown> = Reflect.get(target, property, receiver);
          return savepoint(...args, (tx: PgSql) => fn(boundStatements(tx, boundMs, noteFault, onNoAnswer)));
        };
      }
      return Reflect.get(target, property, receiver);
    },
  });
}

function openPostgres(options: OpenDatabaseOptions): Database {
  const s = options.settings;
  const statementTimeoutMs = s.db_statement_timeout_seconds * 1000;
  const client = postgres(options.url, {
    max: s.db_pool_size + s.db_max_overflow,
    idle_timeout: 60,
    max_lifetime: s.db_pool_recycle < 0 ? null : s.db_pool_recycle,
    connect_timeout: s.db_pool_timeout,
    backoff: pgReconnectDelay,
    onnotice: () => undefined,
    prepare: true,
    // The server stops a statement past the bound itself (lock waits included) and answers 57014; the
    // connection stays usable and goes back to the pool. And each statement runs in one PostgreSQL process:
    // a parallel plan (by default two workers beside the leader, for a scan of a large table) let one
    // console list or count take every core of a small database host from the users' requests for as
    // long as it ran (docs/performance.md "One process a statement": the activity log's combined filter cost
    // 300 ms of CPU in 165 ms, 172 ms without workers in as long; its count is bounded by time anyway).
    // (A string: postgres-js leaves a falsy value out of the start-up message.)
    ...(options.server
      ? { connection: { statement_timeout: statementTimeoutMs, max_parallel_workers_per_gather: '0' } }
      : {}),
  });
  const faults = createFaultMemory();
  const bound = options.server
    ? boundStatements(client, statementTimeoutMs + PG_NO_ANSWER_MARGIN_MS, faults.note)
    : client;
  /**
   * A connection of its own for `allWithin`, its statements under the same client-side bound as the others',
   * waited for no longer than a statement waits for one. A statement cancelled for the short timeout it asked
   * for is an answer there, not a fault of the database (the readiness probe stays ready).
   */
  async function reserveBounded(): Promise<{ sql: PgSql; release(): void }> {
    const reserving = client.reserve();
    if (!options.server) {
      const reserved = await reserving;
      return { sql: reserved, release: () => reserved.release() };
    }
    const boundMs = statementTimeoutMs + PG_NO_ANSWER_MARGIN_MS;
    let timer: NodeJS.Timeout | undefined;
    const gaveUp = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(noAnswerError(boundMs)), boundMs);
    });
    try {
      const reserved = await Promise.race([reserving, gaveUp]);
      const noteUnlessCancelled = (error: unknown) => {
        if (!isQueryCanceled(error)) faults.note(error);
      };
      return {
        sql: boundStatements(reserved, boundMs, noteUnlessCancelled),
        release: () => reserved.release(),
      };
    } catch (error) {
      // A connection that comes after all goes back to the pool unused.
      reserving.then(
        (late) => late.release(),
        () => undefined,
      );
      faults.note(error);
      throw error;
    } finally {
      clearTimeout(timer);
    }
  }
  const pgOrm = drizzlePg({
    client: bound,
    logger: s.dbdebug ? drizzleLogger(options.log) : false,
  });
  // Typed as the SQLite builder, as every table is (define-table.ts `sameShape` says why).
  const orm = sameShape<Orm>(pgOrm);
  const logStatement = s.dbdebug ? drizzleLogger(options.log).logQuery : undefined;
  const name = (() => {
    try {
      return new URL(options.url).pathname.slice(1) || 'postgres';
    } catch {
      return 'postgres';
    }
  })();
  /**
   * A compiled statement, `prepare`d or unnamed. Prepared (docs/performance.md "PostgreSQL round trips"):
   * postgres-js keeps it per connection by its text, so PostgreSQL parses and plans the hand-written statements
   * of hot paths (the completed login, the refresh rotation: values are parameters, the text never changes)
   * once per connection instead of on every call, where drizzle's `execute` sends them unnamed. Unnamed: planned
   * for its values on every run (`allPlanned`).
   */
  async function run<T>(
    { sql: text, params }: { sql: string; params: unknown[] },
    prepare: boolean,
  ): Promise<T[]> {
    logStatement?.(text, params);
    const unsafe = bound.unsafe as (text: string, params: unknown[], options: object) => Promise<T[]>;
    return [...(await unsafe(text, params, { prepare }))];
  }
  return {
    dialect: 'pg',
    url: options.url,
    name,
    orm,
    native: client,
    async exec(statement) {
      await client.unsafe(statement);
    },
    all<T>(query: SQL) {
      return run<T>(compileSql('pg', query), true);
    },
    allPrepared<T>(query: SQL, values: Record<string, unknown>) {
      return run<T>(compiledWith('pg', query, values), true);
    },
    allPlanned<T>(query: SQL) {
      return run<T>(compileSql('pg', query), false);
    },
    async allWithin<T>(query: SQL, ms: number) {
      const { sql: text, params } = compileSql('pg', query);
      logStatement?.(text, params);
      // Its own transaction, so that the timeout ends with it (SET LOCAL) whatever becomes of the query. The
      // three messages go out at once on one connection (pipelined): one round trip, as the query alone.
      // After a cancelled query the COMMIT rolls back. statement_timeout 0 would mean none: at least 1 ms.
      const timeout = `set local statement_timeout = ${Math.max(1, Math.ceil(ms))}`;
      const reserved = await reserveBounded();
      try {
        const [begun, answer, ended] = await Promise.allSettled([
          reserved.sql.unsafe(`begin; ${timeout}`),
          // Unnamed, as `allPlanned`: planned for its values on every run.
          reserved.sql.unsafe<T[]>(text, params as postgres.ParameterOrJSON<never>[], { prepare: false }),
          reserved.sql.unsafe('commit'),
        ]);
        if (begun.status === 'rejected') throw begun.reason;
        if (answer.status === 'rejected') {
          if (isQueryCanceled(answer.reason)) return undefined;
          throw answer.reason;
        }
        if (ended.status === 'rejected') throw ended.reason;
        return [...answer.value] as T[];
      } finally {
        // Every statement of the transaction is sent (COMMIT included): whatever the pool sends on this
        // connection next comes after it.
        reserved.release();
      }
    },
    transaction<T>(fn: (tx: Orm) => Promise<T>) {
      return pgOrm.transaction((tx) => fn(sameShape<Orm>(tx)));
    },
    async ping(timeoutMs) {
      if (faults.recent()) return false;
      let timer: NodeJS.Timeout | undefined;
      try {
        const probe: unknown = client`SELECT 1`; // a postgres-js query: its `state` is not in its type
        const query = probe as PgQuery;
        const answered = query.then(
          () => true as const,
          () => false as const,
        );
        const timeout = new Promise<false>((resolve) => {
          timer = setTimeout(() => {
            dropIfWaiting(query); // a probe nobody waits for any more does not run later
            resolve(false);
          }, timeoutMs);
        });
        return await Promise.race([answered, timeout]);
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
