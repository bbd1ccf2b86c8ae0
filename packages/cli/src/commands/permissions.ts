import * as internal from '@svc/core/internal';
import type { Argv, CommandModule } from 'yargs';
import { CliError } from '../errors.js';
import type { App, AppRuntime } from '@svc/core';
import { DEFAULT_APP_SPEC, firstLine, loadApp } from '../load-app.js';
import { openAuthProject, resolveBaseDir, type loadProjectSettings } from '../project.js';
import { closePrompts } from '../prompts.js';
import { moduleTables } from './users-accounts.js';
import { formatTable } from './users-format.js';

type Settings = ReturnType<typeof loadProjectSettings>;
type Database = Awaited<ReturnType<typeof internal.openDatabase>>;

export interface GlobalArgs {
  baseDir?: string;
  exitCode?: number;
}

// ---------------------------------------------------------------------------------------------------------------
// Project database, shared with `svc groups`

/** The auth database of the project in `--base-dir` with rbac's store on it (no SQL in the CLI). */
export interface RbacProject {
  baseDir: string;
  settings: Settings;
  db: Database;
  tables: internal.CoreTables;
  store: internal.RbacStore;
  /**
   * SPEC-3 §3: `permissions.changed` of the users a command's change reaches, stored in the change's
   * transaction (the standalone outbox); undefined while `webhooks_enabled` is false.
   */
  record: internal.PermissionsRecord | undefined;
}

async function openRbacProject(baseDirOption: string | undefined): Promise<RbacProject> {
  const project = await openAuthProject(baseDirOption, 'permission');
  const outbox = internal.createStandaloneWebhookOutbox(
    project.db,
    project.settings,
    moduleTables<internal.WebhookTables>(project, 'webhooks'),
  );
  return {
    ...project,
    store: internal.createRbacStore(project.db, project.tables),
    record: internal.permissionsRecorder(outbox),
  };
}

/** Runs `fn` on the project's auth database and closes it afterwards. */
export async function withRbacProject<T>(
  argv: GlobalArgs,
  fn: (project: RbacProject) => Promise<T>,
): Promise<T> {
  const project = await openRbacProject(argv.baseDir);
  try {
    return await fn(project);
  } finally {
    closePrompts();
    await project.db.close().catch(() => undefined);
  }
}

/** `a, b and c` for the lines of `svc permissions` and `svc groups`. */
export function listOf(names: readonly string[]): string {
  return names.length <= 1 ? (names[0] ?? '') : `${names.slice(0, -1).join(', ')} and ${names.at(-1)}`;
}

/** `1 permission` / `2 permissions`. */
export function countOf(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}

// ---------------------------------------------------------------------------------------------------------------
// Commands

interface SyncArgs extends GlobalArgs {
  app?: string;
  prune?: boolean;
  dryRun?: boolean;
}

/**
 * The codenames the app's routes declare, with their descriptions: read from the route table the app compiles
 * when it starts (kernel/routes.ts), the one its guard enforces and `GET /admin/permissions/applications`
 * lists, so the routers a module's setup returns count like `createApp({ routers })` (docs/modules.md).
 * Starting the app sets its modules up on the project's databases, then closes it again.
 */
export async function declaredByApp(app: App, baseDir: string): Promise<Map<string, string>> {
  let routes: AppRuntime['routes'];
  try {
    routes = (await app.init({ baseDir, env: process.env })).routes;
  } catch (error) {
    if ((error as Error)?.name === 'ConfigError') throw new CliError((error as Error).message);
    throw new CliError(`cannot start the app to read its routes: ${firstLine(error)}`);
  } finally {
    await app.close().catch(() => undefined);
  }
  return internal.declaredPermissions(routes);
}

/** The declared codenames of the app in `--app`; a codename a column cannot hold is refused. */
async function declaredBy(baseDir: string, spec: string | undefined): Promise<Map<string, string>> {
  const declared = await declaredByApp(await loadApp({ baseDir, spec }), baseDir);
  const problems = [...declared]
    .map(([codename, description]) => internal.declaredPermissionProblem(codename, description))
    .filter((problem): problem is string => problem !== undefined);
  if (problems.length > 0) throw new CliError(`cannot sync: ${problems.join('; ')}`);
  return declared;
}

