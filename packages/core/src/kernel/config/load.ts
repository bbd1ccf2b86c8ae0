import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parse as parseDotenv } from 'dotenv';
import { cosmiconfigSync } from 'cosmiconfig';
import {
  MIN_SECRET_KEY_LENGTH,
  SECRET_SETTINGS,
  SettingsSchema,
  type Settings,
  type SettingsInput,
} from './schema.js';

/** A configuration problem found at startup; the CLI prints `message` as one line and exits non-zero. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

export interface LoadSettingsOptions {
  /** Project directory holding `.env` and `svc.yaml`. @default process.cwd() */
  baseDir?: string;
  /** Environment to read `SVC_*` from. @default process.env */
  env?: Record<string, string | undefined>;
  /** Values that win over every source (tests, `createApp({ settings })`). */
  overrides?: Partial<SettingsInput> & Record<string, unknown>;
  /** Refuse a missing or short secret key (SPEC "Startup rules" 1). @default true */
  requireSecretKey?: boolean;
}

const PREFIX = 'SVC_';

/** `SVC_FOO_BAR=1` → `{ foo_bar: '1' }`. */
function fromEnv(env: Record<string, string | undefined>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(env)) {
    if (key.startsWith(PREFIX) && value !== undefined && key !== 'SVC_CONFIG_FILE') {
      out[key.slice(PREFIX.length).toLowerCase()] = value;
    }
  }
  return out;
}

/** Reads `.env` of the project directory as a plain map (never into process.env). */
export function readDotenv(baseDir: string): Record<string, string> {
  const path = join(baseDir, '.env');
  return existsSync(path) ? parseDotenv(readFileSync(path)) : {};
}

function readYaml(baseDir: string, env: Record<string, string | undefined>): Record<string, unknown> {
  const explorer = cosmiconfigSync('svc', { searchPlaces: ['svc.yaml', 'svc.yml'], stopDir: baseDir });
  const explicit = env.SVC_CONFIG_FILE;
  const found = explicit ? explorer.load(resolve(baseDir, explicit)) : explorer.search(baseDir);
  const config = (found?.config ?? {}) as unknown;
  if (config === null || typeof config !== 'object' || Array.isArray(config)) {
    if (found && found.config !== null && found.config !== undefined) {
      throw new ConfigError(`${found.filepath}: the configuration file must hold a mapping of settings`);
    }
    return {};
  }
  const values = Object.fromEntries(Object.entries(config).map(([k, v]) => [k.toLowerCase(), v]));
  for (const secret of SECRET_SETTINGS) {
    if (secret in values) {
      throw new ConfigError(
        `${found!.filepath}: '${secret}' is a secret and must not be in the YAML file; set SVC_${secret.toUpperCase()} in the environment or .env`,
      );
    }
  }
  return values;
}

/**
 * Reads the settings: YAML (`svc.yaml`, `svc.yml` or `SVC_CONFIG_FILE`) < `.env` < environment < overrides.
 * Throws {@link ConfigError} with a one-line message naming the setting when a value is invalid.
 */
export function loadSettings(options: LoadSettingsOptions = {}): Settings {
  const baseDir = resolve(options.baseDir ?? process.cwd());
  const env = options.env ?? process.env;
  const dotenv = readDotenv(baseDir);
  const merged = {
    ...readYaml(baseDir, { ...dotenv, ...env }),
    ...fromEnv(dotenv),
    ...fromEnv(env),
    ...(options.overrides ?? {}),
  };
  const parsed = SettingsSchema.safeParse(merged);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const key = issue.path.join('.') || 'settings';
    throw new ConfigError(`invalid setting '${key}' (SVC_${key.toUpperCase()}): ${issue.message}`);
  }
  const settings = parsed.data;
  if (options.requireSecretKey !== false) checkSecretKey(settings);
  return settings;
}

/** SPEC "Startup rules" 1: refuse a missing or short secret key. */
export function checkSecretKey(settings: Settings): void {
  if (!settings.secret_key) {
    throw new ConfigError(
      'secret_key is not set: put SVC_SECRET_KEY (at least 32 random characters) in the environment or .env, or run `svc init`',
    );
  }
  if (settings.secret_key.length < MIN_SECRET_KEY_LENGTH) {
    throw new ConfigError(
      `secret_key is too short (${settings.secret_key.length} characters): it needs at least ${MIN_SECRET_KEY_LENGTH}`,
    );
  }
}
