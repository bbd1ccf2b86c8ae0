import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type { Database as BetterSqlite3 } from 'better-sqlite3';
import { getTableColumns, type Column, type SQL, type Table } from 'drizzle-orm';
import type { Database } from './database.js';
import { SQLITE_BUSY_TIMEOUT_MS } from './database.js';
import { compileSql, numberPlanned, SQLITE_LOWER, sqliteLower } from './sql.js';

/**
 * Reads of a file database that may take more than a few milliseconds (admin lists, searches, counts) run in a
 * worker thread with its own read-only connection (docs/performance.md "Large tables"). better-sqlite3 is
 * synchronous: on the server's connection a 300 ms scan stops the event loop, so every other request waits
 * behind it. A worker thread rather than an asynchronous driver: the statements stay the same SQLite
 * statements with the same driver, only the thread changes; WAL mode lets the worker's reader see every
 * committed write without taking the writer's lock. One worker per database: one long read at a time, queued
 * behind each other, never in front of the requests of other users.
 */

/** The worker's code, run with `eval` so that it works from the TypeScript sources as from dist. */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Driver = require(workerData.driver);
const db = new Driver(workerData.path, { readonly: true, fileMustExist: true });
db.pragma('busy_timeout = ' + workerData.busyMs);
// The searches' Unicode lower() (sql.ts SQLITE_LOWER), the same function as on the server's connection.
db.function(workerData.lower, { deterministic: true }, ${sqliteLower.toString()});
const statements = new Map();
parentPort.on('message', ({ id, sql, params }) => {
  try {
    let statement = statements.get(sql);
    if (!statement) {
      statement = db.prepare(sql);
      statement.raw(true);
      if (statements.size >= 200) statements.clear();
      statements.set(sql, statement);
    }
    parentPort.postMessage({ id, rows: statement.all(...params) });
  } catch (error) {
    parentPort.postMessage({ id, error: { message: String(error && error.message), code: error && error.code } });
  }
});
`;

/** A query as drizzle builds it: a query builder (`toSQL`) or an `sql` template compiled by the caller. */
export interface CompiledQuery {
  sql: string;
  params: unknown[];
}

export interface SqliteReader {
  /** The rows of a read-only statement, each an array of column values in select order. */
  all(query: CompiledQuery): Promise<unknown[][]>;
  /** Drops one holder; the worker stops with the last. */
  release(): Promise<void>;
}

interface Pending {
  resolve(rows: unknown[][]): void;
  reject(error: Error): void;
}

interface Shared {
  worker: Worker | undefined;
  holders: number;
  pending: Map<number, Pending>;
  next: number;
}

const shared = new WeakMap<Database, Shared>();

/** A statement parameter as better-sqlite3 binds it (drizzle already maps column values; this is a guard). */
function bindable(value: unknown): unknown {
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (value instanceof Date) return value.getTime();
  return value;
}

/**
 * The read worker of `db`, shared by every store of that database (counted: each holder releases it once).
 * Undefined on PostgreSQL (the driver is asynchronous already) and for an in-memory database (another
 * connection would see another database).
 */
export function acquireSqliteReader(db: Database): SqliteReader | undefined {
  if (db.dialect !== 'sqlite') return undefined;
  const native = db.native as BetterSqlite3;
  if (native.memory) return undefined;
  let state = shared.get(db);
  if (!state) {
    state = { worker: undefined, holders: 0, pending: new Map(), next: 0 };
    shared.set(db, state);
  }
  const s = state;
  s.holders++;
  let released = false;

  function fail(error: Error) {
    for (const p of s.pending.values()) p.reject(error);
    s.pending.clear();
    s.worker = undefined;
  }

  function worker(): Worker {
    if (s.worker) return s.worker;
    const w = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: {
        driver: createRequire(import.meta.url).resolve('better-sqlite3'),
        path: native.name,
        busyMs: SQLITE_BUSY_TIMEOUT_MS,
        lower: SQLITE_LOWER,
      },
    });
    w.on('message', (m: { id: number; rows?: unknown[][]; error?: { message: string; code?: string } }) => {
      const p = s.pending.get(m.id);
      if (!p) return;
      s.pending.delete(m.id);
      if (m.error) p.reject(Object.assign(new Error(m.error.message), { code: m.error.code }));
      else p.resolve(m.rows ?? []);
      if (s.pending.size === 0) w.unref();
    });
    w.on('error', (error) => fail(error));
    w.on('exit', (code) => {
      if (s.worker === w) fail(new Error(`SQLite read worker stopped (exit code ${code})`));
    });
    w.unref();
    s.worker = w;
    return w;
  }

  return {
    all(query) {
      // Logged here, in the request's context (its request id), since the worker's statements bypass drizzle.
      db.logStatement?.(query.sql, query.params);
      // The worker's connection maps -shm too: refused like the server's own while it would fault (SIGBUS).
      try {
        db.beforeOtherConnection?.(!s.worker);
      } catch (error) {
        return Promise.reject(error);
      }
      const w = worker();
      const id = s.next++;
      return new Promise((resolve, reject) => {
        s.pending.set(id, { resolve, reject });
        // Keep the process alive while a read is in flight, not while the worker idles.
        w.ref();
        w.postMessage({ id, sql: query.sql, params: query.params.map(bindable) });
      });
    },
    async release() {
      if (released) return;
      released = true;
      s.holders--;
      if (s.holders > 0 || !s.worker) return;
      const w = s.worker;
      s.worker = undefined;
      await w.terminate();
    },
  };
}

/** Maps raw column values (in the order of `fields`) as drizzle would. */
function mapRow<T>(fields: Record<string, Column>, raw: unknown[]): T {
  const row: Record<string, unknown> = {};
  Object.entries(fields).forEach(([key, column], i) => {
    const value = raw[i];
    row[key] = value === null || value === undefined ? null : column.mapFromDriverValue(value);
  });
  return row as T;
}

/**
 * The long reads of a store: on the read worker of a file database, on the connection otherwise. `rows` takes
 * a select of every column of `table` (`orm.select().from(table)…`); `number` a query of one number. On
 * PostgreSQL both are planned for their values on every run: drizzle sends its selects unnamed, and `number`
 * is {@link numberPlanned}.
 */
export function createLongReads(db: Database) {
  const reader = acquireSqliteReader(db);
  async function number(query: SQL): Promise<number> {
    if (!reader) return numberPlanned(db, query);
    const [row] = await reader.all(compileSql(db.dialect, query));
    return Number(row?.[0] ?? 0);
  }
  return {
    async rows<T>(table: Table, query: { toSQL(): CompiledQuery } & PromiseLike<T[]>): Promise<T[]> {
      if (!reader) return await query;
      const fields = getTableColumns(table) as Record<string, Column>;
      const raw = await reader.all(query.toSQL());
      return raw.map((r) => mapRow<T>(fields, r));
    },
    number,
    /**
     * `number` within a time budget of `ms`: undefined when PostgreSQL cancelled the query for it
     * (`Database.allWithin`). SQLite has no budget (better-sqlite3 cannot interrupt a statement): the query
     * runs to its end, on the read worker of a file database, so the event loop never waits for it.
     */
    async numberWithin(query: SQL, ms: number): Promise<number | undefined> {
      if (reader || !db.allWithin) return number(query);
      const rows = await db.allWithin<Record<string, unknown>>(query, ms);
      return rows && Number(Object.values(rows[0] ?? {})[0] ?? 0);
    },
    async release(): Promise<void> {
      await reader?.release();
    },
  };
}
export type LongReads = ReturnType<typeof createLongReads>;
