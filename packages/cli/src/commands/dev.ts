import { spawn, type ChildProcess } from 'node:child_process';
import { watch, type FSWatcher } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { createServer } from 'node:net';
import { basename, extname, join, relative, sep } from 'node:path';
import type { CommandModule } from 'yargs';
import { CliError } from '../errors.js';
import { resolveAppSpec } from '../load-app.js';
import { cliLine } from '../output.js';
import { loadProjectSettings, resolveBaseDir } from '../project.js';
import { exitAfterStop, onStopSignals } from '../signals.js';
import {
  checkPortOption,
  cliEntryPath,
  portInUseMessage,
  serveArgvOf,
  settingsOverridesOf,
  trustProxyOf,
  withServerOptions,
  type ServerArgs,
} from './serve.js';

/** SPEC "Command-line interface", `svc dev`: reload on changes of sources, YAML and `.env`. */
export const DEV_WATCHED_EXTENSIONS = ['.ts', '.js', '.mjs', '.yaml', '.yml'] as const;

/** Directories never watched: dependencies, history, build output. */
export const DEV_IGNORED_DIRECTORIES = ['node_modules', '.git', 'dist'] as const;

/** Changes closer together than this restart the server once. */
export const RESTART_DEBOUNCE_MS = 200;

/** A server that has not stopped this long after SIGTERM is killed (App.close grants 10 s to requests). */
const CHILD_STOP_TIMEOUT_MS = 15_000;

/** Whether a change of `file` restarts the dev server (database files such as `auth.db-wal` never do). */
export function isWatchedFile(file: string): boolean {
  const name = basename(file);
  if (name.includes('.db')) return false;
  return name === '.env' || (DEV_WATCHED_EXTENSIONS as readonly string[]).includes(extname(name));
}

function isIgnoredDirectory(name: string): boolean {
  return (DEV_IGNORED_DIRECTORIES as readonly string[]).includes(name);
}

/** A running watch of a project directory. */
export interface ProjectWatcher {
  /** Resolves once every directory present at the start is watched. */
  ready: Promise<void>;
  close(): void;
}

/**
 * Watches `root` and its subdirectories and calls `onChange` with the path of a changed watched file (or of a
 * directory that appeared or vanished). One non-recursive `fs.watch` per directory, so that `node_modules`,
 * `.git` and `dist` are never walked: Node's own recursive mode on Linux descends into all of them.
 */
export function watchProject(root: string, onChange: (path: string) => void): ProjectWatcher {
  const watchers = new Map<string, FSWatcher>();
  let closed = false;

  const unwatchTree = (dir: string) => {
    for (const [path, watcher] of watchers) {
      if (path === dir || path.startsWith(dir + sep)) {
        watcher.close();
        watchers.delete(path);
      }
    }
  };

  const watchTree = async (dir: string): Promise<void> => {
    if (closed || watchers.has(dir)) return;
    let watcher: FSWatcher;
    try {
      watcher = watch(dir, (event, name) => {
        if (!name) return;
        const path = join(dir, name.toString());
        if (isWatchedFile(path)) onChange(path);
        if (event !== 'rename' || isIgnoredDirectory(basename(path))) return;
        stat(path).then(
          (info) => {
            if (info.isDirectory() && !watchers.has(path)) {
              onChange(path);
              void watchTree(path);
            }
          },
          () => {
            if (watchers.has(path)) {
              unwatchTree(path);
              onChange(path);
            }
          },
        );
      });
    } catch {
      return; // vanished or unreadable meanwhile
    }
    watcher.on('error', () => unwatchTree(dir));
    watchers.set(dir, watcher);
    const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
    await Promise.all(
      entries
        .filter((entry) => entry.isDirectory() && !isIgnoredDirectory(entry.name))
        .map((entry) => watchTree(join(dir, entry.name))),
    );
  };

  return {
    ready: watchTree(root),
    close() {
      closed = true;
      unwatchTree(root);
    },
  };
}

/**
 * Refuses a port another program holds before the first server starts: the child would report it and then
 * wait for a file change that cannot help (docs/cli.md "Errors"). Settings that do not load are left to the
 * child, which reports them and restarts once they are fixed.
 */
