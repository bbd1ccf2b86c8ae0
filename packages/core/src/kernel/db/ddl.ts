import type * as DrizzleKit from 'drizzle-kit/api';
import type { Dialect } from './tables.js';

type DrizzleKitApi = typeof DrizzleKit;
let api: Promise<DrizzleKitApi> | undefined;

/** drizzle-kit's programmatic API, loaded on first use (it is only needed for DDL). */
export function drizzleKit(): Promise<DrizzleKitApi> {
  api ??= import('drizzle-kit/api');
  return api;
}

/** A schema snapshot (drizzle-kit's JSON) of a set of tables; `{}` gives the empty snapshot. */
export async function snapshotOf(dialect: Dialect, tables: Record<string, unknown>): Promise<unknown> {
  const kit = await drizzleKit();
  return dialect === 'pg'
    ? kit.generateDrizzleJson(tables as Record<string, never>)
    : kit.generateSQLiteDrizzleJson(tables as Record<string, never>);
}

/** SQL statements leading from snapshot `from` to snapshot `to`. */
export async function diffSnapshots(dialect: Dialect, from: unknown, to: unknown): Promise<string[]> {
  const kit = await drizzleKit();
  return dialect === 'pg'
    ? kit.generateMigration(from as never, to as never)
    : kit.generateSQLiteMigration(from as never, to as never);
}

/** `CREATE` statements for tables that do not exist yet (`auto_create_auth_schema`). */
export async function createTablesSql(dialect: Dialect, tables: Record<string, unknown>): Promise<string[]> {
  const [empty, full] = await Promise.all([snapshotOf(dialect, {}), snapshotOf(dialect, tables)]);
  const statements = await diffSnapshots(dialect, empty, full);
  return statements.map((s) =>
    s
      .replace(/^CREATE TABLE (?!IF NOT EXISTS)/, 'CREATE TABLE IF NOT EXISTS ')
      .replace(/^CREATE (UNIQUE )?INDEX (?!IF NOT EXISTS)/, 'CREATE $1INDEX IF NOT EXISTS '),
  );
}
