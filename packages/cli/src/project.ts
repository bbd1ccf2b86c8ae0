import { resolve } from 'node:path';
import type { Database, Settings, SettingsInput } from '@svc/core';
import {
  ConfigError,
  coreTables,
  createLogger,
  effectiveLogLevel,
  isMissingTableError,
  loadCoreModules,
  loadSettings,
  openDatabase,
  redactUrl,
  type CoreTables,
  type Logger,
} from '@svc/core/internal';
import { firstLine } from './load-app.js';
import { CliError } from './errors.js';

/** Absolute project directory of `--base-dir` (SPEC "Command-line interface": default `.`). */
export function resolveBaseDir(baseDir: string | undefined): string {
  return resolve(baseDir ?? '.');
}

/** What {@link loadProjectSettings} reads. */
export interface ProjectSettingsOptions {
  /** Project directory holding `.env` and `svc.yaml`. */
  baseDir: string;
  /** Values given on the command line; they win over environment, `.env` and YAML. */
  overrides?: Partial<SettingsInput> & Record<string, unknown>;
  /** @default process.env */
  env?: Record<string, string | undefined>;
  /** How an error names the source of `overrides`: `the command line`. @default 'createApp({ settings })' */
  overridesSource?: string;
  /** Refuse a missing or short secret key (SPEC "Startup rules" 1). @default true */
  requireSecretKey?: boolean;
}

/**
 * Loads the project's settings (YAML < `.env` < environment < command-line overrides). A configuration
 * problem becomes a {@link CliError}: one line, exit 1.
 * @example
 * const settings = loadProjectSettings({ baseDir: resolveBaseDir(argv.baseDir), overrides: { port: 9000 } });
 */
export function loadProjectSettings(options: ProjectSettingsOptions): Settings {
  try {
    return loadSettings({
      baseDir: options.baseDir,
      env: options.env,
      overrides: options.overrides,
      overridesSource: options.overridesSource,
      requireSecretKey: options.requireSecretKey,
    });
  } catch (error) {
    if (error instanceof ConfigError || (error as Error)?.name === 'ConfigError') {
      throw new CliError((error as Error).message);
    }
    throw error;
  }
}

/**
 * Opens the project's auth database (`auth_database_url`, else `database_url`) with a logger on stderr.
 * A missing URL or a database that cannot be opened is a {@link CliError} naming the fix.
 */
export function openAuthDatabase(
  settings: Settings,
  baseDir: string,
): { db: Database; log: Logger; url: string } {
  const url = settings.auth_database_url || settings.database_url;
  if (!url) {
    throw new CliError(
      `no auth database configured in ${baseDir}: set SVC_AUTH_DATABASE_URL in .env (or run svc init)`,
    );
  }
  const log = createLogger(
    { level: effectiveLogLevel(settings), format: settings.log_format, stream: process.stderr },
    'svc',
  );
  try {
    return { db: openDatabase({ url, settings, log: log.child('db'), baseDir }), log, url };
  } catch (error) {
    throw new CliError(`cannot open the auth database ${redactUrl(url)}: ${firstLine(error)}`);
  }
}

/** The auth database of a project with the core tables built from its settings (`svc users`, `permissions`, `groups`). */
export interface AuthProject {
  baseDir: string;
  settings: Settings;
  db: Database;
  tables: CoreTables;
}

/**
 * Reads `.env`/`svc.yaml` of the project in `--base-dir` (SPEC "Command-line interface"), refusing a missing
 * secret key like the server (SPEC "Startup rules" 1), opens the auth database and checks that its schema
 * exists by reading the `probe` table (created first with `auto_create_auth_schema`).
 */
export async function openAuthProject(
  baseDirOption: string | undefined,
  probe: 'user' | 'permission' = 'user',
): Promise<AuthProject> {
  const baseDir = resolveBaseDir(baseDirOption);
  const settings = loadProjectSettings({ baseDir });
  const { db, url } = openAuthDatabase(settings, baseDir);
  const tables = coreTables(settings, db.dialect);
  try {
    if (settings.auto_create_auth_schema) {
      // @svc/core's public entry brings createApp and Express: loaded only for this setting, so that
      // `svc users` and the like import @svc/core/internal alone (docs/performance.md "The CLI's start").
      const { createAuthSchema } = await import('@svc/core');
      const { buildAuthSchema } = await loadCoreModules();
      await createAuthSchema(db, buildAuthSchema(settings, db.dialect));
    }
    await db.orm.select({ id: tables[probe].id }).from(tables[probe]).limit(1);
  } catch (error) {
    await db.close().catch(() => undefined);
    if (isMissingTableError(error)) {
      throw new CliError(
        `the auth schema does not exist in ${redactUrl(url)}: run svc migrations upgrade (or svc init)`,
      );
    }
    throw new CliError(`cannot use the auth database ${redactUrl(url)}: ${firstLine(error)}`);
  }
  return { baseDir, settings, db, tables };
}
