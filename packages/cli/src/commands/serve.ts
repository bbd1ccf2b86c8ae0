import cluster, { type Worker } from 'node:cluster';
import { isIP } from 'node:net';
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { App } from '@svc/core';
import { findSettingTypos, settingTypoMessage } from '@svc/core/internal';
import { warnIfBehind } from '@svc/migrations';
import type { Argv, CommandModule } from 'yargs';
import { CliError } from '../errors.js';
import { DEFAULT_APP_SPEC, firstLine, loadApp, resolveAppSpec } from '../load-app.js';
import { cliLine, useLogFormat, type LogFormat } from '../output.js';
import { loadProjectSettings, resolveBaseDir } from '../project.js';
import { exitAfterStop, onStopSignals } from '../signals.js';

/** `--log-level` values (SPEC "Command-line interface", `svc serve`). */
export const SERVER_LOG_LEVELS = ['critical', 'error', 'warning', 'info', 'debug', 'trace'] as const;
export type ServerLogLevel = (typeof SERVER_LOG_LEVELS)[number];

/** Express `trust proxy` names accepted in `--forwarded-allow-ips` besides addresses and subnets. */
const TRUST_PROXY_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal']);

/** SPEC "Command-line interface": `--forwarded-allow-ips` defaults to loopback only. */
const DEFAULT_FORWARDED_ALLOW_IPS = 'loopback';

/** A replacement worker that fails to start is retried after this pause, not in a tight loop. */
const WORKER_RESTART_BACKOFF_MS = 1_000;

/** Options shared by `svc serve` and `svc dev`, as yargs parses them. */
export interface ServerArgs {
  baseDir?: string;
  app?: string;
  host?: string;
  port?: number;
  proxyHeaders?: boolean;
  forwardedAllowIps?: string;
  logLevel?: ServerLogLevel;
  /** Set by the handler: the process exit code (see commands/index.ts). */
  exitCode?: number;
}

/** Options of `svc serve`. */
export interface ServeArgs extends ServerArgs {
  workers?: number;
}

/**
 * Adds the options `svc serve` and `svc dev` share (`--base-dir` is global, see main.ts). No option has a
 * yargs default where the SPEC's priority needs to know whether it was given: host, port and log level
 * fall back to the settings (environment, `.env`, YAML, default).
 */
export function withServerOptions<T>(yargs: Argv<T>): Argv<T & ServerArgs> {
  // Cast below: yargs types each option under its flag ('log-level', 'forwarded-allow-ips'), not under the
  // camelCase name it also sets, which ServerArgs reads; no type of yargs says both.
  return yargs
    .option('app', {
      type: 'string',
      default: DEFAULT_APP_SPEC,
      describe: 'Module (relative to --base-dir, without extension: .ts, .js, .mjs) and export of the app',
    })
    .option('host', { type: 'string', describe: 'Bind address [default: setting host, else 127.0.0.1]' })
    .option('port', { type: 'number', describe: 'Bind port [default: setting port, else 8000]' })
    .option('proxy-headers', {
      type: 'boolean',
      default: true,
      describe: 'Trust X-Forwarded-For and X-Forwarded-Proto from --forwarded-allow-ips',
    })
    .option('forwarded-allow-ips', {
      type: 'string',
      describe:
        'Comma-separated proxy addresses or subnets trusted for proxy headers, or * for all ' +
        '[default: env FORWARDED_ALLOW_IPS, else loopback]',
    })
    .option('log-level', {
      type: 'string',
      choices: SERVER_LOG_LEVELS,
      coerce: (value: unknown) => (typeof value === 'string' ? value.toLowerCase() : value),
      describe: 'Server log level [default: setting log_level, else info]',
    }) as unknown as Argv<T & ServerArgs>;
}

/**
 * Express `trust proxy` value of `--proxy-headers` and `--forwarded-allow-ips`: false without proxy headers,
 * true for `*`, else the list of trusted addresses (SPEC "Command-line interface").
 * @example
 * trustProxyOf({ proxyHeaders: true, forwardedAllowIps: '10.0.0.1, 10.1.0.0/16' }, {}) // ['10.0.0.1', '10.1.0.0/16']
 */
