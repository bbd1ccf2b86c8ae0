import type { Database } from './database.js';
import type { Logger } from '../log/logger.js';

/** The parts of a postgres-js client used here. */
interface PgClient {
  reserve(): Promise<PgConnection>;
}
interface PgConnection {
  unsafe(query: string, params?: unknown[]): Promise<Record<string, unknown>[]>;
  release(): void;
}

const quote = (name: string) => `"${name.replace(/"/g, '""')}"`;

/**
 * Builds the pg_trgm GIN indexes of a table's `search` (docs/performance.md "Large tables"): `indexes` maps an
 * index name to the expression it covers (the same expression the search compares, so the planner uses it).
 * Runs on one connection of the pool with no statement bound (a GIN index of a million rows takes longer
 * than a request may) and `CONCURRENTLY` (writes go on meanwhile); an index a stopped build left invalid is
 * dropped and built again. Without the extension (not installed, or the role may not create it) search keeps
 * scanning: a warning says so. The query is the same with or without the index: nothing waits for this.
 */
export async function buildTrigramIndexes(
  db: Database,
  table: string,
  indexes: Record<string, string>,
  log?: Logger,
): Promise<boolean> {
  const connection = await (db.native as PgClient).reserve();
  try {
    await connection.unsafe('SET statement_timeout = 0');
    const extension = async () =>
      (await connection.unsafe(`select 1 from pg_extension where extname = 'pg_trgm'`)).length > 0;
    if (!(await extension())) {
      try {
        await connection.unsafe('CREATE EXTENSION IF NOT EXISTS pg_trgm');
      } catch (error) {
        // Another instance creating it at the same moment, or no right to.
        if (!(await extension())) {
          log?.warn(`pg_trgm is not available: search on ${table} scans the table`, {
            error: String((error as Error).message),
          });
          return false;
        }
      }
    }
    for (const [name, expression] of Object.entries(indexes)) {
      const [state] = await connection.unsafe(
        `select i.indisvalid as valid from pg_class c join pg_index i on i.indexrelid = c.oid where c.relname = $1`,
        [name],
      );
      if (state?.valid) continue;
      if (state) await connection.unsafe(`DROP INDEX CONCURRENTLY IF EXISTS ${quote(name)}`);
      const started = Date.now();
      await connection.unsafe(
        `CREATE INDEX CONCURRENTLY IF NOT EXISTS ${quote(name)} ON ${quote(table)} USING gin (${expression} gin_trgm_ops)`,
      );
      log?.info(`built the text index ${name}`, { ms: Date.now() - started });
    }
    return true;
  } finally {
    await connection.unsafe('RESET statement_timeout').catch(() => undefined);
    connection.release();
  }
}
