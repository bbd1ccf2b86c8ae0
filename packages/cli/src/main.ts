import yargs from 'yargs';
import { baseDirOfArgv } from './argv.js';
import { commandsFor } from './commands/index.js';
import { CliError } from './errors.js';

/**
 * Runs the `svc` program with `argv` and resolves to the exit code. Problems the user can fix are printed as
 * one line on stderr (never a stack trace), in the project's `log_format` (see output.ts).
 */
export async function run(argv: string[]): Promise<number> {
  let exitCode = 0;
  const baseDir = baseDirOfArgv(argv);
  // output.ts (the CLI's lines in the project's log_format) imports @svc/core: loaded when a command module
  // is, or when a line is written, not for the top-level help (docs/performance.md "The CLI's start").
  const output = async () => {
    const loaded = await import('./output.js');
    loaded.useProjectDir(baseDir);
    return loaded;
  };
  const parser = yargs(argv)
    .scriptName('svc')
    .usage('$0 <command> [options]')
    .option('base-dir', {
      type: 'string',
      default: '.',
      describe: 'Project directory (.env, svc.yaml, main.*)',
    })
    .strict()
    .demandCommand(1, 'Name a command: svc --help lists them.')
    .recommendCommands()
    .example('$0 init --username admin', 'Set the project up: .env, migrations, first superuser')
    .example('$0 serve --port 8000', 'Production server for the app of main.ts')
    .example('$0 <command> --help', 'Options and examples of a command')
    .help()
    .alias('h', 'help')
    .version(false)
    .wrap(Math.min(110, process.stdout.columns || 100))
    .fail((message, error) => {
      // yargs spreads some messages (invalid choices) over lines: the CLI prints problems on one line.
      throw error ?? new CliError((message ?? 'invalid command line').replace(/\s*\n\s*/g, ' '), 2);
    });
  const { modules, loaded } = await commandsFor(argv);
  if (loaded) await output();
  for (const command of modules) parser.command(command as never);
  try {
    const result = (await parser.parseAsync()) as { exitCode?: number };
    exitCode = typeof result.exitCode === 'number' ? result.exitCode : 0;
  } catch (error) {
    const { cliLine } = await output();
    if (error instanceof CliError) {
      cliLine('error', error.message);
      return error.exitCode;
    }
    const name = (error as Error)?.name;
    if (name === 'ConfigError') {
      cliLine('error', (error as Error).message);
      return 1;
    }
    const { firstLine } = await import('./load-app.js');
    cliLine('error', `unexpected error: ${firstLine(error)}`, error);
    return 1;
  }
  return exitCode;
}
