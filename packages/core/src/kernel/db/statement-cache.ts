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

/** Runs one call to SQLite under the hooks: refused before it starts, its failure reported, then rethrown. */
export function guarded<T>(hooks: StatementHooks, call: () => T): T {
  hooks.before();
  try {
    return call();
  } catch (error) {
    hooks.failed(error);
    throw error;
  }
}

/** The rows of a statement in raw mode (drizzle maps them itself). */
class RawStatement {
  constructor(
    private readonly native: Statement,
    private readonly hooks: StatementHooks,
  ) {}

  all(...params: unknown[]): unknown[] {
    return guarded(this.hooks, () => this.native.raw(true).all(...params));
  }
  get(...params: unknown[]): unknown {
    return guarded(this.hooks, () => this.native.raw(true).get(...params));
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
    return guarded(this.hooks, () => {
      if (this.native.reader) this.native.raw(false);
      return this.native.all(...params);
    });
  }
  get(...params: unknown[]): unknown {
    return guarded(this.hooks, () => {
      if (this.native.reader) this.native.raw(false);
      return this.native.get(...params);
    });
  }
  run(...params: unknown[]): BetterSqlite3.RunResult {
    return guarded(this.hooks, () => this.native.run(...params));
  }
}

/**
 * The better-sqlite3 client handed to drizzle, with `prepare` answered from a cache of compiled statements
 * keyed by SQL text (docs/performance.md). drizzle compiles the SQL of every query it runs that was not `.prepare()`d,
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
    const statement = new CachedStatement(
      guarded(hooks, () => client.prepare(sql)),
      hooks,
    );
    if (!hit) statements.set(sql, statement);
    return statement;
  };
  // drizzle uses only the part of the statement API that CachedStatement has; better-sqlite3's type asks for all
  // of it (iterate, bind, columns, ...), which a cache entry does not forward.
  return cached as unknown as BetterSqlite3.Database;
}
