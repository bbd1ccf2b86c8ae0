import type BetterSqlite3 from 'better-sqlite3';
import { LRUCache } from 'lru-cache';

/** Distinct SQL texts kept compiled per file database. */
export const STATEMENT_CACHE_SIZE = 500;

type Statement = BetterSqlite3.Statement<unknown[], unknown>;

/**
 * A compiled statement as drizzle sees it. drizzle calls `raw()` before the reads it maps itself and
 * `all()` / `get()` / `run()` otherwise; `raw()` is a mode of the native statement, so a plain read switches
 * it back first (the same SQL text can come from a mapped and an unmapped query).
 */
class CachedStatement {
  constructor(readonly native: Statement) {}

  raw(): Statement {
    return this.native.raw(true);
  }
  all(...params: unknown[]): unknown[] {
    if (this.native.reader) this.native.raw(false);
    return this.native.all(...params);
  }
  get(...params: unknown[]): unknown {
    if (this.native.reader) this.native.raw(false);
    return this.native.get(...params);
  }
  run(...params: unknown[]): BetterSqlite3.RunResult {
    return this.native.run(...params);
  }
}

/**
 * The better-sqlite3 client handed to drizzle, with `prepare` answered from a cache of compiled statements
 * keyed by SQL text (issue 9). drizzle compiles the SQL of every query it runs that was not `.prepare()`d,
 * which SQLite parses and plans each time: a project's handler building the same query on every request paid
 * that compile on every request. A statement still being iterated is never shared (a fresh one is compiled).
 * Everything else (`transaction`, `pragma`, `exec`, ...) is the client's own.
 */
export function withStatementCache(
  client: BetterSqlite3.Database,
  size = STATEMENT_CACHE_SIZE,
): BetterSqlite3.Database {
  const statements = new LRUCache<string, CachedStatement>({ max: size });
  const cached = Object.create(client) as { prepare(sql: string): CachedStatement };
  cached.prepare = (sql: string) => {
    const hit = statements.get(sql);
    if (hit && !hit.native.busy) return hit;
    const statement = new CachedStatement(client.prepare(sql));
    if (!hit) statements.set(sql, statement);
    return statement;
  };
  // drizzle uses only the part of the statement API that CachedStatement has.
  return cached as unknown as BetterSqlite3.Database;
}
