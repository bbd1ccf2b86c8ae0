import type { Database, Settings } from '@svc/core';
import { assertDialect, readChain, resolveRevision } from './chain.js';
import { MigrationError } from './errors.js';
import type { Revision } from './revision-file.js';

/** How long a second migrating process waits for the first one's lock on SQLite. */
export const SQLITE_LOCK_TIMEOUT_MS = 60_000;

/** The version table: one row per target with its applied head (name follows `table_prefix`). */
export function versionTableName(settings: Pick<Settings, 'table_prefix'>): string {
  return `${settings.table_prefix}migrations_version`;
}

export interface RunOptions {
  db: Database;
  /** Folder of the target. */
  dir: string;
  /** Target name (the version table's key). */
  target: string;
  /** {@link versionTableName} of the settings. */
  versionTable: string;
}

export interface RunResult {
  from: string | null;
  to: string | null;
  /** Revisions applied (upgrade) or reverted (downgrade), in the order they ran. */
  steps: Revision[];
}

const quote = (name: string) => `"${name.replace(/"/g, '""')}"`;

function createVersionTableSql(dialect: Database['dialect'], table: string): string {
  return dialect === 'pg'
    ? `CREATE TABLE IF NOT EXISTS ${quote(table)} ("target" varchar(64) PRIMARY KEY NOT NULL, "revision" varchar(64) NOT NULL, "applied_at" timestamp with time zone NOT NULL)`
    : `CREATE TABLE IF NOT EXISTS ${quote(table)} ("target" text PRIMARY KEY NOT NULL, "revision" text NOT NULL, "applied_at" text NOT NULL)`;
}

/** What a locked session may do: raw SQL, read and write the target's row. */
interface Session {
  exec(chunk: string): Promise<void> | void;
  current(): Promise<string | null> | string | null;
  setCurrent(revision: string | null): Promise<void> | void;
}

type SqliteClient = {
  exec(sql: string): void;
  pragma(sql: string, options?: { simple?: boolean }): unknown;
  prepare(sql: string): { get(...p: unknown[]): unknown; run(...p: unknown[]): unknown };
  inTransaction: boolean;
};

type PgSql = {
  begin<T>(fn: (tx: PgTx) => Promise<T>): Promise<T>;
};
type PgTx = {
  unsafe(
    query: string,
    params?: unknown[],
  ): Promise<Record<string, unknown>[]> & { simple(): Promise<unknown> };
};

/**
 * Runs `plan` with the target locked. SQLite: one `BEGIN IMMEDIATE` transaction (a second process waits for
 * the write lock), foreign keys off while it runs (drizzle-kit rebuilds tables) and checked before commit.
 * PostgreSQL: one transaction holding an advisory lock on the version table and target, so two processes
 * apply each revision once; DDL is transactional there too.
 */
async function withLockedSession<T>(
  options: RunOptions,
  plan: (session: Session) => T | Promise<T>,
): Promise<T> {
  if (options.db.dialect !== 'sqlite') return lockedSession(options, plan);
  // One connection cannot nest BEGIN: runs on the same SQLite connection in this process wait their turn.
  const client = options.db.native as object;
  const previous = sqliteQueues.get(client) ?? Promise.resolve();
  const run = previous.then(() => lockedSession(options, plan));
  sqliteQueues.set(
    client,
    run.then(
      () => undefined,
      () => undefined,
    ),
  );
  return run;
}

const sqliteQueues = new WeakMap<object, Promise<void>>();

