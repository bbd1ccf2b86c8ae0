// docs/performance.md "Benchmark suite": a throw-away copy of the demo project inside the repository (bench/.tmp/, gitignored) so that
// `@svc/core` resolves to the workspace build, initialised with `svc init`, and `svc serve` child processes on it.
import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { copyFileSync, cpSync, existsSync, mkdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath, URLSearchParams } from 'node:url';
import { promisify } from 'node:util';
import { sleep } from './stats.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
export const ROOT = join(HERE, '..', '..');
export const TMP = join(ROOT, 'bench', '.tmp');
export const SVC_BIN = join(ROOT, 'packages', 'cli', 'dist', 'bin.js');
const DEMO = join(ROOT, 'examples', 'demo');

export const ADMIN = { username: 'admin', password: 'bench-admin-password-1' };

/** A free loopback port (bound then released). */
export function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/** bench/.tmp/node_modules/@svc/core -> packages/core: a project in bench/.tmp/ imports '@svc/core' like the demo does. */
export function ensureCoreLink() {
  const link = join(TMP, 'node_modules', '@svc', 'core');
  if (!existsSync(link)) {
    mkdirSync(dirname(link), { recursive: true });
    symlinkSync(join('..', '..', '..', '..', 'packages', 'core'), link, 'dir');
  }
}

/**
 * Copies the demo (main.ts, svc.yaml, package.json) to bench/.tmp/<random>/ and runs `svc init` there
 * (migrations, .env with a fresh secret, the superuser). `databaseUrl` picks PostgreSQL; the file database
 * otherwise.
 */
export async function createProject({ databaseUrl, freshMigrations = true } = {}) {
  ensureCoreLink();
  const dir = join(TMP, `run-${randomBytes(4).toString('hex')}`);
  mkdirSync(dir, { recursive: true });
  for (const f of ['main.ts', 'svc.yaml', 'package.json']) copyFileSync(join(DEMO, f), join(dir, f));
  // The demo's revisions are written for its file database; on PostgreSQL `svc init` writes the auth ones
  // and the demo's own target gets a revision below.
  // `freshMigrations` (the default): revisions written from the tables of this checkout, so that a table or
  // an index added since the demo's last committed revision is there (the bench measures this checkout; a
  // server refuses to start on a schema it does not match). `false` takes the demo's committed ones.
  if (!databaseUrl && !freshMigrations && existsSync(join(DEMO, 'migrations')))
    cpSync(join(DEMO, 'migrations'), join(dir, 'migrations'), { recursive: true });
  const svc = (...args) =>
    promisify(execFile)(process.execPath, [SVC_BIN, ...args, '--base-dir', dir], {
      cwd: dir,
      env: cleanEnv(),
    });
  const init = ['init', '--username', ADMIN.username, '--password', ADMIN.password];
  if (databaseUrl) init.push('--database-url', databaseUrl);
  await svc(...init);
  // The demo's own tables: the targets its setup script upgrades (a revision is written first when the
  // copy has none, as on a clean clone before one is committed).
  // (Read from every script: the demo's `start` runs them since bda298a, an older demo had a `setup` script.)
  const scripts = JSON.parse(readFileSync(join(DEMO, 'package.json'), 'utf8')).scripts ?? {};
  const setup = [
    ...new Set(
      Object.values(scripts)
        .join(' && ')
        .split(/\s*&&\s*/),
    ),
  ].join(' && ');
  for (const [, target] of setup.matchAll(/svc migrations upgrade --target-name (\S+)/g)) {
    if (!existsSync(join(dir, 'migrations', target))) {
      await svc('migrations', 'revision', `${target} tables`, '--autogenerate', '--target-name', target);
    }
    await svc('migrations', 'upgrade', '--target-name', target);
  }
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** The environment without any SVC_ setting of the caller (the project's .env and svc.yaml decide). */
export function cleanEnv(extra = {}) {
  const env = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('SVC_')) env[k] = v;
  return { ...env, ...extra };
}

/** The auth database URL `svc init` wrote to the project's .env. */
export function projectDatabaseUrl(dir) {
  const line = readFileSync(join(dir, '.env'), 'utf8')
    .split('\n')
    .find((l) => l.startsWith('SVC_AUTH_DATABASE_URL='));
  const url = line.slice('SVC_AUTH_DATABASE_URL='.length).trim();
  return url.startsWith('file:') ? join(dir, url.slice('file:'.length)) : url;
}

/**
 * Starts `svc serve` on a free loopback port with `settings` as SVC_* variables; resolves once
 * `/api/health/live` answers 200, with the time from spawn to that first answer (cold start).
 */
export async function startServe(dir, settings = {}, { nodeOptions = [], deadlineMs = 60_000 } = {}) {
  const port = await freePort();
  const env = cleanEnv({ SVC_LOG_LEVEL: 'WARNING' });
  for (const [k, v] of Object.entries(settings)) env[`SVC_${k.toUpperCase()}`] = String(v);
  const started = process.hrtime.bigint();
  const child = spawn(
    process.execPath,
    [...nodeOptions, SVC_BIN, 'serve', '--base-dir', dir, '--host', '127.0.0.1', '--port', String(port)],
    { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  // Keep the start of the output (errors at start-up, the inspector URL); a log collector would read the rest.
  const keep = (d) => {
    if (output.length < 65_536) output += d;
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  const base = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + deadlineMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`svc serve exited with ${child.exitCode}:\n${output}`);
    if (Date.now() > deadline) {
      child.kill();
      throw new Error(`svc serve did not answer within ${deadlineMs / 1000} s:\n${output}`);
    }
    try {
      // Connection: close: the poll leaves no idle keep-alive connection, which a stop right after (the cold
      // start rows) would wait for (docs/deployment.md: a stopping server answers on those until they close).
      const res = await fetch(`${base}/api/health/live`, { headers: { connection: 'close' } });
      if (res.status === 200) break;
    } catch {
      // not listening yet
    }
    await sleep(5);
  }
  const coldStartMs = Number(process.hrtime.bigint() - started) / 1e6;
  return {
    child,
    pid: child.pid,
    port,
    base,
    coldStartMs,
    output: () => output,
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', resolve);
        child.kill('SIGTERM');
        setTimeout(() => child.kill('SIGKILL'), 5000).unref();
      }),
  };
}

