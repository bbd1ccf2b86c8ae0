import { existsSync, readFileSync } from 'node:fs';
import { isAbsolute, join, relative, resolve } from 'node:path';
import { parse as parseDotenv } from 'dotenv';
import { cosmiconfigSync } from 'cosmiconfig';
import { codeFrame, type SourceLocation } from './code-frame.js';
import {
  MIN_SECRET_KEY_LENGTH,
  SECRET_SETTINGS,
  SettingsSchema,
  type Settings,
  type SettingsInput,
} from './schema.js';

/**
 * A configuration problem found at startup; the CLI prints `message` and exits non-zero. The first line of
 * the message names the setting or the file (with line and column); a YAML syntax error adds a code frame
 * on the following lines.
 */
export class ConfigError extends Error {
  override name = 'ConfigError';
  constructor(
    message: string,
    /** Where in a file the problem is, when it is in a file (a YAML syntax error). */
    readonly location?: SourceLocation,
  ) {
    super(message);
  }
}

export interface LoadSettingsOptions {
  /** Project directory holding `.env` and `svc.yaml`. @default process.cwd() */
  baseDir?: string;
  /** Environment to read `SVC_*` from. @default process.env */
  env?: Record<string, string | undefined>;
  /** Values that win over every source (tests, `createApp({ settings })`). */
  overrides?: Partial<SettingsInput> & Record<string, unknown>;
  /**
   * How an error message names the source of `overrides`.
   * @default 'createApp({ settings })'
   */
  overridesSource?: string;
  /** Refuse a missing or short secret key (SPEC "Startup rules" 1). @default true */
  requireSecretKey?: boolean;
}

const PREFIX = 'SVC_';

/** `SVC_CONFIG_FILE` names the YAML file; it is no setting (SPEC "Configuration"). */
const CONFIG_FILE_VARIABLE = 'SVC_CONFIG_FILE';