async function lockedSession<T>(options: RunOptions, plan: (session: Session) => T | Promise<T>): Promise<T> {
  const { db, target, versionTable } = options;
  const table = quote(versionTable);
  if (db.dialect === 'sqlite') {
    const client = db.native as SqliteClient;
    const foreignKeys = client.pragma('foreign_keys', { simple: true });
    const busy = client.pragma('busy_timeout', { simple: true });
    client.pragma(`busy_timeout = ${SQLITE_LOCK_TIMEOUT_MS}`);
    // PRAGMA foreign_keys is a no-op inside a transaction, so it is switched before BEGIN.
    client.pragma('foreign_keys = OFF');
    try {
      client.exec('BEGIN IMMEDIATE');
      try {
        client.exec(createVersionTableSql('sqlite', versionTable));
        const session: Session = {
          exec: (chunk) => client.exec(chunk),
          current: () =>
            (
              client.prepare(`SELECT "revision" FROM ${table} WHERE "target" = ?`).get(target) as {
                revision?: string;
              }
            )?.revision ?? null,
          setCurrent: (revision) => {
            if (revision === null) client.prepare(`DELETE FROM ${table} WHERE "target" = ?`).run(target);
            else {
              client
                .prepare(
                  `INSERT INTO ${table} ("target", "revision", "applied_at") VALUES (?, ?, ?) ON CONFLICT ("target") DO UPDATE SET "revision" = excluded."revision", "applied_at" = excluded."applied_at"`,
                )
                .run(target, revision, new Date().toISOString());
            }
          },
        };
        // Everything below is synchronous on better-sqlite3: nothing interleaves with this transaction.
        const result = await plan(session);
        const violations = client.pragma('foreign_key_check') as unknown[];
        if (violations.length > 0) {
          throw new MigrationError(
            `the migration leaves ${violations.length} rows with dangling foreign keys; nothing was applied`,
          );
        }
        client.exec('COMMIT');
        return result;
      } catch (error) {
        if (client.inTransaction) client.exec('ROLLBACK');
        throw error;
      }
    } finally {
      client.pragma(`foreign_keys = ${foreignKeys ? 'ON' : 'OFF'}`);
      client.pragma(`busy_timeout = ${Number(busy)}`);
    }
  }
  const sql = db.native as PgSql;
  return sql.begin(async (tx) => {
    await tx.unsafe('SELECT pg_advisory_xact_lock(hashtext($1))', [
      `svc-migrations:${versionTable}:${target}`,
    ]);
    await tx.unsafe(createVersionTableSql('pg', versionTable));
    const session: Session = {
      // simple protocol: a hand-edited chunk may hold several statements.
      exec: async (chunk) => {
        await tx.unsafe(chunk).simple();
      },
      current: async () => {
        const rows = await tx.unsafe(`SELECT "revision" FROM ${table} WHERE "target" = $1`, [target]);
        return (rows[0]?.revision as string | undefined) ?? null;
      },
      setCurrent: async (revision) => {
        if (revision === null) await tx.unsafe(`DELETE FROM ${table} WHERE "target" = $1`, [target]);
        else {
          await tx.unsafe(
            `INSERT INTO ${table} ("target", "revision", "applied_at") VALUES ($1, $2, now()) ON CONFLICT ("target") DO UPDATE SET "revision" = excluded."revision", "applied_at" = excluded."applied_at"`,
            [target, revision],
          );
        }
      },
    };
    return plan(session);
  });
}

function positionOf(chain: Revision[], current: string | null): number {
  if (current === null) return -1;
  const index = chain.findIndex((r) => r.id === current);
  if (index < 0) {
    throw new MigrationError(
      `the database is at revision ${current}, which is not in the migrations folder (deleted, or another project's?)`,
    );
  }
  return index;
}

async function runSteps(
  session: Session,
  revisions: Revision[],
  direction: 'upgrade' | 'downgrade',
): Promise<void> {
  for (const revision of revisions) {
    for (const chunk of revision[direction]) {
      try {
        await session.exec(chunk);
      } catch (error) {
        const message = (error as Error).message;
        // Tables made by auto_create_auth_schema before migrations were adopted.
        const hint = /already exists/.test(message)
          ? '; if these tables were created by auto_create_auth_schema, record them with `svc migrations stamp <revision>`'
          : '';
        throw new MigrationError(
          `${direction} of ${revision.id} (${revision.file}) failed, nothing was applied: ${message}${hint}\n  in: ${chunk.split('\n')[0]}`,
        );
      }
    }
  }
}

/**
 * Applies the pending revisions up to `to` (`head`, an id or a unique id prefix) in one locked transaction
 * and records the new head in the version table. Already at `to`: nothing happens.
 */
