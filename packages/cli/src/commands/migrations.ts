import { join, relative, resolve } from 'node:path';
import type { App, Database, Settings } from '@svc/core';
import {
  createLogger,
  dialectOf,
  loadCoreModules,
  loadSettings,
  openDatabase,
  redactUrl,
  type Dialect,
} from '@svc/core/internal';
import {
  DEFAULT_TARGET,
  DIALECTS,
  MigrationError,
  chainDir,
  checkSchema,
  createRevisions,
  currentRevision,
  dialectName,
  downgrade,
  readChain,
  schemaFits,
  stamp,
  targetDir,
  upgrade,
  versionTableName,
  type RunResult,
} from '@svc/migrations';
import type { Argv, CommandModule } from 'yargs';
import { CliError } from '../errors.js';
import { loadAppIfPresent } from '../load-app.js';
import { cliLine } from '../output.js';

/** Imports the project's app when its module exists (commands read its module list and settings). */
export function loadProjectApp(baseDir: string, spec?: string): Promise<App | undefined> {
  return loadAppIfPresent({ baseDir, spec });
}

/** What every migrations command works on: settings, database URL and dialect, live schema, folder. */
export interface MigrationContext {
  baseDir: string;
  target: string;
  settings: Settings;
  /** The database the target lives in, and its dialect. */
  url: string;
  dialect: Dialect;
  /** Folder of the chain of the database's dialect (`migrations/<target>/<dialect>`, see `chainDir`). */
  dir: string;
  /** The live schema in the database's dialect. */
  schema: Record<string, unknown>;
  versionTable: string;
  /** The dialects the target has tables for (both for the core's auth target), in `DIALECTS` order. */
  dialects: Dialect[];
  /** The live schema in one of `dialects`. */
  schemaOf(dialect: Dialect): Record<string, unknown>;
  /** Folder of the chain of one dialect. */
  dirOf(dialect: Dialect): Promise<string>;
}

/**
 * Reads settings (`.env`, environment, svc.yaml, the app's own settings) and builds the live schema of the
 * target in each dialect it has tables for. The chain used is the one of the database URL's dialect, so one
 * checkout migrates a file database in development and PostgreSQL in production (docs/deployment.md).
 */
export async function migrationContext(options: {
  baseDir: string;
  target: string;
  app?: App;
  env?: Record<string, string | undefined>;
}): Promise<MigrationContext> {
  const settings = loadSettings({
    baseDir: options.baseDir,
    env: options.env,
    overrides: options.app?.options.settings,
    requireSecretKey: false,
  });
  const authUrl = settings.auth_database_url || settings.database_url;
  // The auth target holds the core's tables (and project modules'); any other target is one of the
  // project's `migrationTargets`, in the main database unless it says otherwise.
  const projectTarget =
    options.target === DEFAULT_TARGET ? undefined : options.app?.options.migrationTargets?.[options.target];
  if (options.target !== DEFAULT_TARGET && !projectTarget) {
    const known = [DEFAULT_TARGET, ...Object.keys(options.app?.options.migrationTargets ?? {})];
    const dialectHint = /-(pg|postgres|postgresql|sqlite)$/i.test(options.target)
      ? `; a target needs no second name per dialect: its revisions for each dialect live in migrations/${options.target.replace(/-[a-z]+$/i, '')}/sqlite/ and …/pg/, chosen from the database URL`
      : '';
    throw new CliError(
      `unknown migration target '${options.target}': the app defines ${known.join(', ')}${dialectHint}`,
    );
  }
  const url = projectTarget && projectTarget.database !== 'auth' ? settings.database_url || authUrl : authUrl;
  if (!url) {
    throw new CliError(
      'no auth database: set SVC_AUTH_DATABASE_URL in the environment or .env (or run `svc init`)',
    );
  }
  let dialect: Dialect;
  try {
    dialect = dialectOf(url);
  } catch (error) {
    throw new CliError((error as Error).message);
  }
  const { coreModules, buildAuthSchema } = await loadCoreModules();
  const modules = [
    ...(options.app?.options.coreModules ?? coreModules),
    ...(options.app?.options.modules ?? []),
  ];
  const build = (d: Dialect) =>
    projectTarget ? projectTarget.tables(settings, d) : buildAuthSchema(settings, d, modules);
  // A target whose tables() serves one dialect only (it ignores the argument, or throws for the other)
  // keeps the revisions of that dialect only.
  const schemas = new Map<Dialect, Record<string, unknown>>();
  for (const d of DIALECTS) {
    try {
      const schema = build(d);
      if (schemaFits(schema, d)) schemas.set(d, schema);
    } catch (error) {
      if (d === dialect) throw error;
    }
  }
  const schema = schemas.get(dialect);
  if (!schema) {
    throw new CliError(
      `the target ${options.target} has no ${dialectName(dialect)} tables: its tables(settings, dialect) returns tables of another dialect for '${dialect}' (use drizzle-orm/${dialect === 'pg' ? 'pg-core' : 'sqlite-core'} there)`,
    );
  }
  const dirOf = (d: Dialect) => chainDir(options.baseDir, options.target, d);
  return {
    baseDir: options.baseDir,
    target: options.target,
    settings,
    url,
    dialect,
    dir: await dirOf(dialect),
    schema,
    versionTable: versionTableName(settings),
    dialects: [...schemas.keys()],
    schemaOf: (d) => {
      const found = schemas.get(d);
      if (!found) throw new CliError(`the target ${options.target} has no ${dialectName(d)} tables`);
      return found;
    },
    dirOf,
  };
}

