import { randomBytes } from 'node:crypto';
import { appendFileSync, chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, isAbsolute, join, relative, resolve, sep } from 'node:path';
import type { Settings } from '@svc/core';
import {
  MIN_SECRET_KEY_LENGTH,
  SettingsSchema,
  UserManagementError,
  assertDatabaseDriver,
  coreTables,
  createLogger,
  createUserManager,
  describePasswordPolicy,
  dialectOf,
  type Dialect,
  hashPassword,
  isMissingTableError,
  meetsPasswordPolicy,
  openDatabase,
  readDotenv,
  redactUrl,
  sqlitePath,
} from '@svc/core/internal';
import { DEFAULT_TARGET, MigrationError, checkSchema, readChain } from '@svc/migrations';
import type { CommandModule } from 'yargs';
import { CliError } from '../errors.js';
import { APP_MODULE_EXTENSIONS, DEFAULT_APP_SPEC, firstLine } from '../load-app.js';
import { cliLine } from '../output.js';
import { loadProjectSettings } from '../project.js';
import { closePrompts, promptNewPassword } from '../prompts.js';
import { STARTER_MAIN_TS, starterPackageJson, starterSvcYaml } from '../templates/project.js';
import {
  loadProjectApp,
  migrationContext,
  openMigrationDatabase,
  upgradeTarget,
  writeRevisions,
  type MigrationContext,
} from './migrations.js';
import { normaliseEmail } from './users-format.js';
import { newUsername } from './users.js';

/** SPEC "Configuration": a random secret key of at least 32 characters; 48 bytes give 64 characters. */
const SECRET_KEY_BYTES = 48;
/** SPEC "Command-line interface" `svc init`: default a file database in the project directory. */
const DEFAULT_AUTH_DATABASE_URL = 'file:auth.db';
const FIRST_REVISION_MESSAGE = 'initial auth schema';

interface InitArgs {
  baseDir: string;
  username: string;
  password?: string;
  email?: string;
  databaseUrl?: string;
  targetName: string;
  user: boolean;
  app: string;
}

