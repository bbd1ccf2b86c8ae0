import type { CommandModule } from 'yargs';

/** One `svc` command: its name on the command line and the module that defines and runs it. */
export interface CommandEntry {
  name: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- each command has its own argument types
  load(): Promise<CommandModule<any, any>>;
}

/**
 * Every `svc` command, one yargs module per file in this folder. A handler that sets `argv.exitCode`
 * makes the process exit with it. Loaded on demand (docs/performance.md, cold start): `svc serve` imports only
 * serve.ts, not the other commands and what they import; `--help` and unknown commands load them all.
 */
export const commands: CommandEntry[] = [
  { name: 'serve', load: async () => (await import('./serve.js')).serveCommand },
  { name: 'dev', load: async () => (await import('./dev.js')).devCommand },
  { name: 'init', load: async () => (await import('./init.js')).initCommand },
  { name: 'migrations', load: async () => (await import('./migrations.js')).migrationsCommand },
  { name: 'users', load: async () => (await import('./users.js')).usersCommand },
  { name: 'audit', load: async () => (await import('./audit.js')).auditCommand },
  { name: 'permissions', load: async () => (await import('./permissions.js')).permissionsCommand },
  { name: 'groups', load: async () => (await import('./groups.js')).groupsCommand },
];

/** Options of the program itself that take a value (they may come before the command). */
const GLOBAL_VALUE_OPTIONS = new Set(['--base-dir', '--baseDir']);

/**
 * The commands to register for `argv`: only the one named when it is a known command, else all of them
 * (top-level help, a typo that yargs suggests a command for, no command at all).
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- each command has its own argument types
export async function commandsFor(argv: readonly string[]): Promise<CommandModule<any, any>[]> {
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
  return Promise.all((named ? [named] : commands).map((command) => command.load()));
}
