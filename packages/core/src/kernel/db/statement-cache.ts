import type BetterSqlite3 from 'better-sqlite3';
import { LRUCache } from 'lru-cache';

/** Distinct SQL texts kept compiled per file database. */
export const STATEMENT_CACHE_SIZE = 500;

type Statement = BetterSqlite3.Statement<unknown[], unknown>;

/** What the database does around every statement drizzle runs. */
export interface StatementHooks {
  /** Called before the statement runs; throws to refuse it (storage that would crash the process). */
  before(): void;
  /** Called with the error of a statement that failed, before it is rethrown. */
  failed(error: unknown): void;
}

const NO_HOOKS: StatementHooks = { before: () => undefined, failed: () => undefined };

/** The rows of a statement in raw mode (drizzle maps them itself). */
class RawStatement {
  constructor(
    private readonly native: Statement,
    private readonly hooks: StatementHooks,
  ) {}

  all(...params: unknown[]): unknown[] {
    this.hooks.before();
    try {
      return this.native.raw(true).all(...params);
    } catch (error) {
      this.hooks.failed(error);
      throw error;
    }
  }
  get(...params: unknown[]): unknown {
    this.hooks.before();
    try {
      return this.native.raw(true).get(...params);
    } catch (error) {
      this.hooks.failed(error);
      throw error;
    }
  }
}

/**
 * A compiled statement as drizzle sees it. drizzle calls `raw()` before the reads it maps itself and
 * `all()` / `get()` / `run()` otherwise; `raw()` is a mode of the native statement, so a plain read switches
 * it back first (the same SQL text can come from a mapped and an unmapped query).
 */
class CachedStatement {
  private readonly rawStatement: RawStatement;

  constructor(
    readonly native: Statement,
    private readonly hooks: StatementHooks,
  ) {
    this.rawStatement = new RawStatement(native, hooks);
  }

  raw(): RawStatement {
    return this.rawStatement;
  }
  all(...params: unknown[]): unknown[] {
    this.hooks.before();
    try {
      if (this.native.reader) this.native.raw(false);
      return this.native.all(...params);
    } catch (error) {
      this.hooks.failed(error);
      throw error;
    }
  }
  get(...params: unknown[]): unknown {
    this.hooks.before();
    try {
      if (this.native.reader) this.native.raw(false);
      return this.native.get(...params);
    } catch (error) {
      this.hooks.failed(error);
      throw error;
    }
  }
  run(...params: unknown[]): BetterSqlite3.RunResult {
    this.hooks.before();
    try {
      return this.native.run(...params);
    } catch (error) {
      this.hooks.failed(error);
      throw error;
    }
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
  hooks: StatementHooks = NO_HOOKS,
): BetterSqlite3.Database {
  const statements = new LRUCache<string, CachedStatement>({ max: size });
  const cached = Object.create(client) as { prepare(sql: string): CachedStatement };
  cached.prepare = (sql: string) => {
    const hit = statements.get(sql);
    if (hit && !hit.native.busy) return hit;
    hooks.before();
    let native: Statement;
    try {
      native = client.prepare(sql);
    } catch (error) {
      hooks.failed(error);
      throw error;
    }
    const statement = new CachedStatement(native, hooks);
    if (!hit) statements.set(sql, statement);
    return statement;
  };
  // drizzle uses only the part of the statement API that CachedStatement has.
  return cached as unknown as BetterSqlite3.Database;
}
