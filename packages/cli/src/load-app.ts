import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { App } from '@svc/core';
import { codeFrame, type SourceLocation } from '@svc/core/internal';
import { CliError } from './errors.js';

/** `--app` default: module `main` of the project directory, export `app` (SPEC "Command-line interface"). */
export const DEFAULT_APP_SPEC = 'main:app';

/** Extensions tried, in order, for the module part of `--app` (written without extension). */
export const APP_MODULE_EXTENSIONS = ['.ts', '.js', '.mjs'] as const;

/** What `--app module:export` names, resolved against the project directory. */
export interface AppSpec {
  /** Absolute path of the module file that exists. */
  file: string;
  /** Name of the export holding the app. */
  exportName: string;
}

/**
 * Resolves `--app` (`main:app`: module path relative to `baseDir` without extension, then the export name)
 * to an existing `.ts`, `.js` or `.mjs` file. Throws a {@link CliError} naming what is missing.
 * @example
 * resolveAppSpec('/srv/project', 'main:app') // { file: '/srv/project/main.ts', exportName: 'app' }
 */
export function resolveAppSpec(baseDir: string, spec: string = DEFAULT_APP_SPEC): AppSpec {
  const separator = spec.lastIndexOf(':');
  // A Windows drive letter ("C:\\…") is not an export separator.
  const hasExport = separator > 1 || (separator === 1 && !/^[A-Za-z]:[\\/]/.test(spec));
  const modulePart = hasExport ? spec.slice(0, separator) : spec;
  const exportName = hasExport ? spec.slice(separator + 1) : 'app';
  if (!modulePart || !exportName) {
    throw new CliError(`invalid --app '${spec}': expected <module>:<export>, for example main:app`);
  }
  const base = resolve(baseDir, modulePart);
  const candidates = APP_MODULE_EXTENSIONS.some((ext) => base.endsWith(ext))
    ? [base]
    : APP_MODULE_EXTENSIONS.map((ext) => base + ext);
  const file = candidates.find((candidate) => existsSync(candidate));
  if (!file) {
    const names = candidates.map((candidate) => relative(baseDir, candidate) || candidate).join(', ');
    // A first `svc serve` in an empty folder: the fix is `svc init`, which writes a starter main.ts.
    const fix =
      spec === DEFAULT_APP_SPEC
        ? 'run `svc init` there to start a project (it writes a starter main.ts), or name the project with --base-dir'
        : 'check --app (a module path relative to --base-dir, without extension, then :export)';
    throw new CliError(
      `cannot find the app module: none of ${names} exists in ${resolve(baseDir)} (--app ${spec}); ${fix}`,
    );
  }
  return { file, exportName };
}

let tsxRegistered = false;

/** TypeScript project files load through tsx's ESM loader, registered once per process. */
async function registerTypeScriptLoader(): Promise<void> {
  if (tsxRegistered) return;
  const { register } = await import('tsx/esm/api');
  register();
  tsxRegistered = true;
}

/**
 * The URL of `@svc/core` as the project module `file` imports it (its package's `exports` entry for `import`), or
 * undefined when that cannot be told: no such package near the file, an exports map of another shape.
 */
function projectCoreUrl(file: string): string | undefined {
  try {
    const manifest = createRequire(file).resolve('@svc/core/package.json');
    const { exports } = JSON.parse(readFileSync(manifest, 'utf8')) as { exports?: Record<string, unknown> };
    const entry = exports?.['.'];
    if (typeof entry !== 'object' || entry === null) return undefined;
    for (const [condition, target] of Object.entries(entry)) {
      if (condition !== 'node' && condition !== 'import' && condition !== 'default') continue;
      return typeof target === 'string' ? pathToFileURL(join(dirname(manifest), target)).href : undefined;
    }
    return undefined;
  } catch {
    return undefined;
  }
}

/** An object with the methods the server commands call is taken for an svc app. */
function isApp(value: unknown): value is App {
  const candidate = value as Partial<App> | null;
  return (
    typeof candidate === 'object' &&
    candidate !== null &&
    typeof candidate.init === 'function' &&
    typeof candidate.listen === 'function' &&
    typeof candidate.close === 'function'
  );
}

/** First line of an error message: the CLI prints problems on one line (SPEC "Startup rules"). */
export function firstLine(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.split('\n').find((line) => line.trim() !== '') ?? (error as Error)?.name ?? 'unknown error';
}

/**
 * Imports the project module named by `--app` and returns its app (what `createApp` returned).
 * A missing file, a module that fails to load, a missing export or an export that is not an app is a
 * {@link CliError} with one line.
 * @example
 * const app = await loadApp({ baseDir: '.', spec: 'main:app' });
 */
export async function loadApp(options: { baseDir: string; spec?: string }): Promise<App> {
  const spec = options.spec ?? DEFAULT_APP_SPEC;
  const { file, exportName } = resolveAppSpec(options.baseDir, spec);
  const shown = relative(options.baseDir, file) || file;
  if (file.endsWith('.ts')) {
    // @svc/core (about 600 modules) through Node's own loader before tsx's is registered: tsx's hooks run on a
    // thread of their own, one round trip per module resolved and loaded, and main.ts then finds it loaded
    // (docs/performance.md "The CLI's start"). A failure here is left to the import of main.ts to report.
    const core = projectCoreUrl(file);
    if (core) await import(core).catch(() => undefined);
    await registerTypeScriptLoader();
  }
  let module: Record<string, unknown>;
  try {
    module = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
  } catch (error) {
    if (file.endsWith('.ts') && !isEsmPackage(options.baseDir)) {
      // npm init writes "type": "commonjs": main.ts then compiles to CommonJS, which cannot load @svc/core.
      throw new CliError(
        `cannot load ${shown}: the project is not an ES module package, so ${shown} cannot import @svc/core; run \`npm pkg set type=module\` (${firstLine(error)})`,
      );
    }
    throw new CliError(`cannot load ${shown}: ${describeLoadError(error, file, options.baseDir)}`);
  }
  if (!(exportName in module)) {
    throw new CliError(`${shown} has no export '${exportName}' (--app ${spec})`);
  }
  const app = module[exportName];
  if (!isApp(app)) {
    throw new CliError(
      `export '${exportName}' of ${shown} is not an svc app: create it with createApp() (--app ${spec})`,
    );
  }
  return app;
}

