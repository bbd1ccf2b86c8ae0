import type { CommandModule } from 'yargs';

/**
 * One `svc` command: its name on the command line, the line the top-level help shows for it (`command` and
 * `describe`, the same strings as the module's: index.test.ts compares them) and the module that defines and
 * runs it.
 */
export interface CommandEntry {
  name: string;
  command: string;
  describe: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- each command has its own argument types
  load(): Promise<CommandModule<any, any>>;
}

/**
 * Every `svc` command, one yargs module per file in this folder. A handler that sets `argv.exitCode`
 * makes the process exit with it. Loaded on demand (docs/performance.md, cold start and "The CLI's start"):
 * `svc serve` imports only serve.ts, not the other commands and what they import; the top-level help, no
 * command and an unknown one import none of them (each module imports @svc/core).
 */
export const commands: CommandEntry[] = [
  {
    name: 'serve',
    command: 'serve',
    describe: 'Start the production server (no reload)',
    load: async () => (await import('./serve.js')).serveCommand,
  },
  {
    name: 'dev',
    command: 'dev',
    describe: 'Start the development server and restart it when a project file changes',
    load: async () => (await import('./dev.js')).devCommand,
  },
  {
    name: 'init',
    command: 'init',
    describe:
      'Set up the project: .env, starter files in a new project, migrations, database upgrade, first superuser (safe to run again)',
    load: async () => (await import('./init.js')).initCommand,
  },
  {
    name: 'migrations',
    command: 'migrations <command>',
    describe:
      'Schema migrations of the auth database (revision, upgrade, downgrade, current, history, check, stamp)',
    load: async () => (await import('./migrations.js')).migrationsCommand,
  },
  {
    name: 'users',
    command: 'users <command>',
    describe:
      'Manage users: create, update, delete, ls, invite, reset-link, reset-mfa, sessions, identities, encrypt-mfa-secrets',
    load: async () => (await import('./users.js')).usersCommand,
  },
  {
    name: 'audit',
    command: 'audit <command>',
    describe: 'Maintain the activity log',
    load: async () => (await import('./audit.js')).auditCommand,
  },
  {
    name: 'permissions',
    command: 'permissions <command>',
    describe: 'Manage permission codenames: sync (from the routers), ls',
    load: async () => (await import('./permissions.js')).permissionsCommand,
  },
  {
    name: 'groups',
    command: 'groups <command>',
    describe: 'Manage groups: create, ls, grant, revoke, add-user, remove-user, delete',
    load: async () => (await import('./groups.js')).groupsCommand,
  },
  // SPEC-3 §2 organizations
  {
    name: 'orgs',
    command: 'orgs <command>',
    describe: 'Manage organizations: list, create, show, add-member, remove-member, set-role, delete',
    load: async () => (await import('./orgs.js')).orgsCommand,
  },
  // SPEC-3 §3 Webhooks
  {
    name: 'webhooks',
    command: 'webhooks <command>',
    describe: 'Manage webhook endpoints: list, create, deliveries, redeliver',
    load: async () => (await import('./webhooks.js')).webhooksCommand,
  },
];

/** Options of the program itself that take a value (they may come before the command). */
const GLOBAL_VALUE_OPTIONS = new Set(['--base-dir', '--baseDir']);

/**
 * The commands to register for `argv`: only the one named when it is a known command. Without one (top-level
 * help, a typo that yargs suggests a command for, no command at all) every command is registered by its help
 * line alone, no module loaded (`loaded` false): yargs then runs no command's builder or handler. A known name
 * further on (after an option of a command, `svc --port 8000 serve`) registers every module, as yargs may run
 * that command.
 */
export async function commandsFor(
  argv: readonly string[],
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- each command has its own argument types
): Promise<{ modules: CommandModule<any, any>[]; loaded: boolean }> {
  let name: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--') break;
    if (GLOBAL_VALUE_OPTIONS.has(arg)) {
      i++;
      continue;
    }
    if (arg.startsWith('-')) continue;
    name = arg;
    break;
  }
  const named = commands.find((command) => command.name === name);
  if (named) return { modules: [await named.load()], loaded: true };
  const end = argv.indexOf('--');
  const words = end < 0 ? argv : argv.slice(0, end);
  if (commands.some((command) => words.includes(command.name))) {
    return { modules: await Promise.all(commands.map((command) => command.load())), loaded: true };
  }
  return {
    modules: commands.map(({ command, describe }) => ({ command, describe, handler: () => undefined })),
    loaded: false,
  };
}
