import { spawn, type ChildProcessWithoutNullStreams, type SpawnOptions } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, realpathSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';

/** The repository root and the CLI package directory. */
export const REPO_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const CLI_DIR = join(REPO_DIR, 'packages/cli');

const PACKAGES = ['core', 'migrations', 'cli'];

function newestSource(dir: string, sources = /\.tsx?$/): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestSource(path, sources));
    else if (sources.test(entry.name) && !/\.test\.tsx?$/.test(entry.name)) {
      newest = Math.max(newest, statSync(path).mtimeMs);
    }
  }
  return newest;
}

/**
 * Whether the compiled `packages` are at least as new as their sources (and, with `core`, the admin console's
 * bundle as new as its sources). CI always builds first (the README's test command), so CLI tests run the
 * built program there; during development a stale build falls back to the sources through tsx, which is
 * correct but costs seconds per start.
 */
export function distIsFresh(packages: readonly string[] = PACKAGES): boolean {
  const fresh = packages.every((name) => {
    const info = join(REPO_DIR, 'packages', name, 'dist', '.tsbuildinfo');
    return (
      existsSync(info) && statSync(info).mtimeMs >= newestSource(join(REPO_DIR, 'packages', name, 'src'))
    );
  });
  if (!fresh || !packages.includes('core')) return fresh;
  const bundle = join(REPO_DIR, 'packages', 'core', 'dist', 'console', 'console.js');
  const consoleDir = join(REPO_DIR, 'packages', 'core', 'console');
  return existsSync(bundle) && statSync(bundle).mtimeMs >= newestSource(consoleDir, /\.(tsx?|css|html)$/);
}

let mode: { args: string[]; env: Record<string, string> } | undefined;

/** How to start `svc`: the built `dist/bin.js` when fresh, else `src/bin.ts` through tsx. */
export function cliInvocation(): { args: string[]; env: Record<string, string> } {
  if (mode) return mode;
  if (process.env.SVC_CLI_FROM_SOURCE !== '1' && distIsFresh()) {
    mode = { args: [join(CLI_DIR, 'dist', 'bin.js')], env: {} };
  } else {
    const loader = join(realpathSync(join(CLI_DIR, 'node_modules/tsx')), 'dist/loader.mjs');
    mode = {
      args: ['--import', loader, join(CLI_DIR, 'src', 'bin.ts')],
      // The typecheck config maps @svc/* to their sources, so no build is needed.
      env: { TSX_TSCONFIG_PATH: join(REPO_DIR, 'tsconfig.typecheck.json') },
    };
  }
  return mode;
}

/** The environment of this process without `SVC_*` and proxy settings, so a test states every setting it uses. */
export function cleanEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined && !key.startsWith('SVC_') && key !== 'FORWARDED_ALLOW_IPS') env[key] = value;
  }
  return env;
}

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface RunCliOptions {
  cwd?: string;
  env?: Record<string, string>;
  /** Written to stdin, which is then closed (not a TTY). */
  input?: string;
}

/** Starts `svc <args>` as a child process with piped stdio. */
export function spawnCli(
  args: string[],
  options: RunCliOptions & Omit<SpawnOptions, 'env'> = {},
): ChildProcessWithoutNullStreams {
  const { args: prefix, env } = cliInvocation();
  const { input: _input, env: extraEnv, cwd, ...rest } = options;
  return spawn(process.execPath, [...prefix, ...args], {
    ...rest,
    cwd: cwd ?? REPO_DIR,
    env: { ...cleanEnv(), ...env, ...(extraEnv ?? {}) },
    stdio: 'pipe',
  }) as ChildProcessWithoutNullStreams;
}

/** Runs `svc <args>` to completion. */
export function runCli(args: string[], options: RunCliOptions = {}): Promise<CliResult> {
  return new Promise((resolvePromise, reject) => {
    const child = spawnCli(args, options);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolvePromise({ code: code ?? -1, stdout, stderr }));
    child.stdin.end(options.input ?? '');
  });
}

/** A TCP port free on 127.0.0.1 right now (for a server a test starts). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * `fetch` on a connection of its own (`Connection: close`), for a test that stops its `svc serve` with SIGTERM
 * afterwards: a stopping server goes on answering on the keep-alive connections a client holds idle, until the
 * client closes them or its idle timeout does (docs/deployment.md, up to about 5.5 s); a closed connection
 * leaves it nothing to wait for.
 */
export function fetchClosing(url: string, init: RequestInit = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  headers.set('connection', 'close');
  return fetch(url, { ...init, headers });
}

/**
 * The URL a `svc serve` child prints once it listens (`listening on http://…`, on stdout or stderr); rejects
 * with what it printed when it exits first.
 */
export function listeningUrl(child: ChildProcessWithoutNullStreams): Promise<string> {
  return new Promise<string>((resolveUrl, reject) => {
    let text = '';
    const onData = (d: Buffer) => {
      text += d;
      const match = /listening on (http:\/\/\S+)/.exec(text);
      if (match) resolveUrl(match[1]!);
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('close', () => reject(new Error(`serve exited: ${text}`)));
  });
}

/** A `svc serve` child that {@link serveProject} started. */
export interface ServedProject {
  serve: ChildProcessWithoutNullStreams;
  port: number;
  /** Resolves with the exit code once the process exits. */
  exited: Promise<number | null>;
  /** How it exited, `exited: code …, signal …`; empty while it runs. */
  exit(): string;
  /** What it wrote to stderr so far (its log). */
  stderr(): string;
}

/**
 * `svc serve` of a project written into `dir` (its `main.mjs`, and a `.env` of a fresh `SVC_SECRET_KEY` and the
 * lines `env`) on a free port, once it listens; rejects with what it printed if it exits first. `started`
 * receives the child at once, so that a test's cleanup can kill it whatever happens next.
 */
export async function serveProject(
  dir: string,
  options: { main: string; env: string[]; started?: (serve: ChildProcessWithoutNullStreams) => void },
): Promise<ServedProject> {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'main.mjs'), options.main);
  writeFileSync(
    join(dir, '.env'),
    [`SVC_SECRET_KEY=${randomBytes(24).toString('hex')}`, ...options.env, ''].join('\n'),
  );
  const port = await freePort();
  const serve = spawnCli(['serve', '--base-dir', dir, '--port', String(port)], { cwd: dir });
  options.started?.(serve);
  serve.stdin.end();
  let stderr = '';
  serve.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  let exit = '';
  const exited = new Promise<number | null>((resolveExit) =>
    serve.once('exit', (code, signal) => {
      exit = `exited: code ${code}, signal ${signal}`;
      resolveExit(code);
    }),
  );
  await listeningUrl(serve);
  return { serve, port, exited, exit: () => exit, stderr: () => stderr };
}
