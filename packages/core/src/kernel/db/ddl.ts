import type * as DrizzleKit from 'drizzle-kit/api';
import { ConfigError } from '../config/load.js';
import type { Dialect } from './tables.js';

/**
 * The part of drizzle-kit's programmatic API (`drizzle-kit/api`) svc uses, written out so that svc's own
 * declarations name no drizzle-kit type: drizzle-kit is a build tool, an optional peer of @svc/core that
 * @svc/migrations depends on, and a project without it still compiles against @svc/core.
 */
export interface DrizzleKitApi {
  generateDrizzleJson(tables: Record<string, unknown>): unknown;
  generateSQLiteDrizzleJson(tables: Record<string, unknown>): Promise<unknown>;
  generateMigration(from: never, to: never): Promise<string[]>;
  generateSQLiteMigration(from: never, to: never): Promise<string[]>;
}

/** Code of the error DDL generation gets when drizzle-kit is not installed. */
export const DRIZZLE_KIT_MISSING_CODE = 'DB_DRIZZLE_KIT_MISSING';

let api: Promise<DrizzleKitApi> | undefined;

/**
 * drizzle-kit's programmatic API, loaded on first use: only DDL needs it (`auto_create_auth_schema`, an app
 * without an auth database, `startTestApp`, and revisions made by @svc/migrations, which depends on it).
 */
export function drizzleKit(): Promise<DrizzleKitApi> {
  // Typed inside the body, so that drizzle-kit's declarations do not reach svc's own (ddl.d.ts).
  api ??= (import('drizzle-kit/api') as Promise<typeof DrizzleKit>).then(
    (kit): DrizzleKitApi => kit,
    (error: unknown) => {
      api = undefined;
      const { code, message } = (error ?? {}) as { code?: string; message?: string };
      if (
        (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') &&
        /['"]drizzle-kit/.test(message ?? '')
      ) {
        throw Object.assign(
          new ConfigError(
            `creating tables needs the package drizzle-kit, which is not installed (an optional peer of @svc/core; @svc/cli and @svc/migrations bring it): run \`npm install --save-dev drizzle-kit\`, or create the tables with \`svc migrations upgrade\` and leave auto_create_auth_schema off (${DRIZZLE_KIT_MISSING_CODE})`,
          ),
          { code: DRIZZLE_KIT_MISSING_CODE },
        );
      }
      throw error;
    },
  );
  return api;
}

/** A schema snapshot (drizzle-kit's JSON) of a set of tables; `{}` gives the empty snapshot. */
export async function snapshotOf(dialect: Dialect, tables: Record<string, unknown>): Promise<unknown> {
  const kit = await drizzleKit();
  return dialect === 'pg' ? kit.generateDrizzleJson(tables) : kit.generateSQLiteDrizzleJson(tables);
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
