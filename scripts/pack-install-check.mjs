#!/usr/bin/env node
// Packs @svc/core, @svc/migrations and @svc/cli the way they would be published, installs the tarballs with
// npm into a new project outside the repository, and runs the path a new user takes (docs/getting-started.md):
// `svc init`, `svc serve`, login over HTTP, a protected route, a clean SIGTERM shutdown.
//
//   node scripts/pack-install-check.mjs [--skip-build] [--keep] [--work-dir <empty dir>]
//
// --skip-build   do not run `pnpm build` first (dist/ must be current)
// --keep         leave the temporary directory (tarballs and project) for inspection
// --work-dir     use this directory instead of a new one in os.tmpdir() (it is removed unless --keep)
//
// The installs of the second and third projects (PostgreSQL only, @svc/core alone) run in the background while
// the first project is checked; npm's cache is shared, concurrent use is safe.
//
// Needs the npm registry for the third-party dependencies. better-sqlite3 compiles from source when its
// prebuilt binary cannot be downloaded (about a minute). The last stdout line is a JSON summary
// (`{"ok": true, "tarballs": [...], ...}`) that test/packaging/packaging.test.ts reads.
import { spawn, spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, URLSearchParams } from 'node:url';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const PACKAGES = ['core', 'migrations', 'cli', 'client', 'react']; // dependency order (client: none; react: client)
const ADMIN_PASSWORD = 'packaging-check-correct-horse-battery';
const READER_PASSWORD = 'packaging-check-reader-password';
const STARTUP_TIMEOUT_MS = 60_000;
const SHUTDOWN_TIMEOUT_MS = 20_000;

const args = process.argv.slice(2);
const flag = (name) => args.includes(name);
const valueOf = (name) => {
  const index = args.indexOf(name);
  return index >= 0 ? args[index + 1] : undefined;
};