export function trustProxyOf(args: ServerArgs, env: Record<string, string | undefined>): boolean | string[] {
  if (args.proxyHeaders === false) return false;
  const raw = args.forwardedAllowIps ?? env.FORWARDED_ALLOW_IPS ?? DEFAULT_FORWARDED_ALLOW_IPS;
  const entries = raw
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  if (entries.includes('*')) return true;
  if (entries.length === 0) return false;
  for (const entry of entries) {
    const [address, bits, ...rest] = entry.split('/');
    const validBits = bits === undefined || (/^\d{1,3}$/.test(bits) && rest.length === 0);
    if (!TRUST_PROXY_NAMES.has(entry) && !(isIP(address!) !== 0 && validBits)) {
      throw new CliError(
        `invalid --forwarded-allow-ips entry '${entry}': expected an IP address, a subnet, loopback or *`,
        2,
      );
    }
  }
  return entries;
}

/** SPEC "Configuration": `port` is 1 to 65535; `--port` is refused here, naming the option, not the setting. */
export function checkPortOption(port: number | undefined): void {
  if (port === undefined) return;
  if (!Number.isInteger(port) || port < 1 || port > 65535) {
    throw new CliError(`--port must be a whole number from 1 to 65535 (got ${String(port)})`, 2);
  }
}

/** Settings the command line overrides: host and port win over every other source; `--log-level` when given. */
export function settingsOverridesOf(args: ServerArgs): Record<string, unknown> {
  const overrides: Record<string, unknown> = {};
  if (args.host !== undefined) overrides.host = args.host;
  if (args.port !== undefined) overrides.port = args.port;
  // The settings know no TRACE: the most verbose level they have is DEBUG.
  if (args.logLevel !== undefined)
    overrides.log_level = args.logLevel === 'trace' ? 'DEBUG' : args.logLevel.toUpperCase();
  return overrides;
}

/** The `svc serve` command line that starts the same server (cluster workers and `svc dev` children). */
export function serveArgvOf(args: ServerArgs): string[] {
  const argv = ['serve', '--base-dir', resolveBaseDir(args.baseDir), '--app', args.app ?? DEFAULT_APP_SPEC];
  if (args.host !== undefined) argv.push('--host', args.host);
  if (args.port !== undefined) argv.push('--port', String(args.port));
  argv.push(args.proxyHeaders === false ? '--no-proxy-headers' : '--proxy-headers');
  if (args.forwardedAllowIps !== undefined) argv.push('--forwarded-allow-ips', args.forwardedAllowIps);
  if (args.logLevel !== undefined) argv.push('--log-level', args.logLevel);
  return argv;
}

/** Path of the program entry (bin.ts from sources under tsx, bin.js once built). */
export function cliEntryPath(): string {
  const own = fileURLToPath(import.meta.url);
  return fileURLToPath(new URL(`../bin${extname(own)}`, import.meta.url));
}

/**
 * What the CLI says once the server accepts connections: `svc: listening on <url> …` as text, the message of
 * one JSON record with `log_format=json` (see output.ts). Scripts and tests read the address from it.
 */
function listeningMessage(url: string, docsEnabled: boolean): string {
  return docsEnabled ? `listening on ${url} (docs: ${url}/docs)` : `listening on ${url}`;
}

interface StartedServer {
  app: App;
  url: string;
  docsEnabled: boolean;
  logFormat: LogFormat;
}

/**
 * Loads the project's app, initialises it with the command-line settings and starts listening. Every
 * problem is a {@link CliError} with one line (SPEC "Startup rules": never a stack trace).
 */
async function startServer(args: ServerArgs): Promise<StartedServer> {
  const baseDir = resolveBaseDir(args.baseDir);
  const trustProxy = trustProxyOf(args, process.env);
  const app = await loadApp({ baseDir, spec: args.app });
  let runtime;
  try {
    runtime = await app.init({ baseDir, settings: settingsOverridesOf(args), env: process.env });
  } catch (error) {
    await app.close().catch(() => undefined);
    if ((error as Error)?.name === 'ConfigError') throw new CliError((error as Error).message);
    if (/no such table|relation "[^"]+" does not exist/.test(firstLine(error))) {
      throw new CliError(
        `the auth database has no tables yet (${firstLine(error)}): run \`svc init\` or \`svc migrations upgrade\`, or set SVC_AUTO_CREATE_AUTH_SCHEMA=true`,
      );
    }
    throw new CliError(`cannot start the app: ${firstLine(error)}`);
  }
  // SPEC "Startup rules" 5: the CLI's own lines take the format the app logs in (its settings may come from
  // createApp({ settings }) as well as from the environment, .env and svc.yaml).
  useLogFormat(runtime.settings.log_format);
  // SPEC "Versioning" 4: an upgrade of the core must never silently leave the database behind. With
  // several workers the first one says it.
  if (!cluster.isWorker || cluster.worker?.id === 1) {
    warnAboutSettingTypos(baseDir);
    await warnIfBehind(runtime, baseDir);
  }
  try {
    const { url } = await app.listen({ trustProxy });
    return { app, url, docsEnabled: runtime.settings.docs_enabled, logFormat: runtime.settings.log_format };
  } catch (error) {
    await app.close().catch(() => undefined);
    const where = `${runtime.settings.host}:${runtime.settings.port}`;
    const code = (error as NodeJS.ErrnoException)?.code;
    if (code === 'EADDRINUSE') throw new CliError(portInUseMessage(where, runtime.settings.port));
    if (code === 'EACCES') throw new CliError(`cannot listen on ${where}: permission denied`);
    if (code === 'EADDRNOTAVAIL') throw new CliError(`cannot listen on ${where}: address not available`);
    throw new CliError(`cannot listen on ${where}: ${firstLine(error)}`);
  }
}