const syncCommand: CommandModule<GlobalArgs, SyncArgs> = {
  command: 'sync',
  describe: "Create the permission codenames the app's routers declare; report the stored ones none declares",
  builder: (y) =>
    y
      .option('app', {
        type: 'string',
        default: DEFAULT_APP_SPEC,
        describe: 'The app: <module>:<export>, module relative to --base-dir without extension',
      })
      .option('prune', {
        type: 'boolean',
        default: false,
        describe: 'Also delete the stored codenames no router declares (with their group and user links)',
      })
      .option('dry-run', {
        type: 'boolean',
        default: false,
        describe: 'Say what would change and change nothing',
      })
      .example('$0 permissions sync', 'After adding permissions: [...] to a route')
      .example('$0 permissions sync --dry-run --prune', 'What a prune would delete') as Argv<SyncArgs>,
  handler: async (argv) => {
    const baseDir = resolveBaseDir(argv.baseDir);
    const declared = await declaredBy(baseDir, argv.app);
    await withRbacProject(argv, async ({ store, record }) => {
      const result = await internal.syncPermissions(store, declared, {
        prune: Boolean(argv.prune),
        dryRun: Boolean(argv.dryRun),
        ...(record ? { record } : {}),
      });
      const [add, update, remove] = argv.dryRun
        ? ['would add', 'would update', 'would delete']
        : ['added', 'updated', 'deleted'];
      const lines: string[] = [];
      if (result.added.length > 0) {
        const names = listOf(result.added.map((p) => p.codename));
        lines.push(`${add} ${countOf(result.added.length, 'permission')}: ${names}`);
      }
      if (result.described.length > 0) {
        lines.push(`${update} the description of ${listOf(result.described.map((p) => p.codename))}`);
      }
      if (argv.prune && result.undeclared.length > 0) {
        const count = countOf(result.undeclared.length, 'permission');
        lines.push(`${remove} ${count} no router declares: ${listOf(result.undeclared)} (and their links)`);
      }
      if (lines.length === 0) {
        lines.push(`permissions in sync: ${countOf(declared.size, 'codename')} declared, all stored`);
      }
      if (!argv.prune && result.undeclared.length > 0) {
        lines.push(
          `stored but declared by no router: ${listOf(result.undeclared)} (kept; --prune deletes them)`,
        );
      }
      process.stdout.write(lines.map((line) => `${line}\n`).join(''));
    });
  },
};

const lsCommand: CommandModule<GlobalArgs, GlobalArgs> = {
  command: 'ls',
  describe: 'List the stored permissions',
  builder: (y) => y.example('$0 permissions ls', 'Every stored codename with its description'),
  handler: (argv) =>
    withRbacProject(argv, async ({ store }) => {
      const rows = await store.listPermissions();
      if (rows.length === 0) {
        process.stdout.write('no permissions (svc permissions sync creates the ones your routers declare)\n');
        return;
      }
      process.stdout.write(
        formatTable(
          ['CODENAME', 'DESCRIPTION'],
          rows.map((row) => [row.codename, row.description || '-']),
        ),
      );
    }),
};

/** `svc permissions ...` (docs/cli.md "svc permissions"). */
export const permissionsCommand: CommandModule<GlobalArgs, GlobalArgs> = {
  command: 'permissions <command>',
  describe: 'Manage permission codenames: sync (from the routers), ls',
  /* eslint-disable @typescript-eslint/no-explicit-any -- yargs types a command by its own arguments; the parent's builder only passes them on */
  builder: (y) =>
    y
      .command(syncCommand as CommandModule<GlobalArgs, any>)
      .command(lsCommand)
      .example('$0 permissions sync', "Create the codenames the app's routers declare")
      .demandCommand(1, 'Name a permissions command: sync or ls.'),
  /* eslint-enable @typescript-eslint/no-explicit-any */
  handler: () => undefined,
};