async function checkPortIsFree(args: ServerArgs, baseDir: string): Promise<void> {
  let host: string;
  let port: number;
  try {
    const settings = loadProjectSettings({
      baseDir,
      overrides: settingsOverridesOf(args),
      overridesSource: 'the command line',
      requireSecretKey: false,
    });
    ({ host, port } = settings);
  } catch {
    return;
  }
  if (port === 0) return;
  const problem = await new Promise<NodeJS.ErrnoException | undefined>((resolvePromise) => {
    const probe = createServer();
    probe.once('error', (error: NodeJS.ErrnoException) => resolvePromise(error));
    probe.listen(port, host, () => probe.close(() => resolvePromise(undefined)));
  });
  if (problem?.code === 'EADDRINUSE') throw new CliError(portInUseMessage(`${host}:${port}`, port));
}

/**
 * Runs `svc serve` (same options, one process) as a child and starts a new one, after the old one stopped
 * gracefully, whenever a watched file changes. Resolves with the exit code after SIGTERM or SIGINT.
 */
async function runDev(args: ServerArgs): Promise<number> {
  const baseDir = resolveBaseDir(args.baseDir);
  const command = [...process.execArgv, cliEntryPath(), ...serveArgvOf(args)];
  let child: ChildProcess | undefined;
  let childExited: Promise<void> = Promise.resolve();
  let stopping = false;
  let timer: NodeJS.Timeout | undefined;
  let queue: Promise<void> = Promise.resolve();
  const expectedExits = new WeakSet<ChildProcess>();

  const startChild = () => {
    const current = spawn(process.execPath, command, { stdio: 'inherit', env: process.env });
    child = current;
    childExited = new Promise((resolvePromise) => {
      current.once('exit', (code, signal) => {
        if (!expectedExits.has(current) && !stopping) {
          const how = signal ? `signal ${signal}` : `code ${code}`;
          cliLine('error', `the server stopped (${how}); waiting for a change to restart it`);
        }
        resolvePromise();
      });
      current.once('error', (error) => {
        cliLine('error', `cannot start the server: ${error.message}`);
        resolvePromise();
      });
    });
  };

  const stopChild = async () => {
    const current = child;
    if (!current || current.exitCode !== null || current.signalCode !== null) return;
    expectedExits.add(current);
    current.kill('SIGTERM');
    const killer = setTimeout(() => current.kill('SIGKILL'), CHILD_STOP_TIMEOUT_MS);
    await childExited;
    clearTimeout(killer);
  };

  // Restarts run one after the other: stop the old server, wait for it, then start the new one.
  const restart = (path: string) => {
    queue = queue.then(async () => {
      if (stopping) return;
      cliLine('info', `${relative(baseDir, path) || path} changed; restarting`);
      await stopChild();
      if (!stopping) startChild();
    });
  };

  const watcher = watchProject(baseDir, (path) => {
    clearTimeout(timer);
    timer = setTimeout(() => restart(path), RESTART_DEBOUNCE_MS);
  });
  await watcher.ready;
  startChild();

  return new Promise((resolvePromise) => {
    onStopSignals(
      () => {
        stopping = true;
        clearTimeout(timer);
        watcher.close();
        void queue.then(stopChild).then(() => resolvePromise(0));
      },
      // A second Ctrl-C: stop waiting for the server's in-flight requests.
      () => {
        child?.kill('SIGKILL');
        process.exit(130);
      },
    );
  });
}

/**
 * `svc dev`: the development server, restarted on changes of `*.ts`, `*.js`, `*.mjs`, `*.yaml`, `*.yml` and
 * `.env` in the project directory. SPEC "Command-line interface".
 * @example
 * svc dev --base-dir . --port 8000
 */
export const devCommand: CommandModule<object, ServerArgs> = {
  command: 'dev',
  describe: 'Start the development server and restart it when a project file changes',
  builder: (yargs) =>
    withServerOptions(yargs)
      .example('$0 dev', 'Serve main.ts and restart when a .ts, .js, .mjs, .yaml, .yml or .env file changes')
      .example('$0 dev --port 9000 --log-level debug', 'Another port, verbose logs'),
  async handler(argv) {
    const baseDir = resolveBaseDir(argv.baseDir);
    const isDirectory = await stat(baseDir).then(
      (info) => info.isDirectory(),
      () => false,
    );
    if (!isDirectory) throw new CliError(`the project directory ${baseDir} does not exist`);
    // Problems the child would only report after a change are refused now.
    resolveAppSpec(baseDir, argv.app);
    trustProxyOf(argv, process.env);
    checkPortOption(argv.port);
    await checkPortIsFree(argv, baseDir);
    exitAfterStop(await runDev(argv));
  },
};