export async function upgrade(options: RunOptions & { to?: string }): Promise<RunResult> {
  const chain = await readChain(options.dir);
  assertDialect(chain, options.db.dialect, options.dir);
  const goal = resolveRevision(chain, options.to ?? 'head');
  return withLockedSession(options, async (session) => {
    const current = await session.current();
    const from = positionOf(chain, current);
    if (goal < from) {
      throw new MigrationError(
        `the database is at ${current}, after ${chain[goal]?.id ?? 'base'}: use downgrade`,
      );
    }
    const steps = chain.slice(from + 1, goal + 1);
    await runSteps(session, steps, 'upgrade');
    if (steps.length) await session.setCurrent(chain[goal]!.id);
    return { from: current, to: chain[goal]?.id ?? null, steps };
  });
}

/**
 * Reverts applied revisions down to `to`: an id (stays applied), `-N` (N steps back) or `base` (nothing
 * applied). Runs in one locked transaction like {@link upgrade}.
 */
export async function downgrade(options: RunOptions & { to: string }): Promise<RunResult> {
  const chain = await readChain(options.dir);
  assertDialect(chain, options.db.dialect, options.dir);
  const relative = /^-(\d+)$/.exec(options.to);
  const absolute = relative ? undefined : resolveRevision(chain, options.to);
  return withLockedSession(options, async (session) => {
    const current = await session.current();
    const from = positionOf(chain, current);
    const goal = relative ? from - Number(relative[1]) : absolute!;
    if (goal < -1)
      throw new MigrationError(`cannot go ${options.to} from ${current ?? 'base'}: only ${from + 1} applied`);
    if (goal > from) {
      throw new MigrationError(
        `the database is at ${current ?? 'base'}, before ${chain[goal]!.id}: use upgrade`,
      );
    }
    const steps = chain.slice(goal + 1, from + 1).reverse();
    await runSteps(session, steps, 'downgrade');
    if (steps.length) await session.setCurrent(goal >= 0 ? chain[goal]!.id : null);
    return { from: current, to: goal >= 0 ? chain[goal]!.id : null, steps };
  });
}

/**
 * Records `to` as applied without running any SQL: for a database whose tables already exist (created by
 * `auto_create_auth_schema`, or by hand).
 */
export async function stamp(options: RunOptions & { to: string }): Promise<RunResult> {
  const chain = await readChain(options.dir);
  assertDialect(chain, options.db.dialect, options.dir);
  const goal = resolveRevision(chain, options.to);
  return withLockedSession(options, async (session) => {
    const current = await session.current();
    await session.setCurrent(goal >= 0 ? chain[goal]!.id : null);
    return { from: current, to: goal >= 0 ? chain[goal]!.id : null, steps: [] };
  });
}

/** The applied revision of a target (`null`: base, nothing applied or no version table yet). */
export async function currentRevision(
  db: Database,
  versionTable: string,
  target: string,
): Promise<string | null> {
  const table = quote(versionTable);
  try {
    if (db.dialect === 'sqlite') {
      const client = db.native as SqliteClient;
      const exists = client
        .prepare(`SELECT 1 AS x FROM sqlite_master WHERE type = 'table' AND name = ?`)
        .get(versionTable);
      if (!exists) return null;
      const row = client.prepare(`SELECT "revision" FROM ${table} WHERE "target" = ?`).get(target) as
        { revision: string } | undefined;
      return row?.revision ?? null;
    }
    const sql = db.native as { unsafe(q: string, p?: unknown[]): Promise<Record<string, unknown>[]> };
    const [exists] = await sql.unsafe('SELECT to_regclass($1) AS t', [quote(versionTable)]);
    if (!exists?.t) return null;
    const rows = await sql.unsafe(`SELECT "revision" FROM ${table} WHERE "target" = $1`, [target]);
    return (rows[0]?.revision as string | undefined) ?? null;
  } catch (error) {
    throw new MigrationError(`cannot read the version table ${versionTable}: ${(error as Error).message}`);
  }
}

/** Revisions of the target folder not yet applied to the database, oldest first. */
export async function pendingRevisions(options: RunOptions): Promise<Revision[]> {
  const chain = await readChain(options.dir);
  const current = await currentRevision(options.db, options.versionTable, options.target);
  return chain.slice(positionOf(chain, current) + 1);
}