/** JSON request against a server; returns `{status, body}` with the envelope's `data` unwrapped. */
export async function call(base, method, path, { token, json, form } = {}) {
  const headers = {};
  if (token) headers.authorization = `Bearer ${token}`;
  let body;
  if (json !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(json);
  } else if (form !== undefined) {
    headers['content-type'] = 'application/x-www-form-urlencoded';
    body = new URLSearchParams(form).toString();
  }
  const res = await fetch(`${base}${path}`, { method, headers, body });
  const text = await res.text();
  let parsed = text ? JSON.parse(text) : null;
  if (parsed && typeof parsed === 'object' && 'success' in parsed && 'data' in parsed) parsed = parsed.data;
  if (res.status >= 400) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return { status: res.status, body: parsed };
}

export async function login(base, user) {
  return (await call(base, 'POST', '/api/auth/token', { form: user })).body;
}

export const READER = { username: 'bench-reader', password: 'bench-reader-password-1' };

/**
 * Registers READER (not a superuser: the permission check really runs) and gives it `notes.read` and
 * `notes.write` through a group, as a project would.
 */
export async function seedReader(base) {
  const admin = (await login(base, ADMIN)).access_token;
  const user = (await call(base, 'POST', '/api/auth/register', { json: READER })).body;
  const permissionIds = [];
  for (const codename of ['notes.read', 'notes.write']) {
    const created = await call(base, 'POST', '/api/admin/permissions/permissions', {
      token: admin,
      json: { codename },
    });
    permissionIds.push(created.body.id);
  }
  const group = (
    await call(base, 'POST', '/api/admin/permissions/groups', {
      token: admin,
      json: { name: 'bench-notes', permissionIds },
    })
  ).body;
  await call(base, 'PUT', `/api/admin/permissions/users/${user.id}/groups`, {
    token: admin,
    json: { groupIds: [group.id] },
  });
  // One note to list and to archive (the demo keeps its notes in a table of the main database).
  const token = (await login(base, READER)).access_token;
  const note = (await call(base, 'POST', '/api/notes/', { token, json: { text: 'bench note' } })).body;
  return { ...user, noteId: note.id };
}

/** `count` plain users for the login scenario (`bench-login-<n>`). */
export async function seedLoginUsers(base, count) {
  const users = Array.from({ length: count }, (_, i) => ({
    username: `bench-login-${i}`,
    password: `bench-login-password-${i}`,
  }));
  for (const u of users) await call(base, 'POST', '/api/auth/register', { json: u });
  return users;
}