/** A `.env` value, quoted when dotenv would otherwise cut it (`#`, spaces, quotes). */
function dotenvValue(value: string): string {
  if (!/[\s#"'`\\]/.test(value)) return value;
  if (!value.includes("'")) return `'${value}'`;
  throw new CliError('the database URL contains a single quote: put it in .env yourself');
}

/** The comment lines svc init puts above the values it writes to `.env` (see {@link completeDotenv}). */
const WRITTEN_BY_INIT = /^# (?:written|added) by svc init\b/;

/**
 * The keys of `.env` whose one assignment sits in a block an earlier `svc init` wrote (its comment line, then
 * its `KEY=value` lines): init may change those on a re-run, since the value is its own, never the user's.
 */
function keysInitWrote(text: string): Set<string> {
  const count = new Map<string, number>();
  const ours = new Set<string>();
  let inBlock = false;
  for (const line of text.split(/\r?\n/)) {
    const key = /^([A-Za-z_][A-Za-z0-9_]*)=/.exec(line)?.[1];
    if (key !== undefined) {
      count.set(key, (count.get(key) ?? 0) + 1);
      if (inBlock) ours.add(key);
      continue;
    }
    inBlock = WRITTEN_BY_INIT.test(line);
  }
  return new Set([...ours].filter((key) => count.get(key) === 1));
}

/** What `.env` must hold after init, and the values of an earlier init it replaces. */
interface PlannedDotenv {
  values: Record<string, string>;
  /** Keys init wrote before whose value changes (`--database-url` on a re-run). */
  replaced: string[];
}

/**
 * The values `.env` must hold after init: what it has, else the option, else a default. Never changes a value
 * the user wrote (SPEC `svc init`: never overwrites existing values); a value an earlier `svc init` wrote
 * itself is replaced by `--database-url`, so a first run that refused (or used the default file database) can be
 * corrected by running it again.
 */
function plannedDotenv(
  existing: Record<string, string>,
  databaseUrl: string | undefined,
  writtenByInit: ReadonlySet<string>,
): PlannedDotenv {
  const current = existing.SVC_AUTH_DATABASE_URL;
  const replaced: string[] = [];
  if (databaseUrl !== undefined && current !== undefined && current !== databaseUrl) {
    if (!writtenByInit.has('SVC_AUTH_DATABASE_URL')) {
      throw new CliError(
        'SVC_AUTH_DATABASE_URL in .env differs from --database-url; svc init never overwrites a value it did not write: edit .env or drop the option',
      );
    }
    replaced.push('SVC_AUTH_DATABASE_URL');
  }
  return {
    values: {
      SVC_SECRET_KEY: existing.SVC_SECRET_KEY ?? randomBytes(SECRET_KEY_BYTES).toString('base64url'),
      SVC_AUTH_DATABASE_URL:
        (replaced.length > 0 ? databaseUrl : current) ??
        databaseUrl ??
        existing.SVC_DATABASE_URL ??
        DEFAULT_AUTH_DATABASE_URL,
    },
    replaced,
  };
}

/**
 * A file database needs better-sqlite3, an optional peer a PostgreSQL-only project leaves out: refuse before
 * anything is written, naming the option that avoids it (docs/deployment.md "A PostgreSQL-only install").
 */
function assertDriverFor(url: string, fromOption: boolean): void {
  try {
    assertDatabaseDriver(url);
  } catch (error) {
    if ((error as Error)?.name !== 'ConfigError') throw error;
    const fix = fromOption
      ? ''
      : '; svc init chose it by default: run `svc init --database-url postgres://…` for PostgreSQL';
    throw new CliError(`${(error as Error).message}${fix}; nothing was written`);
  }
}

/**
 * SPEC `svc init`: refuse when an exported variable differs from what `.env` will hold, since the environment
 * wins over `.env` and the project would run on other values than the ones init set up.
 */
function assertEnvironmentAgrees(
  planned: Record<string, string>,
  env: Record<string, string | undefined>,
): void {
  for (const [key, value] of Object.entries(planned)) {
    const exported = env[key];
    if (exported !== undefined && exported !== value) {
      throw new CliError(
        `${key} is exported in the environment with a value that differs from the one in .env (the environment wins over .env); unset it or give both the same value`,
      );
    }
  }
}

/**
 * Creates `.env` (mode 0600) or appends the missing keys, and rewrites in place the lines of `replaced` (values
 * an earlier init wrote, see {@link keysInitWrote}); returns the keys written.
 */
function completeDotenv(path: string, existing: Record<string, string>, planned: PlannedDotenv): string[] {
  const values = planned.values;
  if (planned.replaced.length > 0) {
    const text = readFileSync(path, 'utf8');
    const rewritten = text
      .split('\n')
      .map((line) => {
        const key = /^([A-Za-z_][A-Za-z0-9_]*)=/.exec(line)?.[1];
        return key !== undefined && planned.replaced.includes(key)
          ? `${key}=${dotenvValue(values[key]!)}`
          : line;
      })
      .join('\n');
    writeFileSync(path, rewritten);
  }
  const missing = Object.keys(values).filter((key) => existing[key] === undefined);
  if (missing.length === 0) return planned.replaced;
  const lines = missing.map((key) => `${key}=${dotenvValue(values[key]!)}`).join('\n');
  if (!existsSync(path)) {
    // Secrets: readable by the owner only (SPEC `svc init`: new file mode 0600).
    writeFileSync(path, `# written by svc init: secrets, keep out of version control\n${lines}\n`, {
      mode: 0o600,
      flag: 'wx',
    });
    chmodSync(path, 0o600);
  } else {
    const text = readFileSync(path, 'utf8');
    appendFileSync(path, `${text === '' || text.endsWith('\n') ? '' : '\n'}# added by svc init\n${lines}\n`);
  }
  return [...planned.replaced, ...missing];
}

/** Writes `content` to `path` unless the file exists (never overwrites); returns whether it wrote. */
function writeIfAbsent(path: string, content: string): boolean {
  try {
    writeFileSync(path, content, { flag: 'wx' });
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
}

/** `.gitignore` lines compare equal with or without a leading or trailing slash (`/.env`, `node_modules`). */
const gitignoreKey = (line: string) => line.trim().replace(/^\/+|\/+$/g, '');

/** Appends the entries `.gitignore` lacks (creating it when absent); never repeats a line. Returns those added. */
function completeGitignore(path: string, entries: string[]): string[] {
  const text = existsSync(path) ? readFileSync(path, 'utf8') : '';
  const present = new Set(text.split(/\r?\n/).map(gitignoreKey));
  const missing = entries.filter((entry) => !present.has(gitignoreKey(entry)));
  if (missing.length === 0) return [];
  const separator = text === '' ? '' : text.endsWith('\n') ? '\n' : '\n\n';
  appendFileSync(
    path,
    `${separator}# svc init: secrets, the local database, dependencies\n${missing.join('\n')}\n`,
  );
  return missing;
}

/**
 * The files of a file database given by `url` (`auth.db` with its `-shm` and `-wal` companions) as `.gitignore`
 * entries relative to the project, or none for a server database or a file outside the project.
 */
function databaseFilesOf(url: string, baseDir: string): string[] {
  if (dialectOf(url) !== 'sqlite') return [];
  const path = sqlitePath(url, baseDir);
  const rel = relative(baseDir, path);
  if (path === ':memory:' || rel === '' || rel.startsWith('..') || isAbsolute(rel)) return [];
  const entry = rel.split(sep).join('/');
  return [entry, `${entry}-shm`, `${entry}-wal`];
}

/** What {@link scaffoldProject} did, for the output and the rest of init. */
interface Scaffold {
  /** The starter main.ts was written by this run (init then migrates the core modules without importing it). */
  wroteStarter: boolean;
  /** package.json exists and lacks `"type": "module"`: main.ts cannot load until it is set. */
  notEsm: boolean;
}

/**
 * A new project (no `main.ts`, `main.js` or `main.mjs`): writes the starter `main.ts`, `svc.yaml` when neither
 * it nor `svc.yml` exists, `package.json` when absent, and completes `.gitignore`. Never overwrites a file, so
 * a second run changes nothing. An existing package.json is never edited: without `"type": "module"` init warns
 * with the fix (`npm pkg set type=module`), since the starter is an ES module.
 */
function scaffoldProject(baseDir: string, app: string, authDatabaseUrl: string): Scaffold {
  const none: Scaffold = { wroteStarter: false, notEsm: false };
  if (app !== DEFAULT_APP_SPEC) return none; // another module was named: it is the project's to write
  if (APP_MODULE_EXTENSIONS.some((ext) => existsSync(join(baseDir, `main${ext}`)))) return none;
  const say = (line: string) => process.stdout.write(`${line}\n`);

  const wroteStarter = writeIfAbsent(join(baseDir, 'main.ts'), STARTER_MAIN_TS);
  if (wroteStarter) say('main.ts: wrote a starter app (a public and a protected route)');
  if (!existsSync(join(baseDir, 'svc.yml'))) {
    const yaml = starterSvcYaml(SettingsSchema.parse({}) as Record<string, unknown>);
    if (writeIfAbsent(join(baseDir, 'svc.yaml'), yaml))
      say('svc.yaml: wrote the common settings (no secrets)');
  }
  const ignored = completeGitignore(join(baseDir, '.gitignore'), [
    '.env',
    ...databaseFilesOf(authDatabaseUrl, baseDir),
    'node_modules/',
  ]);
  if (ignored.length > 0) say(`.gitignore: added ${ignored.join(', ')}`);

  const manifestPath = join(baseDir, 'package.json');
  let notEsm = false;
  if (writeIfAbsent(manifestPath, starterPackageJson(basename(baseDir)))) {
    say('package.json: wrote a minimal one ("type": "module", scripts start and dev)');
  } else {
    try {
      notEsm = (JSON.parse(readFileSync(manifestPath, 'utf8')) as { type?: unknown }).type !== 'module';
    } catch {
      notEsm = false; // not JSON: npm reports that better than we could
    }
    if (notEsm) {
      cliLine(
        'warning',
        'package.json has no "type": "module", and main.ts is an ES module: run `npm pkg set type=module` before `svc serve` (svc init does not edit package.json)',
      );
    }
  }
  return { wroteStarter, notEsm };
}

/** `/api` + `api_v1_prefix`, as the server joins them. */
function apiBaseOf(prefix: string): string {
  const trimmed = prefix.replace(/^\/+|\/+$/g, '');
  return trimmed === '' ? '/api' : `/api/${trimmed}`;
}

/** Where a browser on this machine reaches the server bound to `host`. */
function browserUrlOf(host: string, port: number): string {
  const local = host === '' || host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '::1' : host;
  return `http://${local.includes(':') ? `[${local}]` : local}:${port}`;
}

/**
 * The next steps printed at the end of every run: serve, log in through the docs' Authorize button, call
 * GET /api/auth/user. Plain text (docs/cli.md "help and output"); the password is never printed.
 */
function nextSteps(options: {
  settings: { host: string; port: number; api_v1_prefix: string; docs_enabled: boolean };
  username: string | undefined;
  notEsm: boolean;
}): string {
  const { settings, username, notEsm } = options;
  const url = browserUrlOf(settings.host, settings.port);
  const userRoute = `${apiBaseOf(settings.api_v1_prefix)}/auth/user`;
  const steps: string[] = [];
  if (notEsm) steps.push('Make the project an ES module:  npm pkg set type=module');
  if (username === undefined) {
    steps.push('Create a superuser:  npx svc users create <username> --superuser   (password prompted)');
  }
  steps.push('Start the server:  npx svc serve   (or npx svc dev: restarts when a file changes)');
  const who = username === undefined ? 'that user' : username;
  if (settings.docs_enabled) {
    steps.push(
      `Open ${url}/docs/core (the core routes; your own routes are at ${url}/docs)`,
      `Click "Authorize", log in as ${who} with its password (leave client_id and client_secret empty)`,
      `Open GET ${userRoute}, click "Try it out", then "Execute": 200 with your user`,
    );
  } else {
    steps.push(
      `Log in as ${who}:  curl -d 'username=${username ?? '<username>'}&password=<password>' ${url}${apiBaseOf(settings.api_v1_prefix)}/auth/token`,
      `Call:  curl -H 'Authorization: Bearer <access_token>' ${url}${userRoute}   (docs_enabled is false: no /docs)`,
    );
  }
  const numbered = steps.map((step, i) => `  ${i + 1}. ${step}`);
  return [
    '',
    'Next steps:',
    ...numbered,
    '',
    'More:',
    '  npx svc users create <username>   add a user (--superuser, --staff; see npx svc users --help)',
    '  npx svc migrations --help          schema revisions of the auth tables (commit the migrations/ folder)',
    '  Docs: https://github.com/svc-dev/svc/tree/main/docs   (start with getting-started.md)',
    '',
  ].join('\n');
}

/** The first superuser as init will create it, settled before anything is written. */
interface PlannedSuperuser {
  /** The normal form of `--username` (kernel/identity.ts). */
  username: string;
  email: string | null;
  /** `undefined` when the user exists already (init leaves it unchanged and asks for nothing). */
  password: string | undefined;
}

/** A user manager on a database already open; `svc users create` uses the same (kernel identity rules). */
function managerOn(db: ReturnType<typeof openDatabase>, settings: Settings) {
  return createUserManager({
    db,
    tables: coreTables(settings, db.dialect),
    hashPassword,
    now: () => new Date(),
  });
}

/**
 * Whether the auth database at `url` already holds the user `username` (found as `svc users` finds one). Opens
 * nothing that does not exist: a file database that is not there yet holds no user.
 */
async function userExists(
  url: string,
  baseDir: string,
  settings: Settings,
  username: string,
): Promise<boolean> {
  if (dialectOf(url) === 'sqlite') {
    const path = sqlitePath(url, baseDir);
    if (path === ':memory:' || !existsSync(path)) return false;
  }
  const log = createLogger({ level: 'CRITICAL', format: settings.log_format }, 'svc.init');
  let db: ReturnType<typeof openDatabase>;
  try {
    db = openDatabase({ url, settings, log, baseDir });
  } catch (error) {
    throw new CliError(`cannot open the auth database ${redactUrl(url)}: ${firstLine(error)}`);
  }
  try {
    return (await managerOn(db, settings).find(username)) !== undefined;
  } catch (error) {
    if (isMissingTableError(error)) return false;
    throw new CliError(`cannot reach the auth database ${redactUrl(url)}: ${firstLine(error)}`);
  } finally {
    await db.close().catch(() => undefined);
  }
}

/**
 * Settles the superuser before init writes anything: the username rule, the email, and the password when the
 * user does not exist yet (SPEC `svc init`: prompted, hidden and confirmed). Without a terminal and without
 * `--password` init refuses here, so a refused run leaves the project as it was.
 */
async function planSuperuser(
  argv: InitArgs,
  url: string,
  baseDir: string,
  settings: Settings,
): Promise<PlannedSuperuser> {
  const username = newUsername(argv.username);
  const email = normaliseEmail(argv.email) ?? null;
  if (await userExists(url, baseDir, settings, argv.username))
    return { username, email, password: undefined };
  let password = argv.password;
  if (password === undefined) {
    if (!process.stdin.isTTY) {
      throw new CliError(
        `--password is required when stdin is not a terminal (or use --no-user); nothing was written`,
      );
    }
    try {
      process.stderr.write(`Password of the superuser ${username}\n`);
      password = await promptNewPassword();
    } finally {
      closePrompts();
    }
  }
  // The one password policy (kernel/identity.ts), as `svc users create` and the server apply it.
  if (!meetsPasswordPolicy(password, settings.password_min_length)) {
    throw new CliError(describePasswordPolicy(settings.password_min_length));
  }
  return { username, email, password };
}

/**
 * Creates the first superuser through the user manager of `svc users create` (same username rule, email
 * check and password hash), staff too, like `svc users create --superuser` (docs/cli.md "users"). Returns a
 * line saying what happened; a user that exists is left unchanged.
 */
async function ensureSuperuser(
  context: MigrationContext,
  planned: PlannedSuperuser,
  argv: InitArgs,
  db: ReturnType<typeof openMigrationDatabase>,
): Promise<string> {
  const exists = `superuser ${planned.username} exists: left unchanged`;
  const manager = managerOn(db, context.settings);
  if (planned.password === undefined || (await manager.find(argv.username))) return exists;
  try {
    await manager.create({
      username: argv.username,
      password: planned.password,
      email: planned.email,
      isActive: true,
      isStaff: true,
      isSuperuser: true,
    });
  } catch (error) {
    if (error instanceof UserManagementError) {
      if (error.reason === 'user_exists') return exists; // another init made it in the meantime
      throw new CliError(error.message);
    }
    throw error;
  }
  return `created superuser ${planned.username}`;
}

/**
 * `svc init` (SPEC "Command-line interface"): idempotent bootstrap of a project — `.env` with a secret key and
 * the auth database URL, in a new project the starter files (main.ts, svc.yaml, .gitignore, package.json), the
 * migrations folder with its first revision, upgrade to head, the first superuser, then the next steps.
 */
export const initCommand: CommandModule<InitArgs, InitArgs> = {
  command: 'init',
  describe:
    'Set up the project: .env, starter files in a new project, migrations, database upgrade, first superuser (safe to run again)',
  builder: (y) =>
    y
      .option('username', {
        alias: 'u',
        type: 'string',
        default: 'admin',
        describe: 'Username of the first superuser',
      })
      .option('password', { type: 'string', describe: 'Its password (prompted, hidden, when missing)' })
      .option('email', { type: 'string', describe: 'Its email address' })
      .option('database-url', {
        type: 'string',
        describe: `Auth database URL written to .env when missing (default ${DEFAULT_AUTH_DATABASE_URL} in the project)`,
      })
      .option('target-name', { type: 'string', default: DEFAULT_TARGET, describe: 'Migration target' })
      .option('user', {
        type: 'boolean',
        default: true,
        describe: 'Create the first superuser (--no-user: skip)',
      })
      .option('app', {
        type: 'string',
        default: 'main:app',
        describe: 'Project app (module:export) giving the module list',
      })
      .example('$0 init --username admin', 'Set up the project; the password is prompted (hidden)')
      .example("$0 init -u admin --password 'correct-horse-battery'", 'Non-interactive, for scripts and CI')
      .example(
        '$0 init --database-url postgres://app:secret@db.internal/app --no-user',
        'PostgreSQL, no user',
      ) as never,
  async handler(argv) {
    const baseDir = resolve(argv.baseDir);
    if (!existsSync(baseDir)) throw new CliError(`the project directory ${baseDir} does not exist`);
    const envPath = join(baseDir, '.env');
    const existing = readDotenv(baseDir);
    const dotenvText = existsSync(envPath) ? readFileSync(envPath, 'utf8') : '';
    const plan = plannedDotenv(existing, argv.databaseUrl, keysInitWrote(dotenvText));
    const planned = plan.values;
    assertEnvironmentAgrees(planned, process.env);
    // Before the first write: a file database URL on an install without better-sqlite3 would fail later.
    assertDriverFor(
      planned.SVC_AUTH_DATABASE_URL!,
      argv.databaseUrl !== undefined || existing.SVC_AUTH_DATABASE_URL !== undefined,
    );
    if (planned.SVC_SECRET_KEY!.length < MIN_SECRET_KEY_LENGTH) {
      throw new CliError(
        `SVC_SECRET_KEY in .env is shorter than ${MIN_SECRET_KEY_LENGTH} characters: replace it`,
      );
    }
    // Everything that can refuse runs before the first write: loading the project's app (when it has one;
    // the starter written below adds no module to the core ones, so init migrates without importing it, which
    // works before `@svc/core` resolves or package.json says "type": "module"), the settings it will run with
    // (environment, .env as completed below, svc.yaml, the app's own) and the superuser.
    const app = await loadProjectApp(baseDir, argv.app);
    const settings = loadProjectSettings({
      baseDir,
      env: { ...process.env, ...planned },
      overrides: app?.options.settings,
      requireSecretKey: false,
    });
    const superuser = argv.user
      ? await planSuperuser(argv, planned.SVC_AUTH_DATABASE_URL!, baseDir, settings)
      : undefined;

    const written = completeDotenv(envPath, existing, plan);
    const added = written.filter((key) => !plan.replaced.includes(key));
    const parts = [
      ...(plan.replaced.length
        ? [`changed ${plan.replaced.join(', ')} (written by an earlier svc init)`]
        : []),
      ...(added.length ? [`added ${added.join(', ')}`] : []),
    ];
    process.stdout.write(parts.length ? `.env: ${parts.join('; ')}\n` : '.env: complete\n');
    const scaffold = scaffoldProject(baseDir, argv.app, planned.SVC_AUTH_DATABASE_URL!);

    try {
      const context = await migrationContext({ baseDir, target: argv.targetName, app });
      // The first revision of every dialect the target has tables for (SQLite and PostgreSQL for auth), so
      // the checkout runs on a file database and on PostgreSQL alike (docs/deployment.md).
      const missing: Dialect[] = [];
      for (const dialect of context.dialects) {
        if ((await readChain(await context.dirOf(dialect))).length === 0) missing.push(dialect);
      }
      if (missing.length > 0) {
        const lines = await writeRevisions(context, {
          message: FIRST_REVISION_MESSAGE,
          autogenerate: true,
          dialects: missing,
        });
        for (const line of lines) process.stdout.write(`${line}\n`);
      }
      if (!missing.includes(context.dialect)) {
        const check = await checkSchema({
          dir: context.dir,
          dialect: context.dialect,
          schema: context.schema,
        });
        if (!check.clean) {
          process.stdout.write(
            `note: the schema differs from the head revision; run \`svc migrations revision "<message>" --autogenerate --target-name ${context.target}\`\n`,
          );
        }
      }
      const db = openMigrationDatabase(context);
      try {
        process.stdout.write(`${await upgradeTarget(context, db)}\n`);
        if (superuser) process.stdout.write(`${await ensureSuperuser(context, superuser, argv, db)}\n`);
      } finally {
        await db.close();
      }
      process.stdout.write(
        nextSteps({
          settings,
          username: superuser?.username,
          notEsm: scaffold.notEsm,
        }),
      );
    } catch (error) {
      if (error instanceof MigrationError) throw new CliError(error.message);
      throw error;
    }
  },
};
