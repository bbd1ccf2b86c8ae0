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

/** How a build runs: `CONCURRENTLY` in the background (production), or plainly at start-up. */
export interface TextIndexOptions {
  /**
   * Build with `CREATE INDEX CONCURRENTLY` (writes go on; waits for older transactions). False when the app
   * creates its own schema at start-up (`auto_create_auth_schema`: development and tests, small tables), where a
   * concurrent build would wait on another app's schema statements and deadlock with them.
   */
  concurrently: boolean;
}

/** One build at a time per database in this process: two concurrent builds of expression indexes wait on each other. */
const queues = new WeakMap<Database, Promise<unknown>>();
/** Backend pids of builds in progress, to cancel them on shutdown. */
const running = new WeakMap<Database, Set<number>>();
/** Advisory lock key serialising the builds of every process on one database (`svc:text-index`). */
const ADVISORY_KEY = 0x73766374;

/**
 * Cancels the builds in progress on `db` (graceful shutdown must not wait minutes for a GIN index of a big
 * table); a cancelled concurrent build leaves an invalid index that the next start drops and builds again.
 */
async function cancelTextIndexBuilds(db: Database): Promise<void> {
  const pids = [...(running.get(db) ?? [])];
  if (pids.length === 0 || db.dialect !== 'pg') return;
  const client = db.native as { unsafe(query: string, params?: unknown[]): Promise<unknown> };
  await Promise.all(
    pids.map((pid) => client.unsafe('select pg_cancel_backend($1)', [pid]).catch(() => undefined)),
  );
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
export function buildTrigramIndexes(
  db: Database,
  table: string,
  indexes: Record<string, string>,
  log?: Logger,
  options: TextIndexOptions = { concurrently: true },
  after?: TextIndexStep,
): Promise<boolean> {
  const previous = queues.get(db) ?? Promise.resolve();
  const build = previous.catch(() => undefined).then(() => buildNow(db, table, indexes, log, options, after));
  queues.set(db, build);
  return build;
}

/**
 * More of a table's text index, built after its GIN indexes on the same connection (pg_trgm present, the
 * advisory lock held, no statement bound): `run` sends one statement.
 */
export type TextIndexStep = (run: (query: string) => Promise<Record<string, unknown>[]>) => Promise<void>;

async function buildNow(
  db: Database,
  table: string,
  indexes: Record<string, string>,
  log: Logger | undefined,
  { concurrently }: TextIndexOptions,
  after?: TextIndexStep,
): Promise<boolean> {
  const connection = await (db.native as PgClient).reserve();
  const pids = running.get(db) ?? new Set<number>();
  running.set(db, pids);
  let pid = 0;
  const how = concurrently ? 'CONCURRENTLY ' : '';
  try {
    // In the try: a failure here must release the reserved connection too (each retry reserves another).
    [{ pid } = { pid: 0 }] = (await connection.unsafe('select pg_backend_pid() as pid')) as { pid: number }[];
    pids.add(pid);
    await connection.unsafe('SET statement_timeout = 0');
    // Other processes on this database (hosts starting together) build one at a time too.
    await connection.unsafe('select pg_advisory_lock($1)', [ADVISORY_KEY]);
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
    let built = false;
    for (const [name, expression] of Object.entries(indexes)) {
      const [state] = await connection.unsafe(
        `select i.indisvalid as valid from pg_class c join pg_index i on i.indexrelid = c.oid where c.relname = $1`,
        [name],
      );
      if (state?.valid) continue;
      if (state) await connection.unsafe(`DROP INDEX ${how}IF EXISTS ${quote(name)}`);
      const started = Date.now();
      await connection.unsafe(
        `CREATE INDEX ${how}IF NOT EXISTS ${quote(name)} ON ${quote(table)} USING gin (${expression} gin_trgm_ops)`,
      );
      log?.info(`built the text index ${name}`, { ms: Date.now() - started });
      built = true;
    }
    // Statistics on the indexed expressions: PostgreSQL gathers them only when the table is analyzed, and
    // autovacuum does not analyze it for a new index. Without them every `lower(col) like '%…%'` was
    // estimated at a handful of rows, and a search matching half of a large table read every match through the
    // index and sorted them instead of walking the order's index (docs/performance.md "The console's lists at
    // a million users"). A sample of the table: well under a second at a million rows.
    if (built) await connection.unsafe(`ANALYZE ${quote(table)}`);
    if (after) await after((query) => connection.unsafe(query));
    return true;
  } catch (error) {
    // 57014: cancelled by cancelTextIndexBuilds at shutdown; the next start builds it.
    if ((error as { code?: string }).code === '57014') return false;
    throw error;
  } finally {
    pids.delete(pid);
    await connection.unsafe('select pg_advisory_unlock_all()').catch(() => undefined);
    await connection.unsafe('RESET statement_timeout').catch(() => undefined);
    connection.release();
  }
}

/**
 * A table's text index as its store uses it: built once (and again after a failure), awaited by the first
 * search that needs it on SQLite; at start-up finished first unless it is a concurrent PostgreSQL build, which
 * goes on in the background (the same query scans meanwhile); cancelled at shutdown.
 */
export function textIndexOnce(
  db: Database,
  what: string,
  create: () => Promise<boolean>,
  options: TextIndexOptions,
  log?: Logger,
) {
  let building: Promise<boolean> | undefined;
  const ensure = (): Promise<boolean> => {
    building ??= create().catch((error: unknown) => {
      building = undefined;
      if (db.dialect === 'sqlite') throw error;
      log?.warn(`could not build the text index of ${what}: search scans`, {
        error: String((error as Error).message),
      });
      return false;
    });
    return building;
  };
  return {
    ensure,
    async start(): Promise<void> {
      const started = ensure();
      if (db.dialect === 'sqlite' || !options.concurrently) await started;
    },
    async stop(): Promise<void> {
      if (db.dialect === 'pg') await cancelTextIndexBuilds(db);
      await building?.catch(() => undefined);
    },
  };
}