/** A folder as the user would type it: relative to the working directory when below it. */
export function shownDir(dir: string): string {
  const rel = relative(process.cwd(), dir);
  return rel === '' || rel.startsWith('..') ? dir : rel;
}

/**
 * Writes the next revision of the context's target for `dialects` (one id for all) and returns one line per
 * dialect: the file written, or that nothing changed there.
 */
export async function writeRevisions(
  context: MigrationContext,
  options: { message: string; autogenerate: boolean; dialects: Dialect[] },
): Promise<string[]> {
  const results = await createRevisions({
    baseDir: context.baseDir,
    target: context.target,
    message: options.message,
    autogenerate: options.autogenerate,
    schemas: Object.fromEntries(options.dialects.map((d) => [d, context.schemaOf(d)])),
  });
  const lines: string[] = [];
  for (const result of results) {
    if (!result.revision) {
      // SPEC "Versioning" 4: an empty autogenerated revision means nothing to do.
      lines.push(
        `nothing to do: the schema matches the head revision ${result.parent?.id ?? '(none)'} in ${shownDir(result.dir)}; no revision written`,
      );
      continue;
    }
    const count = result.revision.upgrade.length;
    lines.push(
      `wrote ${shownDir(join(result.dir, result.revision.file))} (${options.autogenerate ? `${count} statement${count === 1 ? '' : 's'}` : 'empty: add your SQL'})`,
    );
  }
  if (results.some((r) => r.dir === targetDir(context.baseDir, context.target))) {
    lines.push(
      `note: ${shownDir(targetDir(context.baseDir, context.target))} keeps revisions in the layout of earlier versions (files directly in the target folder); move them into a folder per dialect, see docs/upgrading.md "Migrations: a folder per dialect"`,
    );
  }
  return lines;
}

/** Opens the auth database of the context for one command; logs only warnings. */
export function openMigrationDatabase(context: MigrationContext): Database {
  const log = createLogger({ level: 'WARNING', format: context.settings.log_format }, 'svc.migrations');
  return openDatabase({ url: context.url, settings: context.settings, log, baseDir: context.baseDir });
}

/** Upgrades the target to `to` and returns one line describing what happened. */
export async function upgradeTarget(context: MigrationContext, db: Database, to = 'head'): Promise<string> {
  const result = await upgrade({
    db,
    dir: context.dir,
    target: context.target,
    versionTable: context.versionTable,
    to,
  });
  return describe('upgrade', context.target, result);
}

function describe(direction: 'upgrade' | 'downgrade', target: string, result: RunResult): string {
  if (result.steps.length === 0) return `${target} is at ${result.to ?? 'base'}: nothing to do`;
  const verb = direction === 'upgrade' ? 'applied' : 'reverted';
  const list = result.steps.map((r) => `  ${verb} ${r.id}  ${r.message}`).join('\n');
  return `${list}\n${target}: ${result.from ?? 'base'} -> ${result.to ?? 'base'} (${result.steps.length} revision${result.steps.length === 1 ? '' : 's'} ${verb})`;
}

interface CommonArgs {
  baseDir: string;
  targetName: string;
  app: string;
}

async function contextOf(argv: CommonArgs): Promise<MigrationContext> {
  const baseDir = resolve(argv.baseDir);
  const app = await loadProjectApp(baseDir, argv.app);
  return migrationContext({ baseDir, target: argv.targetName, app });
}

/** Runs `fn`, turning migration problems into one-line CLI errors. */
async function guarded<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    if (error instanceof MigrationError) throw new CliError(error.message);
    throw error;
  }
}

async function withDatabase<T>(context: MigrationContext, fn: (db: Database) => Promise<T>): Promise<T> {
  const db = openMigrationDatabase(context);
  try {
    return await fn(db);
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === '3D000' || code === '28P01') {
      throw new CliError(
        `cannot reach the auth database ${redactUrl(context.url)}: ${(error as Error).message}`,
      );
    }
    throw error;
  } finally {
    await db.close();
  }
}