/** What every tarball must hold and must not hold (docs/getting-started.md "Install"). */
const REQUIRED_FILES = {
  core: [
    'package.json',
    'README.md',
    'dist/index.js',
    'dist/index.d.ts',
    'dist/internal.js',
    'dist/internal.d.ts',
    'dist/testing/index.js',
    'dist/testing/index.d.ts',
    // SPEC-3 §6: the admin console, built ahead of time (packages/core/console/build.mjs).
    'dist/console/index.html',
    'dist/console/console.js',
    'dist/console/console.css',
  ],
  migrations: ['package.json', 'README.md', 'dist/index.js', 'dist/index.d.ts'],
  cli: ['package.json', 'README.md', 'bin/svc.js', 'dist/bin.js', 'dist/index.js', 'dist/index.d.ts'],
  client: ['package.json', 'README.md', 'dist/index.js', 'dist/index.d.ts', 'dist/schema.d.ts'],
  react: ['package.json', 'README.md', 'dist/index.js', 'dist/index.d.ts', 'dist/store.js'],
};
const FORBIDDEN_FILES = [
  [/\.test\.[cm]?[jt]s/, 'a test file'],
  [/-test-helpers\./, 'a test helper (imports jest-only things)'],
  [/\.contract\./, 'a shared test suite'],
  [/\.map$/, 'a source map (sources are not shipped)'],
  [/\.tsbuildinfo$/, 'TypeScript build state'],
  [/^src\//, 'TypeScript sources'],
  [/(^|\/)node_modules\//, 'node_modules'],
  [/(^|\/)\.env$/, 'an .env file'],
];

const MAIN_TS = `import { createApp, defineRouter } from '@svc/core';

const notes = defineRouter({ prefix: '/notes', tags: ['notes'], permissions: ['notes.read'] });
notes.get('/', { summary: 'List notes' }, async () => [{ id: 1, text: 'hello' }]);

const open = defineRouter({ prefix: '/open' });
open.get('/ping', { public: true }, async () => ({ pong: true }));

export const app = createApp({ routers: [notes, open] });
`;

// A strict consumer that type-checks the declarations of what it installs (skipLibCheck off).
const TSCONFIG = {
  compilerOptions: {
    target: 'ES2022',
    module: 'NodeNext',
    moduleResolution: 'NodeNext',
    strict: true,
    skipLibCheck: false,
    noEmit: true,
    types: ['node'],
  },
  include: ['main.ts', 'consumer-types.ts'],
};

// Type-level use of every public entry a project touches (checked by tsc in the project).
const CONSUMER_TYPES_TS = `import type { App, HandlerContext } from '@svc/core';
import { startTestApp, type TestApp } from '@svc/core/testing';
import * as internal from '@svc/core/internal';
import * as migrations from '@svc/migrations';
import * as cli from '@svc/cli';
import { createClient, SvcApiError, type SvcErrorCode, type SvcUser } from '@svc/client';
import { app } from './main.js';

const typed: App = app;
const start: (options: Parameters<typeof startTestApp>[0]) => Promise<TestApp> = startTestApp;
export type Context = HandlerContext;
export { typed, start, internal, migrations, cli };

// The client's typed routes and error codes, as a frontend uses them.
export async function clientUse(): Promise<string> {
  const client = createClient({ baseUrl: 'http://127.0.0.1:8000' });
  const { data } = await client.api.GET('/api/auth/user');
  const me: SvcUser | undefined = data?.data;
  const code: SvcErrorCode = 'auth.invalid_credentials';
  return me?.username ?? (new SvcApiError(401, []).code === code ? code : '');
}
`;

/** The repository's web address, from a manifest's \`repository.url\` (\`git+https://….git\`). */
function repositoryWebUrl(manifest) {
  return String(manifest.repository?.url ?? '')
    .replace(/^git\+/, '')
    .replace(/\.git$/, '');
}

let workDir;
let server;
/** Commands started by {@link runAsync} that have not ended (stopped by cleanup). */
const background = new Set();
let finished = false;

const startedAt = Date.now();

function log(message) {
  const seconds = ((Date.now() - startedAt) / 1000).toFixed(0).padStart(4);
  process.stderr.write(`pack-check ${seconds}s: ${message}\n`);
}

function fail(message) {
  const error = new Error(message);
  error.isCheckFailure = true;
  throw error;
}

/** Runs a command to completion; throws with its output when it fails. */
function run(command, commandArgs, options = {}) {
  const shown = `${command} ${commandArgs.join(' ')}`;
  log(`$ ${shown}${options.cwd ? `   (in ${options.cwd})` : ''}`);
  const result = spawnSync(command, commandArgs, {
    cwd: options.cwd ?? REPO,
    env: { ...process.env, ...options.env },
    input: options.input ?? '',
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
    timeout: options.timeoutMs ?? 10 * 60_000,
  });
  if (result.error) fail(`${shown}: ${result.error.message}`);
  if (result.status !== (options.expectStatus ?? 0)) {
    fail(
      `${shown} exited with ${result.status ?? result.signal}\n--- stdout\n${result.stdout}\n--- stderr\n${result.stderr}`,
    );
  }
  return result;
}

/** Environment of commands run in the project: nothing from the repository's own svc settings leaks in. */
function projectEnv() {
  const env = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (key.startsWith('SVC_') || key === 'FORWARDED_ALLOW_IPS') continue;
    // What pnpm sets for the script that runs us (package, lifecycle), not registry or proxy configuration.
    if (/^npm_(package_|lifecycle_|execpath$|node_execpath$|command$|config_user_agent$)/.test(key)) continue;
    if (key === 'NODE_OPTIONS' || key === 'INIT_CWD' || key === 'PNPM_SCRIPT_SRC_DIR') continue;
    env[key] = value;
  }
  return {
    ...env,
    NO_COLOR: '1',
    npm_config_fund: 'false',
    npm_config_audit: 'false',
    npm_config_update_notifier: 'false',
  };
}

function freePort() {
  return new Promise((resolvePort, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address();
      probe.close(() => resolvePort(port));
    });
  });
}

/** {@link run} without blocking: for an `npm install` that proceeds while other checks run. */
function runAsync(command, commandArgs, options = {}) {
  const shown = `${command} ${commandArgs.join(' ')}`;
  log(`$ ${shown}${options.cwd ? `   (in ${options.cwd}, in the background)` : '   (in the background)'}`);
  return new Promise((resolveRun, rejectRun) => {
    const child = spawn(command, commandArgs, {
      cwd: options.cwd ?? REPO,
      env: { ...process.env, ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    background.add(child);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 10 * 60_000);
    child.once('error', (error) => {
      clearTimeout(timer);
      rejectRun(Object.assign(new Error(`${shown}: ${error.message}`), { isCheckFailure: true }));
    });
    child.once('close', (status, signal) => {
      background.delete(child);
      clearTimeout(timer);
      log(`done: ${shown} (${status ?? signal})`);
      if (status === 0) resolveRun({ status, stdout, stderr });
      else
        rejectRun(
          Object.assign(
            new Error(
              `${shown} exited with ${status ?? signal}\n--- stdout\n${stdout}\n--- stderr\n${stderr}`,
            ),
            { isCheckFailure: true },
          ),
        );
    });
  });
}

/** A new npm project in `dir` (an ES module package) named `name`. */
function newProject(dir, name) {
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, 'package.json'),
    JSON.stringify({ name, version: '1.0.0', private: true, type: 'module' }, null, 2) + '\n',
  );
  return dir;
}