/**
 * The one line of a port another program holds, with the fix (docs/cli.md "Errors").
 * @example
 * portInUseMessage('127.0.0.1:8000', 8000)
 */
export function portInUseMessage(where: string, port: number): string {
  const other = port > 0 && port < 65535 ? ` --port ${port + 1}` : ' --port';
  return `cannot listen on ${where}: the port is already in use (another server running?); stop it or choose another port with${other} (or SVC_PORT)`;
}

/**
 * SPEC "Configuration" allows unknown keys, so a misspelt setting (`SVC_PROT`, `acess_token_expire_minutes`
 * in svc.yaml) would silently do nothing: say so once at start-up, with the setting it is close to.
 */
function warnAboutSettingTypos(baseDir: string): void {
  for (const typo of findSettingTypos({ baseDir, env: process.env }))
    cliLine('warning', settingTypoMessage(typo));
}

/**
 * Resolves with the exit code once SIGTERM or SIGINT stopped the app gracefully (in-flight requests finish,
 * see App.close). While stopping, a second Ctrl-C exits at once; the copies of the first that parents relay
 * are ignored (`onStopSignals`).
 */
function closeOnSignal(app: App): Promise<number> {
  return new Promise((resolvePromise) => {
    onStopSignals(
      () =>
        app.close().then(
          () => resolvePromise(0),
          (error: unknown) => {
            cliLine('error', `shutdown failed: ${firstLine(error)}`);
            resolvePromise(1);
          },
        ),
      () => process.exit(130),
    );
  });
}

/** One process: start, print the listening line, run until SIGTERM/SIGINT. */
async function serveSingle(args: ServerArgs): Promise<number> {
  const started = await startServer(args);
  cliLine('info', listeningMessage(started.url, started.docsEnabled));
  return exitAfterStop(await closeOnSignal(started.app));
}

/** Messages a cluster worker sends its primary. */
type WorkerMessage =
  | { svc: 'listening'; url: string; docsEnabled: boolean; logFormat: LogFormat }
  | { svc: 'failed'; message: string };

function sendToPrimary(message: WorkerMessage): Promise<void> {
  return new Promise((resolvePromise) => {
    if (!process.send) return resolvePromise();
    process.send(message, undefined, {}, () => resolvePromise());
  });
}

/** A cluster worker: like one process, but reports to the primary instead of printing. */
async function serveWorker(args: ServerArgs): Promise<number> {
  let started: StartedServer;
  try {
    started = await startServer(args);
  } catch (error) {
    // The primary prints the first failure once, instead of one line per worker.
    const message = error instanceof CliError ? error.message : `cannot start the app: ${firstLine(error)}`;
    await sendToPrimary({ svc: 'failed', message });
    process.exit(1);
  }
  await sendToPrimary({
    svc: 'listening',
    url: started.url,
    docsEnabled: started.docsEnabled,
    logFormat: started.logFormat,
  });
  // The primary gone (killed without a chance to stop us) means nobody would ever send SIGTERM.
  process.once('disconnect', () => process.kill(process.pid, 'SIGTERM'));
  const code = await closeOnSignal(started.app);
  process.exit(code);
}

/**
 * The cluster primary: forks `workers` processes that each init and listen on the same port, replaces one
 * that dies unexpectedly, and on SIGTERM/SIGINT stops them all gracefully.
 */
