import { resolve } from 'node:path';
import { ConfigError, loadSettings, type Settings, type SettingsInput } from '@svc/core';
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
      requireSecretKey: options.requireSecretKey,
    });
  } catch (error) {
    if (error instanceof ConfigError || (error as Error)?.name === 'ConfigError') {
      throw new CliError((error as Error).message);
    }
    throw error;
  }
}
