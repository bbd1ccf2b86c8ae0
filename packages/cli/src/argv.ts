// What main.ts reads from a command line before yargs, without importing @svc/core (docs/performance.md
// "The CLI's start": `svc --help` loads neither the core nor a command module).

/** Options of the program itself that take the project directory (see commands/index.ts). */
const BASE_DIR_OPTIONS = ['--base-dir', '--baseDir'];

/**
 * The `--base-dir` of a command line, read without yargs: a line yargs refuses still names the project whose
 * settings decide the format of the refusal.
 * @example
 * baseDirOfArgv(['serve', '--base-dir', 'api']) // 'api'
 */
export function baseDirOfArgv(argv: readonly string[]): string {
  let baseDir = '.';
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--') break;
    if (BASE_DIR_OPTIONS.includes(arg) && argv[i + 1] !== undefined) baseDir = argv[++i]!;
    else {
      const option = BASE_DIR_OPTIONS.find((name) => arg.startsWith(`${name}=`));
      if (option) baseDir = arg.slice(option.length + 1);
    }
  }
  return baseDir;
}