async function servePrimary(args: ServeArgs, workers: number): Promise<number> {
  const baseDir = resolveBaseDir(args.baseDir);
  // Refuse a bad configuration or a missing app module once, here, rather than once per worker.
  const settings = loadProjectSettings({
    baseDir,
    overrides: settingsOverridesOf(args),
    overridesSource: 'the command line',
  });
  // The primary runs no app: its lines follow the project's settings until a worker reports the format its
  // app logs in (SPEC "Startup rules" 5).
  useLogFormat(settings.log_format);
  resolveAppSpec(baseDir, args.app);
  trustProxyOf(args, process.env);

  cluster.setupPrimary({ exec: cliEntryPath(), args: serveArgvOf(args), execArgv: process.execArgv });
  const ready = new Set<number>();
  let announced = false;
  let stopping = false;
  let exitCode = 0;
  let finish!: (code: number) => void;
  const finished = new Promise<number>((resolvePromise) => (finish = resolvePromise));
  const failures = new Map<number, string>();

  const living = () => Object.values(cluster.workers ?? {}).filter((worker): worker is Worker => !!worker);
  const stopAll = (code: number, signal: NodeJS.Signals = 'SIGTERM') => {
    exitCode = Math.max(exitCode, code);
    stopping = true;
    const workersLeft = living().filter((worker) => !worker.isDead());
    if (workersLeft.length === 0) finish(exitCode);
    for (const worker of workersLeft) worker.process.kill(signal);
  };
  const fork = () => {
    const worker = cluster.fork();
    worker.on('message', (message: WorkerMessage) => {
      if (message?.svc === 'failed') failures.set(worker.id, message.message);
      if (message?.svc !== 'listening') return;
      ready.add(worker.id);
      useLogFormat(message.logFormat);
      if (!announced && ready.size >= workers) {
        announced = true;
        cliLine('info', listeningMessage(message.url, message.docsEnabled));
      }
    });
  };

  cluster.on('exit', (worker, code, signal) => {
    const wasReady = ready.delete(worker.id);
    const failure = failures.get(worker.id);
    failures.delete(worker.id);
    if (stopping) {
      if (living().every((other) => other.isDead())) finish(exitCode);
      return;
    }
    const how = signal ? `signal ${signal}` : `code ${code}`;
    if (!announced && !wasReady) {
      // A worker that cannot start now will not start on a retry: stop, with the reason on one line.
      cliLine('error', failure ?? `a worker exited during startup (${how})`);
      stopAll(1);
      return;
    }
    cliLine(
      'error',
      `worker ${worker.process.pid} ${failure ? `failed to start: ${failure}` : `died (${how})`}; starting a new one`,
    );
    if (wasReady) fork();
    else setTimeout(() => !stopping && fork(), WORKER_RESTART_BACKOFF_MS).unref();
  });

  // A second Ctrl-C: do not wait for in-flight requests any longer.
  onStopSignals(
    () => stopAll(0),
    () => stopAll(130, 'SIGKILL'),
  );
  for (let i = 0; i < workers; i += 1) fork();

  const code = await finished;
  return exitAfterStop(code);
}

/**
 * `svc serve`: the production server (no reload). SPEC "Command-line interface".
 * @example
 * svc serve --base-dir . --app main:app --host 0.0.0.0 --port 8000 --workers 4
 */
export const serveCommand: CommandModule<object, ServeArgs> = {
  command: 'serve',
  describe: 'Start the production server (no reload)',
  builder: (yargs) =>
    withServerOptions(yargs)
      .option('workers', {
        type: 'number',
        default: 1,
        describe: 'Worker processes sharing the port (in-process caches are per worker)',
      })
      .example(
        '$0 serve',
        'Serve the app of main.ts on the configured host and port (default 127.0.0.1:8000)',
      )
      .example('$0 serve --host 0.0.0.0 --port 8080 --workers 4', 'Four worker processes on all interfaces')
      .example('$0 serve --forwarded-allow-ips 10.0.0.0/8', 'Trust X-Forwarded-* from proxies in 10.0.0.0/8')
      .example(
        '$0 serve --app src/server:app --log-level warning',
        'Another module and export; quieter logs',
      ),
  async handler(argv) {
    const workers = argv.workers ?? 1;
    if (!Number.isInteger(workers) || workers < 1) {
      throw new CliError(`--workers must be a whole number of at least 1 (got ${String(argv.workers)})`, 2);
    }
    checkPortOption(argv.port);
    if (cluster.isWorker) argv.exitCode = await serveWorker(argv);
    else if (workers > 1) argv.exitCode = await servePrimary(argv, workers);
    else argv.exitCode = await serveSingle(argv);
  },
};