/** `SVC_FOO_BAR=1` → `{ foo_bar: '1' }`. */
function fromEnv(env: Record<string, string | undefined>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(env)) {
    if (key.startsWith(PREFIX) && value !== undefined && key !== CONFIG_FILE_VARIABLE) {
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

/** A path as a message shows it: relative to the working directory when inside it, else absolute. */
function shownPath(file: string): string {
  const rel = relative(process.cwd(), file);
  return rel && !rel.startsWith('..') && !isAbsolute(rel) ? rel : file;
}

/** What js-yaml (behind cosmiconfig) attaches to a syntax error: the reason and a 0-based position. */
interface YamlSyntaxError {
  reason?: string;
  mark?: { line: number; column: number };
  filepath?: string;
}

/** The YAML file of the project (`svc.yaml`, `svc.yml` or `SVC_CONFIG_FILE`) with its keys as written. */
interface YamlSource {
  file: string;
  /** Keys as written in the file. */
  keys: string[];
  /** Keys lower-cased, as the settings read them. */
  values: Record<string, unknown>;
}

function readYaml(baseDir: string, env: Record<string, string | undefined>): YamlSource | undefined {
  const explorer = cosmiconfigSync('svc', { searchPlaces: ['svc.yaml', 'svc.yml'], stopDir: baseDir });
  const explicit = env[CONFIG_FILE_VARIABLE];
  let found;
  try {
    found = explicit ? explorer.load(resolve(baseDir, explicit)) : explorer.search(baseDir);
  } catch (error) {
    const yamlError = error as YamlSyntaxError;
    if (yamlError.mark && yamlError.filepath) {
      // The parser's own message holds its frame after a first line without the place: say file, line,
      // column and reason on the first line, then our frame (the same as the CLI's for main.ts).
      const location = {
        file: shownPath(yamlError.filepath),
        line: yamlError.mark.line + 1,
        column: yamlError.mark.column + 1,
      };
      const source = readFileSync(yamlError.filepath, 'utf8');
      throw new ConfigError(
        `${location.file}:${location.line}:${location.column}: invalid YAML: ${yamlError.reason ?? 'syntax error'}\n` +
          codeFrame(source, location.line, location.column),
        location,
      );
    }
    if ((error as NodeJS.ErrnoException)?.code === 'ENOENT' && explicit) {
      throw new ConfigError(
        `the configuration file ${resolve(baseDir, explicit)} named by SVC_CONFIG_FILE does not exist`,
      );
    }
    throw error;
  }
  if (!found) return undefined;
  const config = (found.config ?? {}) as unknown;
  if (config === null || typeof config !== 'object' || Array.isArray(config)) {
    if (found.config !== null && found.config !== undefined) {
      throw new ConfigError(
        `${shownPath(found.filepath)}: the configuration file must hold a mapping of settings`,
      );
    }
    return { file: found.filepath, keys: [], values: {} };
  }
  const values = Object.fromEntries(Object.entries(config).map(([k, v]) => [k.toLowerCase(), v]));
  for (const secret of SECRET_SETTINGS) {
    if (secret in values) {
      throw new ConfigError(
        `${shownPath(found.filepath)}: '${secret}' is a secret and must not be in the YAML file; set SVC_${secret.toUpperCase()} in the environment or .env`,
      );
    }
  }
  // SPEC-3 section 1: a provider's client secret (`oauth_<name>_client_secret`) is a secret too.
  const clientSecret = Object.keys(values).find((k) => /^oauth_.+_client_secret$/.test(k));
  if (clientSecret !== undefined) {
    throw new ConfigError(
      `${shownPath(found.filepath)}: '${clientSecret}' is a secret and must not be in the YAML file; set SVC_${clientSecret.toUpperCase()} in the environment or .env`,
    );
  }
  return { file: found.filepath, keys: Object.keys(config), values };
}

/** Where a setting's value came from, as an error message names it. */
type SettingSource =
  | { kind: 'yaml'; file: string }
  | { kind: 'dotenv' }
  | { kind: 'environment' }
  | { kind: 'overrides'; label: string }
  | { kind: 'default' };

/** `in svc.yaml`, `in .env (SVC_PORT)`, `in the environment (SVC_PORT)`, `in createApp({ settings })`. */
function describeSource(source: SettingSource, key: string): string {
  const variable = `${PREFIX}${key.toUpperCase()}`;
  switch (source.kind) {
    case 'yaml':
      return `in ${shownPath(source.file)}`;
    case 'dotenv':
      return `in .env (${variable})`;
    case 'environment':
      return `in the environment (${variable})`;
    case 'overrides':
      return `in ${source.label}`;
    case 'default':
      return `by default (${variable})`;
  }
}

/** Largest magnitude zod gives an integer with no bound of its own (`.int()` keeps it safe). */
const UNBOUNDED = Number.MAX_SAFE_INTEGER;

interface ZodIntrospect {
  _zod: { def: { type: string; innerType?: unknown; in?: ZodIntrospect; out?: ZodIntrospect } };
  minValue?: number | null;
  maxValue?: number | null;
  options?: readonly unknown[];
}

/**
 * What a setting accepts, read from its schema: `an integer from 1 to 65535`, `one of HS256, HS384, HS512`,
 * `true or false`. Undefined for settings whose rule is only their error message (a URL scheme, a language
 * tag).
 * @example
 * acceptedValuesOf('port') // 'an integer from 1 to 65535'
 */
export function acceptedValuesOf(key: string): string | undefined {
  let schema = (SettingsSchema.shape as Record<string, unknown>)[key] as ZodIntrospect | undefined;
  for (let depth = 0; schema && depth < 8; depth++) {
    const def = schema._zod.def;
    if (def.type === 'default' || def.type === 'optional' || def.type === 'nullable') {
      schema = def.innerType as ZodIntrospect;
    } else if (def.type === 'pipe') {
      // preprocess(fn, target) is in: transform, out: target; list settings are in: union, out: transform.
      schema = def.in?._zod.def.type === 'transform' ? def.out : def.in;
    } else break;
  }
  if (!schema) return undefined;
  switch (schema._zod.def.type) {
    case 'number': {
      const min = schema.minValue ?? -UNBOUNDED;
      const max = schema.maxValue ?? UNBOUNDED;
      if (min > -UNBOUNDED && max < UNBOUNDED) return `an integer from ${min} to ${max}`;
      if (min > -UNBOUNDED) return `an integer of at least ${min}`;
      if (max < UNBOUNDED) return `an integer of at most ${max}`;
      return 'an integer';
    }
    case 'enum':
      return `one of ${(schema.options ?? []).map((o) => (o === '' ? '(empty)' : String(o))).join(', ')}`;
    case 'boolean':
      return 'true or false (also 1/0, yes/no, on/off)';
    case 'union':
      return 'a list of strings or a comma-separated string';
    default:
      return undefined;
  }
}

/** Every source read, lowest priority first, with the values it gives (keys lower-case, no prefix). */
interface ReadSources {
  yaml: YamlSource | undefined;
  dotenv: Record<string, string>;
  layers: { source: SettingSource; values: Record<string, unknown> }[];
}

function readSources(options: LoadSettingsOptions, baseDir: string): ReadSources {
  const env = options.env ?? process.env;
  const dotenv = readDotenv(baseDir);
  const yaml = readYaml(baseDir, { ...dotenv, ...env });
  const layers: ReadSources['layers'] = [
    { source: { kind: 'yaml', file: yaml?.file ?? 'svc.yaml' }, values: yaml?.values ?? {} },
    { source: { kind: 'dotenv' }, values: fromEnv(dotenv) },
    { source: { kind: 'environment' }, values: fromEnv(env) },
    {
      source: { kind: 'overrides', label: options.overridesSource ?? 'createApp({ settings })' },
      values: options.overrides ?? {},
    },
  ];
  return { yaml, dotenv, layers };
}

/** The source whose value of `key` wins (the last layer that sets it). */
function sourceOf(layers: ReadSources['layers'], key: string): SettingSource {
  for (let i = layers.length - 1; i >= 0; i--) {
    const layer = layers[i]!;
    if (key in layer.values && layer.values[key] !== undefined) return layer.source;
  }
  return { kind: 'default' };
}

/**
 * Reads the settings: YAML (`svc.yaml`, `svc.yml` or `SVC_CONFIG_FILE`) < `.env` < environment < overrides.
 * Throws {@link ConfigError} when a value is invalid, naming the setting, where its value came from and
 * what it accepts: `invalid setting 'port' in the environment (SVC_PORT): must be an integer from 1 to 65535`.
 */
export function loadSettings(options: LoadSettingsOptions = {}): Settings {
  const baseDir = resolve(options.baseDir ?? process.cwd());
  const { layers } = readSources(options, baseDir);
  const merged = Object.assign({}, ...layers.map((layer) => layer.values)) as Record<string, unknown>;
  const parsed = SettingsSchema.safeParse(merged);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const key = issue.path.join('.') || 'settings';
    const accepted = acceptedValuesOf(key);
    const rule = accepted ? `must be ${accepted}` : issue.message;
    // The value itself is not shown: a URL may hold a password (cache_url), and the source names it exactly.
    throw new ConfigError(`invalid setting '${key}' ${describeSource(sourceOf(layers, key), key)}: ${rule}`);
  }
  const settings = parsed.data;
  if (options.requireSecretKey !== false) {
    checkSecretKey(settings, describeSource(sourceOf(layers, 'secret_key'), 'secret_key'));
  }
  return settings;
}

/**
 * SPEC "Startup rules" 1: refuse a missing or short secret key. `source` says where a short key came
 * from (`in the environment (SVC_SECRET_KEY)`): an exported variable wins over `.env`, so a key fixed in
 * `.env` can still be refused, and the message must say which one is read.
 */
export function checkSecretKey(settings: Settings, source?: string): void {
  if (!settings.secret_key) {
    throw new ConfigError(
      'secret_key is not set: put SVC_SECRET_KEY (at least 32 random characters) in the environment or .env, or run `svc init`',
    );
  }
  if (settings.secret_key.length < MIN_SECRET_KEY_LENGTH) {
    const where = source ? ` ${source}` : '';
    const hint = source?.startsWith('in the environment')
      ? `; the exported variable wins over .env: unset it or export a longer key`
      : '';
    throw new ConfigError(
      `secret_key is too short (${settings.secret_key.length} characters)${where}: it needs at least ${MIN_SECRET_KEY_LENGTH}${hint}`,
    );
  }
}

/** A setting name that is no setting but close to one: probably a typo (SPEC "Configuration" allows it). */
export interface SettingTypo {
  /** The name as written: `acess_token_expire_minutes` in YAML, `SVC_PROT` in the environment or `.env`. */
  name: string;
  /** `svc.yaml` (the file as shown), `.env` or `the environment`. */
  source: string;
  /** The known names it is close to, as they would be written in that source. */
  suggestions: string[];
}

/**
 * Names read without a setting of their own that are not settings themselves: `SVC_CONFIG_FILE` and the
 * variables of svc's own test and tooling scripts are read elsewhere.
 */
const KNOWN_OTHER_NAMES = ['config_file'];

/** Optimal string alignment distance: edits, insertions, deletions and swaps of neighbours count one. */
function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [
    i,
    ...Array<number>(b.length).fill(0),
  ]);
  for (let j = 0; j <= b.length; j++) d[0]![j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        best = Math.min(best, d[i - 2]![j - 2]! + 1);
      d[i]![j] = best;
    }
  }
  return d[a.length]![b.length]!;
}