const out = (line: string) => process.stdout.write(`${line}\n`);

function common<T>(yargs: Argv<T>) {
  return yargs
    .option('target-name', {
      type: 'string',
      default: DEFAULT_TARGET,
      describe:
        'Migration target: the folder migrations/<target-name>/<dialect> (sqlite or pg, from the database URL) and its row in the version table',
    })
    .option('app', {
      type: 'string',
      default: 'main:app',
      describe: 'Project app (module:export) giving the module list',
    });
}

const revisionCommand: CommandModule<
  CommonArgs,
  CommonArgs & { message: string; autogenerate: boolean; dialect?: Dialect }
> = {
  command: 'revision <message>',
  describe:
    'Write the next revision (--autogenerate: diff the live schema against the head revision, for every dialect)',
  builder: (y) =>
    common(y)
      .positional('message', { type: 'string', demandOption: true, describe: 'What the revision does' })
      .option('autogenerate', {
        type: 'boolean',
        default: false,
        describe: 'Generate the SQL from the schema',
      })
      .option('dialect', {
        type: 'string',
        choices: [...DIALECTS],
        describe: "Only this dialect (default: every dialect with --autogenerate, else the database URL's)",
      }) as never,
  handler: (argv) =>
    guarded(async () => {
      const context = await contextOf(argv);
      const dialects = argv.dialect
        ? [argv.dialect]
        : argv.autogenerate
          ? context.dialects
          : [context.dialect];
      for (const line of await writeRevisions(context, {
        message: argv.message,
        autogenerate: argv.autogenerate,
        dialects,
      })) {
        out(line);
      }
    }),
};

/** Why a chain is empty, and what to run: another dialect's revisions may exist (developed on SQLite). */
async function noRevisionsError(context: MigrationContext): Promise<CliError> {
  const others: string[] = [];
  for (const d of DIALECTS.filter((d) => d !== context.dialect)) {
    const dir = await context.dirOf(d);
    if ((await readChain(dir)).length > 0) others.push(`${dialectName(d)} revisions in ${shownDir(dir)}`);
  }
  const name = dialectName(context.dialect);
  if (others.length > 0) {
    return new CliError(
      `no ${name} revisions in ${shownDir(context.dir)} (the project has ${others.join(', ')}): write them where the project is developed with \`svc migrations revision "${name} revisions" --autogenerate --target-name ${context.target}\` (it writes every dialect's), commit them, then upgrade`,
    );
  }
  return new CliError(
    `no revisions in ${shownDir(context.dir)}: run \`svc migrations revision "initial" --autogenerate --target-name ${context.target}\` or \`svc init\``,
  );
}

const upgradeCommand: CommandModule<CommonArgs, CommonArgs & { revision: string }> = {
  command: 'upgrade [revision]',
  describe: 'Apply pending revisions up to a revision (default head), in one transaction',
  builder: (y) =>
    common(y).positional('revision', {
      type: 'string',
      default: 'head',
      describe: 'head, or a revision id (prefix)',
    }) as never,
  handler: (argv) =>
    guarded(async () => {
      const context = await contextOf(argv);
      const chain = await readChain(context.dir);
      if (chain.length === 0) throw await noRevisionsError(context);
      out(await withDatabase(context, (db) => upgradeTarget(context, db, argv.revision)));
    }),
};

const downgradeCommand: CommandModule<CommonArgs, CommonArgs & { revision: string }> = {
  command: 'downgrade <revision>',
  describe: 'Revert applied revisions down to a revision id, -1 (one step) or base (all)',
  builder: (y) =>
    common(y).positional('revision', {
      type: 'string',
      demandOption: true,
      describe: 'id (prefix), -N or base',
    }) as never,
  handler: (argv) =>
    guarded(async () => {
      const context = await contextOf(argv);
      const result = await withDatabase(context, (db) =>
        downgrade({
          db,
          dir: context.dir,
          target: context.target,
          versionTable: context.versionTable,
          to: argv.revision,
        }),
      );
      out(describe('downgrade', context.target, result));
    }),
};

const stampCommand: CommandModule<CommonArgs, CommonArgs & { revision: string }> = {
  command: 'stamp <revision>',
  describe: 'Record a revision as applied without running SQL (tables made by auto_create_auth_schema)',
  builder: (y) => common(y).positional('revision', { type: 'string', demandOption: true }) as never,
  handler: (argv) =>
    guarded(async () => {
      const context = await contextOf(argv);
      const result = await withDatabase(context, (db) =>
        stamp({
          db,
          dir: context.dir,
          target: context.target,
          versionTable: context.versionTable,
          to: argv.revision,
        }),
      );
      out(`${context.target}: stamped ${result.to ?? 'base'} (was ${result.from ?? 'base'})`);
    }),
};