/**
 * Like {@link loadApp}, but a project without an app module yields undefined: commands such as
 * `svc init` and `svc migrations` work before `main.ts` exists (they then use the core modules only).
 */
export async function loadAppIfPresent(options: {
  baseDir: string;
  spec?: string;
}): Promise<App | undefined> {
  try {
    resolveAppSpec(options.baseDir, options.spec ?? DEFAULT_APP_SPEC);
  } catch (error) {
    if (error instanceof CliError && error.message.startsWith('cannot find the app module')) return undefined;
    throw error;
  }
  return loadApp(options);
}

/** A path as the CLI shows it: relative to the project directory when inside it, else absolute. */
function shownPath(file: string, baseDir: string): string {
  const rel = relative(baseDir, file);
  return rel && !rel.startsWith('..') && !isAbsolute(rel) ? rel : file;
}

/** `file:line:column: reason`, then the lines around it with a caret (docs/cli.md "Errors"). */
function withLocation(location: SourceLocation, reason: string, baseDir: string): string {
  const head = `${shownPath(location.file, baseDir)}:${location.line}:${location.column}: ${reason}`;
  let source: string;
  try {
    source = readFileSync(location.file, 'utf8');
  } catch {
    return head;
  }
  return `${head}\n${codeFrame(source, location.line, location.column)}`;
}

/** tsx compiles TypeScript with esbuild: `Transform failed with N error(s):` then `file:line:column: ERROR: reason`. */
const ESBUILD_ERROR = /^(.+?):(\d+):(\d+): ERROR: (.+)$/gm;

/** A stack frame `at … (/path/file.ts:12:5)` or `at file:///path/file.ts:12:5`. */
const STACK_FRAME = /^\s+at (?:.*?\()?((?:file:\/\/)?[^()\s]+?):(\d+):(\d+)\)?$/gm;

/** `node --check` prints `<file>:<line>`, the line, then a caret under the column. */
const NODE_CHECK_HEAD = /^(.+):(\d+)$/;

/**
 * Where a JavaScript module's syntax error is: Node's SyntaxError from `import()` carries no file or line
 * (only its own uncaught-error printer knows them), so `node --check` parses the file again and prints them.
 */
function javaScriptSyntaxLocation(file: string): SourceLocation | undefined {
  const checked = spawnSync(process.execPath, ['--check', file], { encoding: 'utf8', timeout: 10_000 });
  if (checked.status === 0) return undefined;
  const [head, code, caret] = (checked.stderr ?? '').split('\n');
  const match = NODE_CHECK_HEAD.exec(head ?? '');
  if (!match || code === undefined || caret === undefined || !caret.includes('^')) return undefined;
  return { file, line: Number(match[2]), column: caret.indexOf('^') + 1 };
}

/**
 * The reason a project module failed to load, with the place when one is known: a TypeScript syntax error
 * (esbuild's first error, with a count of the others), a JavaScript syntax error in the app module, or an
 * error thrown while the project's code ran (its first stack frame in the project, not in node_modules).
 */
export function describeLoadError(error: unknown, appFile: string, baseDir: string): string {
  const message = error instanceof Error ? error.message : String(error);
  const esbuildErrors = [...message.matchAll(ESBUILD_ERROR)];
  if (esbuildErrors.length > 0) {
    const [, file, line, column, reason] = esbuildErrors[0]!;
    const more = esbuildErrors.length > 1 ? ` (and ${esbuildErrors.length - 1} more)` : '';
    const location = { file: resolve(baseDir, file!), line: Number(line), column: Number(column) + 1 };
    return withLocation(location, `syntax error: ${reason}${more}`, baseDir);
  }
  const name = (error as Error)?.name;
  if (name === 'SyntaxError' && !/\.ts$/.test(appFile)) {
    const location = javaScriptSyntaxLocation(appFile);
    if (location) return withLocation(location, `syntax error: ${message}`, baseDir);
  }
  const stack = (error as Error)?.stack ?? '';
  const projectRoot = resolve(baseDir) + sep;
  for (const [, where, line, column] of stack.matchAll(STACK_FRAME)) {
    const file = where!.startsWith('file://') ? fileURLToPath(where!) : where!;
    if (file.startsWith(projectRoot) && !file.includes(`${sep}node_modules${sep}`) && existsSync(file)) {
      const reason = name && name !== 'Error' ? `${name}: ${firstLine(error)}` : firstLine(error);
      return withLocation({ file, line: Number(line), column: Number(column) }, reason, baseDir);
    }
  }
  return firstLine(error);
}

/** Whether the nearest package.json above `dir` says `"type": "module"`. */
function isEsmPackage(dir: string): boolean {
  for (let current = resolve(dir); ; current = dirname(current)) {
    const manifest = join(current, 'package.json');
    if (existsSync(manifest)) {
      try {
        return (JSON.parse(readFileSync(manifest, 'utf8')) as { type?: string }).type === 'module';
      } catch {
        return false;
      }
    }
    if (dirname(current) === current) return false;
  }
}