/** How far a name may be from a setting to be taken for a typo of it: short names allow less. */
function typoTolerance(name: string): number {
  if (name.length <= 5) return 1;
  if (name.length <= 12) return 2;
  return 3;
}

/** Known names within the tolerance of `name`, closest first. */
function closeSettings(name: string, known: readonly string[]): string[] {
  const tolerance = typoTolerance(name);
  const scored = known
    .map((candidate) => ({ candidate, distance: editDistance(name, candidate) }))
    .filter(({ distance }) => distance > 0 && distance <= tolerance);
  if (scored.length === 0) return [];
  const best = Math.min(...scored.map(({ distance }) => distance));
  return scored.filter(({ distance }) => distance === best).map(({ candidate }) => candidate);
}

/**
 * Names in `svc.yaml`, `.env` and the environment that are no setting but close to one (`acess_token_…`,
 * `SVC_PROT`). SPEC "Configuration" allows unknown keys, so they never stop the start; the server commands
 * warn about them once at start-up (docs/configuration.md). Names far from every setting are a project's
 * own keys and are not reported.
 * @example
 * findSettingTypos({ env: { SVC_PROT: '9000' } }) // [{ name: 'SVC_PROT', source: 'the environment', suggestions: ['SVC_PORT'] }]
 */
export function findSettingTypos(
  options: Pick<LoadSettingsOptions, 'baseDir' | 'env'> & { knownNames?: readonly string[] } = {},
): SettingTypo[] {
  const baseDir = resolve(options.baseDir ?? process.cwd());
  const env = options.env ?? process.env;
  const known = [...Object.keys(SettingsSchema.shape), ...KNOWN_OTHER_NAMES, ...(options.knownNames ?? [])];
  const knownSet = new Set(known);
  const typos: SettingTypo[] = [];
  const check = (name: string, key: string, source: string, spell: (setting: string) => string) => {
    if (knownSet.has(key)) return;
    const close = closeSettings(key, known);
    if (close.length > 0) typos.push({ name, source, suggestions: close.map(spell) });
  };
  let yaml: YamlSource | undefined;
  try {
    yaml = readYaml(baseDir, { ...readDotenv(baseDir), ...env });
  } catch {
    yaml = undefined; // loadSettings reports a broken file; a warning helper never stops the start
  }
  for (const name of yaml?.keys ?? []) {
    check(name, name.toLowerCase(), shownPath(yaml!.file), (setting) => setting);
  }
  const variables: [Record<string, string | undefined>, string][] = [
    [readDotenv(baseDir), '.env'],
    [env, 'the environment'],
  ];
  for (const [values, source] of variables) {
    for (const name of Object.keys(values)) {
      if (!name.startsWith(PREFIX) || values[name] === undefined) continue;
      check(
        name,
        name.slice(PREFIX.length).toLowerCase(),
        source,
        (setting) => `${PREFIX}${setting.toUpperCase()}`,
      );
    }
  }
  return typos;
}

/**
 * The start-up warning for one {@link SettingTypo}.
 * @example
 * settingTypoMessage(typo) // "unknown setting SVC_PROT in the environment: did you mean SVC_PORT? (it is not used)"
 */
export function settingTypoMessage(typo: SettingTypo): string {
  const quote = (name: string) => (name.startsWith(PREFIX) ? name : `'${name}'`);
  const options = typo.suggestions.map(quote).join(' or ');
  return `unknown setting ${quote(typo.name)} in ${typo.source}: did you mean ${options}? (unknown settings are allowed but svc does not use them)`;
}