const currentCommand: CommandModule<CommonArgs, CommonArgs> = {
  command: 'current',
  describe: 'Show the revision the database is at',
  builder: (y) => common(y) as never,
  handler: (argv) =>
    guarded(async () => {
      const context = await contextOf(argv);
      const chain = await readChain(context.dir);
      const current = await withDatabase(context, (db) =>
        currentRevision(db, context.versionTable, context.target),
      );
      const head = chain.at(-1)?.id ?? null;
      const index = chain.findIndex((r) => r.id === current);
      const behind = chain.length - 1 - index;
      const note =
        current !== null && index < 0
          ? ' (not in the migrations folder)'
          : current === head
            ? head === null
              ? ' (no revisions)'
              : ' (head)'
            : ` (${behind} behind head ${head})`;
      out(`${context.target}: ${current ?? 'base'}${note}`);
    }),
};

const historyCommand: CommandModule<CommonArgs, CommonArgs> = {
  command: 'history',
  describe: 'List the revisions, newest first',
  builder: (y) => common(y) as never,
  handler: (argv) =>
    guarded(async () => {
      const context = await contextOf(argv);
      const chain = await readChain(context.dir);
      if (chain.length === 0) {
        out(`${context.target}: no revisions`);
        return;
      }
      const current = await withDatabase(context, (db) =>
        currentRevision(db, context.versionTable, context.target),
      ).catch(() => undefined);
      for (const [i, r] of [...chain.entries()].reverse()) {
        const marks = [i === chain.length - 1 ? 'head' : '', r.id === current ? 'current' : ''].filter(
          Boolean,
        );
        out(
          `${r.parent ?? 'base'} -> ${r.id}${marks.length ? ` (${marks.join(', ')})` : ''}, ${r.message}  [${r.dialect}, ${r.file}]`,
        );
      }
    }),
};

const checkCommand: CommandModule<CommonArgs, CommonArgs & { dialect?: Dialect; exitCode?: number }> = {
  command: 'check',
  describe:
    "Exit non-zero when the schema differs from the head revision of a dialect (for CI): the database's, and every dialect with revisions",
  builder: (y) =>
    common(y).option('dialect', {
      type: 'string',
      choices: [...DIALECTS],
      describe: 'Only this dialect',
    }) as never,
  handler: (argv) =>
    guarded(async () => {
      const context = await contextOf(argv);
      if (argv.dialect && !context.dialects.includes(argv.dialect)) {
        throw new CliError(`the target ${context.target} has no ${dialectName(argv.dialect)} tables`);
      }
      const dialects: Dialect[] = [];
      for (const d of argv.dialect ? [argv.dialect] : context.dialects) {
        if (argv.dialect || d === context.dialect || (await readChain(await context.dirOf(d))).length > 0) {
          dialects.push(d);
        }
      }
      for (const d of dialects) {
        const dir = await context.dirOf(d);
        const result = await checkSchema({ dir, dialect: d, schema: context.schemaOf(d) });
        const label = `${context.target} (${d}, ${shownDir(dir)})`;
        if (result.clean) {
          out(`${label}: the schema matches the head revision ${result.head?.id ?? '(none)'}`);
          continue;
        }
        cliLine(
          'error',
          `${label}: the schema differs from the head revision ${result.head?.id ?? '(none: no revisions yet)'} (${result.statements.length} statement${result.statements.length === 1 ? '' : 's'}); run \`svc migrations revision "<message>" --autogenerate --target-name ${context.target}\``,
        );
        argv.exitCode = 1;
      }
    }),
};

/**
 * `svc migrations …`: schema revisions of a target (SPEC "Command-line interface"). There is no
 * `strip-sqlmodel`: it cleaned up a Python ORM's imports in generated files, and revisions here are plain SQL.
 */
export const migrationsCommand: CommandModule<CommonArgs, CommonArgs> = {
  command: 'migrations <command>',
  describe:
    'Schema migrations of the auth database (revision, upgrade, downgrade, current, history, check, stamp)',
  builder: (y) =>
    y
      .command(revisionCommand as never)
      .command(upgradeCommand as never)
      .command(downgradeCommand as never)
      .command(currentCommand as never)
      .command(historyCommand as never)
      .command(checkCommand as never)
      .command(stampCommand as never)
      .example(
        '$0 migrations revision "add notes" --autogenerate',
        'Write the next revision from the schema, for SQLite and PostgreSQL',
      )
      .example('$0 migrations upgrade', 'Apply the pending revisions of the auth target')
      .example('$0 migrations downgrade -1', 'Revert the last applied revision')
      .example('$0 migrations check', 'Exit 1 when a revision is missing (CI)')
      .demandCommand(1, 'Name a migrations command: svc migrations --help lists them.') as never,
  handler: () => undefined,
};