function tarList(tarball) {
  return run('tar', ['tzf', tarball], { cwd: dirname(tarball) })
    .stdout.split('\n')
    .filter(Boolean)
    .map((entry) => entry.replace(/^package\//, ''));
}

function tarPackageJson(tarball) {
  return JSON.parse(
    run('tar', ['xzf', tarball, '-O', 'package/package.json'], { cwd: dirname(tarball) }).stdout,
  );
}

/** Checks one tarball's file list and manifest; returns its summary. */
function checkTarball(name, tarball) {
  const files = tarList(tarball).filter((file) => !file.endsWith('/'));
  const problems = [];
  for (const required of REQUIRED_FILES[name]) {
    if (!files.includes(required)) problems.push(`missing ${required}`);
  }
  for (const file of files) {
    for (const [pattern, what] of FORBIDDEN_FILES) {
      if (pattern.test(file)) problems.push(`${file} is ${what}`);
    }
  }
  const manifest = tarPackageJson(tarball);
  const text = JSON.stringify(manifest);
  if (text.includes('workspace:')) problems.push('package.json still has a workspace: version');
  if (manifest.type !== 'module') problems.push('package.json: type is not module');
  if (!manifest.engines?.node) problems.push('package.json: no engines.node');
  if (!manifest.exports?.['.']?.types || !manifest.exports?.['.']?.import)
    problems.push('package.json: exports "." lacks types/import');
  for (const [entry, target] of Object.entries(manifest.exports ?? {})) {
    for (const file of typeof target === 'string' ? [target] : Object.values(target)) {
      if (!files.includes(file.replace(/^\.\//, '')))
        problems.push(`exports["${entry}"] points at missing ${file}`);
    }
  }
  if (name === 'cli') {
    // The launcher is committed (not built), so that an install in a fresh clone links `svc` before dist/
    // exists; it loads dist/bin.js.
    if (manifest.bin?.svc !== './bin/svc.js') problems.push('package.json: bin.svc is not ./bin/svc.js');
    if (!manifest.dependencies?.tsx) problems.push('package.json: tsx is not a dependency (main.ts loading)');
  }
  for (const [dep, range] of Object.entries(manifest.dependencies ?? {})) {
    if (dep.startsWith('@svc/') && range !== manifest.version)
      problems.push(`dependency ${dep}@${range} is not ${manifest.version}`);
  }
  if (
    manifest.devDependencies &&
    Object.keys(manifest.devDependencies).some((dep) => dep.startsWith('@svc/'))
  ) {
    problems.push('devDependencies name an @svc package');
  }
  if (problems.length) fail(`${name} tarball ${tarball}:\n  - ${problems.join('\n  - ')}`);
  const declarations = files.filter((file) => file.endsWith('.d.ts')).length;
  const javascript = files.filter((file) => file.endsWith('.js')).length;
  return {
    name: manifest.name,
    version: manifest.version,
    file: tarball.split('/').pop(),
    bytes: statSync(tarball).size,
    files: files.length,
    javascript,
    declarations,
    dependencies: manifest.dependencies ?? {},
  };
}

/**
 * One request on a connection of its own (`Connection: close`): the SIGTERMs that stop the servers then find no
 * idle keep-alive connection to wait for (docs/deployment.md: a stop waits up to about 5.5 s for those).
 */
async function request(base, method, path, { token, form, json } = {}) {
  const headers = { connection: 'close' };
  let body;
  if (token) headers.authorization = `Bearer ${token}`;
  if (form) {
    headers['content-type'] = 'application/x-www-form-urlencoded';
    body = new URLSearchParams(form).toString();
  } else if (json) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(json);
  }
  const response = await fetch(base + path, { method, headers, body });
  const text = await response.text();
  let parsed;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = text;
  }
  return { status: response.status, headers: response.headers, body: parsed };
}

function expectStatus(what, response, status) {
  if (response.status !== status) {
    fail(`${what}: expected ${status}, got ${response.status}: ${JSON.stringify(response.body)}`);
  }
}

/** Starts `npx svc serve` in its own process group, collecting its output. */
function startServer(project, port) {
  const child = spawn('npx', ['--no-install', 'svc', 'serve', '--port', String(port)], {
    cwd: project,
    env: projectEnv(),
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true, // own process group: cleanup can stop npx and the node process it started
  });
  const state = { child, output: '', exit: undefined };
  child.stdout.on('data', (chunk) => (state.output += chunk));
  child.stderr.on('data', (chunk) => (state.output += chunk));
  state.exited = new Promise((resolveExit) => {
    child.once('exit', (code, signal) => {
      state.exit = { code, signal };
      resolveExit(state.exit);
    });
  });
  return state;
}

async function waitForLive(base, state) {
  const deadline = Date.now() + STARTUP_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (state.exit) fail(`svc serve exited during startup (${JSON.stringify(state.exit)}):\n${state.output}`);
    try {
      const live = await request(base, 'GET', '/api/health/live');
      if (live.status === 200) return live;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  fail(`svc serve did not answer /api/health/live within ${STARTUP_TIMEOUT_MS / 1000} s:\n${state.output}`);
}

/** The last process of the chain `pid` → child → … (npx → node bin.js), found with `pgrep -P`. */
function leafProcessOf(pid) {
  let current = pid;
  for (let depth = 0; depth < 5; depth += 1) {
    const children = spawnSync('pgrep', ['-P', String(current)], { encoding: 'utf8' })
      .stdout.split('\n')
      .map((line) => Number(line.trim()))
      .filter((child) => Number.isInteger(child) && child > 0);
    if (children.length === 0) return current;
    current = children[0];
  }
  return current;
}

function killServerGroup(signal) {
  if (!server || server.exit) return;
  try {
    process.kill(-server.child.pid, signal);
  } catch {
    // already gone
  }
}

function cleanup() {
  killServerGroup('SIGKILL');
  for (const child of background) child.kill('SIGKILL');
  if (workDir && !flag('--keep') && existsSync(workDir)) rmSync(workDir, { recursive: true, force: true });
}

async function main() {
  const started = Date.now();
  if (!flag('--skip-build')) run('pnpm', ['build']);

  workDir = valueOf('--work-dir')
    ? resolve(valueOf('--work-dir'))
    : mkdtempSync(join(tmpdir(), 'svc-pack-check-'));
  mkdirSync(workDir, { recursive: true });
  if (resolve(workDir).startsWith(REPO + '/')) fail(`--work-dir must be outside the repository (${REPO})`);
  const tarballDir = join(workDir, 'tarballs');
  const project = join(workDir, 'project');
  mkdirSync(tarballDir, { recursive: true });
  mkdirSync(project, { recursive: true });

  // 1. Pack: pnpm rewrites workspace:* to the real versions in the tarball's package.json. One recursive
  //    `pnpm pack` makes the five tarballs `pnpm pack` makes in each package's folder, with one pnpm start.
  const packed = JSON.parse(
    run('pnpm', [
      '--recursive',
      ...PACKAGES.flatMap((name) => ['--filter', `./packages/${name}`]),
      'pack',
      '--pack-destination',
      tarballDir,
      '--json',
    ]).stdout,
  );
  const tarballs = {};
  for (const name of PACKAGES) {
    const { name: packageName } = JSON.parse(
      readFileSync(join(REPO, 'packages', name, 'package.json'), 'utf8'),
    );
    const made = packed.filter((tarball) => tarball.name === packageName);
    if (made.length !== 1 || !existsSync(made[0].filename))
      fail(`pnpm pack of ${name} produced ${made.length} tarballs`);
    tarballs[name] = made[0].filename;
  }
  const summaries = PACKAGES.map((name) => checkTarball(name, tarballs[name]));
  for (const s of summaries)
    log(
      `${s.file}: ${(s.bytes / 1024).toFixed(1)} KiB, ${s.files} files (${s.javascript} .js, ${s.declarations} .d.ts)`,
    );

  // 2. A new project outside the repository, installed from the tarballs with npm.
  const env = projectEnv();
  run('npm', ['init', '-y'], { cwd: project, env });
  const manifestPath = join(project, 'package.json');
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8'));
  manifest.type = 'module';
  // A TypeScript project (step 6 compiles it): its compiler is a development dependency it already lists, so the
  // one `npm install` below brings it with svc instead of a second resolution of the whole tree afterwards.
  manifest.devDependencies = { typescript: '^5', '@types/node': '^20' };
  writeFileSync(manifestPath, JSON.stringify(manifest, null, 2) + '\n');
  // As the README's quick start: svc, and better-sqlite3 for the file database svc init sets up.
  run(
    'npm',
    ['install', '--no-audit', '--no-fund', ...PACKAGES.map((name) => tarballs[name]), 'better-sqlite3'],
    {
      cwd: project,
      env,
      timeoutMs: 15 * 60_000,
    },
  );
  const installedVersion = (pkg) =>
    JSON.parse(readFileSync(join(project, 'node_modules', pkg, 'package.json'), 'utf8')).version;
  for (const s of summaries) {
    if (installedVersion(s.name) !== s.version)
      fail(`${s.name} installed at ${installedVersion(s.name)}, packed ${s.version}`);
  }
  // `npx --no-install svc` below must run the program this install linked, not an `svc` found elsewhere (a
  // global install, a link left by an earlier install): the project's own bin is the installed launcher.
  const linkedBin = join(project, 'node_modules', '.bin', 'svc');
  if (!existsSync(linkedBin)) fail('npm install linked no node_modules/.bin/svc in the project');
  const launcher = join(project, 'node_modules', '@svc', 'cli', 'bin', 'svc.js');
  if (realpathSync(linkedBin) !== realpathSync(launcher))
    fail(`node_modules/.bin/svc points at ${realpathSync(linkedBin)}, not ${launcher}`);
  writeFileSync(join(project, 'main.ts'), MAIN_TS);
  // The installs of steps 7 and 8 (other projects, other directories) go on while this project is checked; the
  // registry's answers are in npm's cache since the install above, so they skip revalidating them.
  const postgresOnlyProject = newProject(join(workDir, 'project-postgres-only'), 'postgres-only');
  const coreOnlyProject = newProject(join(workDir, 'project-core-only'), 'core-only');
  const installs = {
    postgresOnly: runAsync(
      'npm',
      ['install', '--no-audit', '--no-fund', '--prefer-offline', ...PACKAGES.map((name) => tarballs[name])],
      { cwd: postgresOnlyProject, env, timeoutMs: 10 * 60_000 },
    ),
    coreOnly: runAsync('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', tarballs.core], {
      cwd: coreOnlyProject,
      env,
      timeoutMs: 10 * 60_000,
    }),
  };
  // Failures are reported where each is awaited (steps 7 and 8); until then a rejection is not unhandled.
  for (const install of Object.values(installs)) install.catch(() => undefined);

  // 3. Entry points resolve from the installed packages: tsx from @svc/cli, @svc/core/testing for projects' tests.
  run(
    'node',
    [
      '--input-type=module',
      '-e',
      `import { createRequire } from 'node:module';
       const fromCli = createRequire(new URL('./node_modules/@svc/cli/package.json', 'file://' + process.cwd() + '/'));
       fromCli.resolve('tsx/esm/api');
       const core = await import('@svc/core');
       if (typeof core.createApp !== 'function' || typeof core.defineRouter !== 'function') throw new Error('@svc/core lacks createApp');
       const testing = await import('@svc/core/testing');
       if (typeof testing.startTestApp !== 'function' || typeof testing.describeEachDatabase !== 'function') throw new Error('@svc/core/testing lacks startTestApp');
       const internal = await import('@svc/core/internal');
       if (typeof internal !== 'object') throw new Error('no @svc/core/internal');
       const migrations = await import('@svc/migrations');
       if (Object.keys(migrations).length === 0) throw new Error('@svc/migrations exports nothing');
       const cli = await import('@svc/cli');
       if (typeof cli.run !== 'function') throw new Error('@svc/cli lacks run');
       const client = await import('@svc/client');
       if (typeof client.createClient !== 'function') throw new Error('@svc/client lacks createClient');`,
    ],
    { cwd: project, env },
  );
  const help = run('npx', ['--no-install', 'svc', '--help'], { cwd: project, env }).stdout;
  for (const command of ['serve', 'dev', 'init', 'migrations', 'users', 'audit']) {
    if (!help.includes(command)) fail(`svc --help does not list ${command}:\n${help}`);
  }

  // 4. The design promise: init, serve, login, a protected route.
  const init = run(
    'npx',
    ['--no-install', 'svc', 'init', '--username', 'admin', '--password', ADMIN_PASSWORD],
    {
      cwd: project,
      env,
    },
  );
  // The "Docs:" line points into the repository the manifests name, at a path that exists there.
  const docsUrl = /Docs: (\S+)/.exec(init.stdout)?.[1];
  const repositoryUrl = repositoryWebUrl(tarPackageJson(tarballs.core));
  const docsPath = docsUrl?.startsWith(`${repositoryUrl}/tree/main/`)
    ? docsUrl.slice(`${repositoryUrl}/tree/main/`.length)
    : undefined;
  if (!repositoryUrl || !docsPath || !existsSync(join(REPO, docsPath)))
    fail(`svc init's Docs line does not point at the repository's docs (${docsUrl}):\n${init.stdout}`);
  for (const made of ['.env', 'migrations/auth']) {
    if (!existsSync(join(project, made))) fail(`svc init did not create ${made}`);
  }
  run('npx', ['--no-install', 'svc', 'users', 'create', 'reader', '--password', READER_PASSWORD], {
    cwd: project,
    env,
  });

  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  server = startServer(project, port);
  await waitForLive(base, server);
  log(`svc serve answers on ${base}`);

  const login = await request(base, 'POST', '/api/auth/token', {
    form: { username: 'admin', password: ADMIN_PASSWORD },
  });
  expectStatus('POST /api/auth/token (admin)', login, 200);
  const token = login.body?.access_token;
  if (
    typeof token !== 'string' ||
    login.body?.token_type !== 'bearer' ||
    typeof login.body?.refresh_token !== 'string'
  ) {
    fail(`POST /api/auth/token: unexpected body ${JSON.stringify(login.body)}`);
  }
  const me = await request(base, 'GET', '/api/auth/user', { token });
  expectStatus('GET /api/auth/user', me, 200);
  if (me.body?.data?.username !== 'admin' || me.body?.data?.isSuperuser !== true) {
    fail(`GET /api/auth/user: unexpected body ${JSON.stringify(me.body)}`);
  }
  const notes = await request(base, 'GET', '/api/notes', { token });
  expectStatus('GET /api/notes as superuser', notes, 200);
  if (notes.body?.data?.[0]?.text !== 'hello')
    fail(`GET /api/notes: unexpected body ${JSON.stringify(notes.body)}`);

  const anonymous = await request(base, 'GET', '/api/notes');
  expectStatus('GET /api/notes without token', anonymous, 401);
  if (anonymous.body?.detail?.[0]?.code !== 'auth.not_authenticated')
    fail(`401 body: ${JSON.stringify(anonymous.body)}`);
  if (!/^Bearer/.test(anonymous.headers.get('www-authenticate') ?? ''))
    fail('401 without WWW-Authenticate: Bearer');

  const readerLogin = await request(base, 'POST', '/api/auth/token', {
    form: { username: 'reader', password: READER_PASSWORD },
  });
  expectStatus('POST /api/auth/token (reader)', readerLogin, 200);
  const forbidden = await request(base, 'GET', '/api/notes', { token: readerLogin.body.access_token });
  expectStatus('GET /api/notes without notes.read', forbidden, 403);
  const missing = forbidden.body?.detail?.[0];
  if (
    missing?.code !== 'access.permissions_missing' ||
    !missing?.params?.permissions?.includes('notes.read')
  ) {
    fail(`403 body: ${JSON.stringify(forbidden.body)}`);
  }
  const ping = await request(base, 'GET', '/api/open/ping');
  expectStatus('GET /api/open/ping (public)', ping, 200);

  // SPEC-3 §6: the admin console comes with the installed @svc/core, no build step in the project.
  const consolePage = await request(base, 'GET', '/admin/');
  expectStatus('GET /admin/ (admin console)', consolePage, 200);
  if (!String(consolePage.body).includes('/admin/console.js')) fail(`/admin/ page: ${consolePage.body}`);
  expectStatus('GET /admin/console.js', await request(base, 'GET', '/admin/console.js'), 200);

  // @svc/client from its tarball, on Node (docs/client.md): login, the user, a refused login's code.
  const clientCheck = run(
    'node',
    [
      '--input-type=module',
      '-e',
      `import { createClient, SvcApiError } from '@svc/client';
       const client = createClient({ baseUrl: process.argv[1] });
       const step = await client.login('admin', process.argv[2]);
       if (step.status !== 'signed-in') throw new Error('login: ' + JSON.stringify(step));
       const me = await client.user();
       const refused = await createClient({ baseUrl: process.argv[1] }).login('admin', 'wrong-password').catch((e) => e);
       if (!(refused instanceof SvcApiError)) throw new Error('a refused login is no SvcApiError: ' + refused);
       console.log(JSON.stringify({ username: me.username, code: refused.code }));`,
      base,
      ADMIN_PASSWORD,
    ],
    { cwd: project, env },
  );
  const clientResult = JSON.parse(clientCheck.stdout.trim());
  if (clientResult.username !== 'admin' || clientResult.code !== 'auth.invalid_credentials')
    fail(`@svc/client on Node: ${clientCheck.stdout}`);

  // 5. Graceful stop: SIGTERM to the svc process, exit code 0 (npx passes it through). npx itself does not
  //    forward SIGTERM to the program it runs: it would die and leave the server running (see docs/deployment.md).
  const svcPid = leafProcessOf(server.child.pid);
  log(`SIGTERM to the svc process ${svcPid} (started by npx ${server.child.pid})`);
  process.kill(svcPid, 'SIGTERM');
  const exit = await Promise.race([
    server.exited,
    new Promise((r) => setTimeout(() => r('timeout'), SHUTDOWN_TIMEOUT_MS)),
  ]);
  if (exit === 'timeout')
    fail(`svc serve did not stop within ${SHUTDOWN_TIMEOUT_MS / 1000} s of SIGTERM:\n${server.output}`);
  if (exit.code !== 0) fail(`svc serve exited with ${JSON.stringify(exit)} after SIGTERM:\n${server.output}`);

  // 6. The project's TypeScript sees the published types (typescript and @types/node came with the install).
  //    strict, skipLibCheck off: svc's own declarations must compile; other packages' are counted.
  writeFileSync(join(project, 'tsconfig.json'), JSON.stringify(TSCONFIG, null, 2) + '\n');
  writeFileSync(join(project, 'consumer-types.ts'), CONSUMER_TYPES_TS);
  const declarationErrorsElsewhere = consumerCompile(project, env);

  // 7. A PostgreSQL-only install: svc without better-sqlite3 (nothing native compiles); a file database then
  //    fails with a stable code naming the fix, and a PostgreSQL database works.
  const postgresOnly = await checkPostgresOnlyInstall(
    { postgresOnly: postgresOnlyProject, coreOnly: coreOnlyProject },
    installs,
    env,
  );

  finished = true;
  const summary = {
    ok: true,
    seconds: Math.round((Date.now() - started) / 1000),
    workDir: flag('--keep') ? workDir : undefined,
    tarballs: summaries,
    checks: [
      'tarball contents and manifests',
      'npm install of the tarballs',
      'svc bin linked in the project',
      'tsx and public entries resolve',
      'svc --help',
      'svc init',
      'svc users create',
      'svc serve',
      'login',
      'GET /api/auth/user',
      'protected route 200/401/403',
      'public route',
      'admin console at /admin/',
      '@svc/client login and user() on Node',
      'SIGTERM exit 0',
      'tsc on the project (strict, skipLibCheck off)',
      'svc init Docs line',
      'install without better-sqlite3',
      'file database without better-sqlite3: DB_SQLITE_DRIVER_MISSING',
      ...(postgresOnly.postgres
        ? [
            'install without better-sqlite3: svc init, serve and login on PostgreSQL',
            '@svc/core alone: DB_DRIZZLE_KIT_MISSING',
          ]
        : []),
    ],
    declarationErrorsElsewhere,
    postgresOnly,
  };
  process.stdout.write(`${JSON.stringify(summary)}\n`);
}

/**
 * Runs tsc in the consumer project. An error in the project's files or in svc's declarations fails the check;
 * errors inside other packages' declarations (drizzle-orm's need skipLibCheck, as its docs say) are counted
 * per package and returned.
 */
function consumerCompile(project, env) {
  log('$ npx tsc -p .   (strict, skipLibCheck false)');
  const result = spawnSync('npx', ['--no-install', 'tsc', '-p', '.'], {
    cwd: project,
    env,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  const errors = `${result.stdout}\n${result.stderr}`
    .split('\n')
    .filter((line) => /^\S.*\(\d+,\d+\): error TS\d+/.test(line));
  const own = errors.filter(
    (line) => !line.startsWith('node_modules/') || line.startsWith('node_modules/@svc/'),
  );
  if (own.length > 0 || (result.status !== 0 && errors.length === 0))
    fail(
      `tsc in the consumer project reports errors of svc or the project:\n${own.join('\n') || result.stdout}`,
    );
  const elsewhere = {};
  for (const line of errors) {
    const pkg = /^node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(line)[1];
    elsewhere[pkg] = (elsewhere[pkg] ?? 0) + 1;
  }
  log(
    `tsc: no error in svc's declarations or the project; in other packages' own: ${JSON.stringify(elsewhere)}`,
  );
  return elsewhere;
}

/**
 * The second project, the tarballs alone installed (no better-sqlite3): the file and PostgreSQL checks; then the
 * third, @svc/core alone. `installs` are their `npm install`s, started after the first project's.
 */
async function checkPostgresOnlyInstall(projects, installs, env) {
  const project = projects.postgresOnly;
  await installs.postgresOnly;
  if (existsSync(join(project, 'node_modules', 'better-sqlite3')))
    fail('better-sqlite3 was installed without being asked for (it is an optional peer of @svc/core)');
  const refused = run(
    'npx',
    ['--no-install', 'svc', 'init', '--username', 'admin', '--password', ADMIN_PASSWORD],
    {
      cwd: project,
      env,
      expectStatus: 1,
    },
  );
  const said = `${refused.stdout}${refused.stderr}`;
  if (!said.includes('DB_SQLITE_DRIVER_MISSING') || !said.includes('npm install better-sqlite3'))
    fail(`svc init on a file database without better-sqlite3 did not name the fix:\n${said}`);
  if (/\n\s+at /.test(said)) fail(`svc init printed a stack trace:\n${said}`);

  const adminUrl = process.env.SVC_TEST_POSTGRES_URL;
  if (!adminUrl) {
    log('SVC_TEST_POSTGRES_URL is not set: the PostgreSQL-only install is not started on PostgreSQL');
    await installs.coreOnly.catch(() => undefined); // not checked without PostgreSQL
    return { fileDatabaseError: 'DB_SQLITE_DRIVER_MISSING', postgres: false };
  }
  // A fresh database next to the test server's, made with the project's own postgres client.
  const name = `svc_pack_${Date.now().toString(36)}`;
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const sqlIn = (statement) =>
    run(
      'node',
      [
        '--input-type=module',
        '-e',
        `import postgres from 'postgres';
         const sql = postgres(${JSON.stringify(adminUrl)}, { max: 1, onnotice: () => undefined });
         try { await sql.unsafe(${JSON.stringify(statement)}); } finally { await sql.end(); }`,
      ],
      { cwd: project, env },
    );
  // What the refused run wrote (.env with the file URL, starter files) goes: init never overwrites .env values.
  for (const entry of readdirSync(project)) {
    if (!['package.json', 'package-lock.json', 'node_modules'].includes(entry))
      rmSync(join(project, entry), { recursive: true, force: true });
  }
  sqlIn(`CREATE DATABASE "${name}"`);
  try {
    run(
      'npx',
      [
        '--no-install',
        'svc',
        'init',
        '--username',
        'admin',
        '--password',
        ADMIN_PASSWORD,
        '--database-url',
        url.href,
      ],
      { cwd: project, env },
    );
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    server = startServer(project, port);
    await waitForLive(base, server);
    const login = await request(base, 'POST', '/api/auth/token', {
      form: { username: 'admin', password: ADMIN_PASSWORD },
    });
    expectStatus('POST /api/auth/token on PostgreSQL without better-sqlite3', login, 200);
    const me = await request(base, 'GET', '/api/auth/user', { token: login.body.access_token });
    expectStatus('GET /api/auth/user on PostgreSQL without better-sqlite3', me, 200);
    killServerGroup('SIGTERM');
    await Promise.race([server.exited, new Promise((r) => setTimeout(r, SHUTDOWN_TIMEOUT_MS))]);
    killServerGroup('SIGKILL');
  } finally {
    sqlIn(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  }

  // @svc/core alone has no drizzle-kit (an optional peer): creating tables without revisions names the fix.
  const coreOnly = projects.coreOnly;
  await installs.coreOnly;
  if (existsSync(join(coreOnly, 'node_modules', 'drizzle-kit')))
    fail('drizzle-kit was installed with @svc/core alone (it is an optional peer)');
  const bare = `svc_pack_core_${Date.now().toString(36)}`;
  const bareUrl = new URL(adminUrl);
  bareUrl.pathname = `/${bare}`;
  sqlIn(`CREATE DATABASE "${bare}"`);
  let drizzleKitError;
  try {
    const started = run(
      'node',
      [
        '--input-type=module',
        '-e',
        `import { createApp } from '@svc/core';
         const app = createApp({ settings: { secret_key: 'x'.repeat(40), auth_database_url: ${JSON.stringify(bareUrl.href)}, auto_create_auth_schema: true, log_level: 'CRITICAL' } });
         try { await app.init({ env: {} }); console.log(JSON.stringify({ started: true })); }
         catch (error) { console.log(JSON.stringify({ code: error.code, name: error.name, message: error.message })); }
         finally { await app.close().catch(() => undefined); }`,
      ],
      { cwd: coreOnly, env },
    );
    drizzleKitError = JSON.parse(started.stdout.trim().split('\n').pop());
  } finally {
    sqlIn(`DROP DATABASE IF EXISTS "${bare}" WITH (FORCE)`);
  }
  if (
    drizzleKitError.code !== 'DB_DRIZZLE_KIT_MISSING' ||
    drizzleKitError.name !== 'ConfigError' ||
    !drizzleKitError.message.includes('npm install --save-dev drizzle-kit')
  )
    fail(`@svc/core without drizzle-kit, auto_create_auth_schema: ${JSON.stringify(drizzleKitError)}`);
  return {
    fileDatabaseError: 'DB_SQLITE_DRIVER_MISSING',
    postgres: true,
    drizzleKitError: drizzleKitError.code,
  };
}

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    cleanup();
    process.exit(130);
  });
}

main()
  .catch((error) => {
    process.stderr.write(`pack-check: FAILED: ${error.isCheckFailure ? error.message : error.stack}\n`);
    if (server?.output && !finished) process.stderr.write(`--- svc serve output\n${server.output}\n`);
    process.exitCode = 1;
  })
  .finally(cleanup);
