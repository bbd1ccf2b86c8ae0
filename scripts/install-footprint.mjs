#!/usr/bin/env node
// What the README's "Quick start in a new project" costs a new user: packs @svc/core, @svc/migrations and
// @svc/cli as they would be published, runs `npm install` of the tarballs in an empty project outside the
// repository with an empty npm cache (a cold install), and reports the size of node_modules, the number of
// packages installed and the time it took (and how much of it better-sqlite3's install script took).
// The quick start installs better-sqlite3 beside the tarballs (the file database's driver, an optional peer).
//
//   node scripts/install-footprint.mjs [--postgres-only] [--warm] [--keep]
//
// --postgres-only   install the tarballs alone, as a PostgreSQL-only project does (no better-sqlite3)
// --warm            reuse the user's npm cache instead of an empty one
// --keep            leave the temporary directory
//
// Uses the current packages/*/dist (run `pnpm build` first). The last stdout line is a JSON summary.
import { spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  readFileSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const PACKAGES = ['core', 'migrations', 'cli'];
const args = process.argv.slice(2);

function run(command, commandArgs, options = {}) {
  const result = spawnSync(command, commandArgs, {
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
    timeout: 20 * 60_000,
    ...options,
  });
  if (result.status !== 0) {
    throw new Error(`${command} ${commandArgs.join(' ')} failed:\n${result.stdout}\n${result.stderr}`);
  }
  return result;
}

/** Disk usage of a tree in MiB, as `du -sh` shows it. */
function diskMebibytes(path) {
  const kib = Number(run('du', ['-sk', path]).stdout.split('\t')[0]);
  return Math.round((kib / 1024) * 10) / 10;
}

/** Package folders under a node_modules folder, nested node_modules included (what npm calls packages). */
function packageCount(nodeModules) {
  if (!existsSync(nodeModules)) return 0;
  let count = 0;
  for (const entry of readdirSync(nodeModules)) {
    if (entry.startsWith('.')) continue;
    const path = join(nodeModules, entry);
    const names = entry.startsWith('@') ? readdirSync(path).map((name) => join(path, name)) : [path];
    for (const name of names) {
      if (!existsSync(join(name, 'package.json'))) continue;
      count += 1 + packageCount(join(name, 'node_modules'));
    }
  }
  return count;
}

const workDir = mkdtempSync(join(tmpdir(), 'svc-footprint-'));
try {
  const tarballs = join(workDir, 'tarballs');
  const project = join(workDir, 'project');
  mkdirSync(tarballs);
  mkdirSync(project);
  for (const name of PACKAGES) {
    run('npx', ['--yes', 'pnpm@10', 'pack', '--pack-destination', tarballs], {
      cwd: join(REPO, 'packages', name),
    });
  }
  writeFileSync(
    join(project, 'package.json'),
    JSON.stringify({ name: 'quick-start', version: '1.0.0', private: true, type: 'module' }, null, 2) + '\n',
  );
  const env = { ...process.env, npm_config_fund: 'false', npm_config_audit: 'false' };
  if (!args.includes('--warm')) env.npm_config_cache = join(workDir, 'npm-cache');
  // npm's debug log (in logs-dir) has each install script's duration.
  env.npm_config_logs_dir = join(workDir, 'npm-logs');
  const installArgs = ['install', '--timing'];
  const tgz = readdirSync(tarballs).map((file) => join(tarballs, file));
  if (!args.includes('--postgres-only')) tgz.push('better-sqlite3');
  const started = Date.now();
  const install = run('npm', [...installArgs, ...tgz], { cwd: project, env });
  const seconds = (Date.now() - started) / 1000;
  const output = `${install.stdout}\n${install.stderr}`;
  const logs = readdirSync(env.npm_config_logs_dir)
    .filter((file) => file.endsWith('-debug-0.log'))
    .map((file) => readFileSync(join(env.npm_config_logs_dir, file), 'utf8'))
    .join('\n');
  const scriptMs = /timing build:run:install:node_modules\/better-sqlite3 Completed in (\d+)ms/.exec(logs);
  const nodeModules = join(project, 'node_modules');
  const summary = {
    postgresOnly: args.includes('--postgres-only'),
    coldCache: !args.includes('--warm'),
    mebibytes: diskMebibytes(nodeModules),
    packages: packageCount(nodeModules),
    seconds: Math.round(seconds),
    betterSqlite3Installed: existsSync(join(nodeModules, 'better-sqlite3', 'package.json')),
    betterSqlite3ScriptSeconds: scriptMs ? Math.round(Number(scriptMs[1]) / 1000) : null,
    drizzleKitInstalled: existsSync(join(nodeModules, 'drizzle-kit', 'package.json')),
    npmSays: (/added \d+ packages[^\n]*/.exec(output) ?? [''])[0],
  };
  process.stdout.write(`${JSON.stringify(summary)}\n`);
} finally {
  if (args.includes('--keep')) process.stderr.write(`kept ${workDir}\n`);
  else rmSync(workDir, { recursive: true, force: true });
}
