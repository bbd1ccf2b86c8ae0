#!/usr/bin/env node
// docs/performance.md "The CLI's start": how long a `svc` call takes from spawn to exit (to the first 200 of
// /api/health/live for `svc serve`), beside a bare `node` start and `node` importing yargs, in the same run.
//
//   pnpm bench --cli [--runs N] [--against <bin.js>] [--out <file>]     (node bench/cli-start.mjs …)
//
// --against measures a second build of the CLI in the same run (a copy of packages/cli/dist made before a
// change, say packages/cli/dist-before/bin.js): before and after then share the machine's load. Every round
// spawns every target once, in another fixed shuffle per round, one process at a time; medians are quoted, with
// the ratio to the bare `node` start of the same run. The project is made by `svc init` in an empty folder of
// bench/.tmp/ (the starter main.ts, the file database), as a new user's would be.
import { spawn } from 'node:child_process';
import { mkdirSync, realpathSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ADMIN, ROOT, SVC_BIN, TMP, cleanEnv, ensureCoreLink, freePort } from './lib/project.mjs';
import { fmtMs, median, sleep, table } from './lib/stats.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const CLI_DIR = join(ROOT, 'packages', 'cli');

/** The targets (docs/performance.md "The CLI's start"), in ms. */
const TARGETS = { help: 300, users: 1000, serve: 1500 };

const LABELS = {
  node: 'baseline: node -e ""',
  yargs: "baseline: node, import('yargs')",
  core: "baseline: node, import('@svc/core')",
  help: 'svc --help',
  users: 'svc users ls',
  check: 'svc migrations check',
  serve: 'svc serve to the first 200 of /api/health/live',
};

/** The value after `flag` in `argv`, or `fallback`. */
function option(argv, flag, fallback) {
  const i = argv.indexOf(flag);
  return i >= 0 && argv[i + 1] !== undefined ? argv[i + 1] : fallback;
}

/** Milliseconds from spawn to exit; throws when the process fails (a broken target is no figure). */
function timeExit(args, { cwd, env }) {
  return new Promise((done, fail) => {
    const started = process.hrtime.bigint();
    const child = spawn(process.execPath, args, { cwd, env, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', fail);
    child.on('close', (code) => {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      if (code === 0) done(ms);
      else fail(new Error(`node ${args.join(' ')} exited with ${code}: ${stderr.trim()}`));
    });
  });
}

/** Milliseconds from spawning `svc serve` to the first 200 of /api/health/live (polled every 5 ms). */
async function timeServe(bin, dir) {
  const port = await freePort();
  const env = { ...cleanEnv(), SVC_LOG_LEVEL: 'WARNING' };
  const started = process.hrtime.bigint();
  const child = spawn(
    process.execPath,
    [bin, 'serve', '--base-dir', dir, '--host', '127.0.0.1', '--port', String(port)],
    { cwd: dir, env, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  const deadline = Date.now() + 60_000;
  try {
    for (;;) {
      if (child.exitCode !== null)
        throw new Error(`svc serve exited with ${child.exitCode}: ${stderr.trim()}`);
      if (Date.now() > deadline) throw new Error(`svc serve did not answer within 60 s: ${stderr.trim()}`);
      try {
        if ((await fetch(`http://127.0.0.1:${port}/api/health/live`)).status === 200) break;
      } catch {
        // not listening yet
      }
      await sleep(5);
    }
    return Number(process.hrtime.bigint() - started) / 1e6;
  } finally {
    if (child.exitCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    }
  }
}

/** A fixed shuffle of `items` for round `round` (the same plan in every run, another order per round). */
function shuffled(items, round) {
  const out = [...items];
  let seed = 0x9e3779b9 ^ (round * 0x85ebca6b);
  for (let i = out.length - 1; i > 0; i--) {
    seed = (Math.imul(seed ^ (seed >>> 15), 0x2c1b3c6d) + 0x6d2b79f5) >>> 0;
    const j = seed % (i + 1);
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

/** Runs the CLI start-up bench; `argv` as given to `pnpm bench`. Returns the report it writes. */
export async function runCliStart(argv) {
  const runs = Number(option(argv, '--runs', '7'));
  const against = option(argv, '--against', undefined);
  const outFile = option(argv, '--out', join(HERE, 'results-cli.json'));
  const builds = [['after', SVC_BIN]];
  if (against) builds.unshift(['before', resolve(against)]);

  ensureCoreLink();
  const dir = join(TMP, `cli-${process.pid}`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const env = cleanEnv();
  const svcArgs = (bin, ...args) => [bin, ...args, '--base-dir', dir];
  // A new user's project: `svc init` in an empty folder writes main.ts, svc.yaml, .env and the database.
  await timeExit(svcArgs(SVC_BIN, 'init', '--username', ADMIN.username, '--password', ADMIN.password), {
    cwd: dir,
    env,
  });

  // yargs and @svc/core resolve from the CLI package, as they do for the CLI itself.
  const fromCli = { cwd: CLI_DIR, env };
  const targets = [
    ['node', () => timeExit(['-e', ''], fromCli)],
    ['yargs', () => timeExit(['--input-type=module', '-e', "await import('yargs')"], fromCli)],
    ['core', () => timeExit(['--input-type=module', '-e', "await import('@svc/core')"], fromCli)],
  ];
  for (const [build, bin] of builds) {
    const at = { cwd: dir, env };
    targets.push(
      [`help@${build}`, () => timeExit([bin, '--help'], at)],
      [`users@${build}`, () => timeExit(svcArgs(bin, 'users', 'ls'), at)],
      [`check@${build}`, () => timeExit(svcArgs(bin, 'migrations', 'check'), at)],
      [`serve@${build}`, () => timeServe(bin, dir)],
    );
  }

  const report = {
    date: new Date().toISOString(),
    node: process.version,
    cpus: cpus().length,
    cpu: cpus()[0]?.model,
    runs,
    builds: Object.fromEntries(builds.map(([build, bin]) => [build, relative(ROOT, realpathSync(bin))])),
    loadAverageBefore: loadavg(),
    samples: Object.fromEntries(targets.map(([name]) => [name, []])),
    orders: [],
  };
  try {
    // One warm-up of each (the file system cache), not counted.
    for (const [, measure] of targets) await measure();
    for (let round = 0; round < runs; round++) {
      const order = shuffled(targets, round);
      report.orders.push(order.map(([name]) => name));
      for (const [name, measure] of order) report.samples[name].push(await measure());
      process.stderr.write(
        `[cli-start] round ${round + 1}/${runs}, load average ${loadavg()[0].toFixed(2)}\n`,
      );
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  report.loadAverageAfter = loadavg();
  report.medians = Object.fromEntries(Object.entries(report.samples).map(([k, v]) => [k, median(v)]));

  const bare = report.medians.node;
  const head = [
    '',
    ...builds.map(([build]) => `${build}, median`),
    ...builds.map(([build]) => `${build} / node`),
  ];
  const rows = [head];
  for (const key of ['node', 'yargs', 'core']) {
    const pad = Array(builds.length - 1).fill('');
    rows.push([
      LABELS[key],
      fmtMs(report.medians[key]),
      ...pad,
      `${(report.medians[key] / bare).toFixed(1)}x`,
      ...pad,
    ]);
  }
  for (const key of ['help', 'users', 'check', 'serve']) {
    const values = builds.map(([build]) => report.medians[`${key}@${build}`]);
    rows.push([LABELS[key], ...values.map(fmtMs), ...values.map((v) => `${(v / bare).toFixed(1)}x`)]);
  }
  const after = (key) => report.medians[`${key}@after`];
  const verdict = [
    ['target', 'after', 'met'],
    [`svc --help < ${TARGETS.help} ms`, fmtMs(after('help')), after('help') < TARGETS.help ? 'yes' : 'NO'],
    [
      `svc users ls < ${TARGETS.users} ms`,
      fmtMs(after('users')),
      after('users') < TARGETS.users ? 'yes' : 'NO',
    ],
    [
      `svc serve to ready < ${TARGETS.serve} ms`,
      fmtMs(after('serve')),
      after('serve') < TARGETS.serve ? 'yes' : 'NO',
    ],
  ];
  const load = (l) => l.map((n) => n.toFixed(2)).join(' ');
  console.log(
    `${report.date}  node ${report.node}  ${report.cpus} x ${report.cpu}  ${runs} rounds, medians  ` +
      `load average ${load(report.loadAverageBefore)} before, ${load(report.loadAverageAfter)} after`,
  );
  console.log('');
  console.log(table(rows));
  console.log('');
  console.log(table(verdict));
  writeFileSync(`${outFile}.tmp`, `${JSON.stringify(report, null, 2)}\n`);
  renameSync(`${outFile}.tmp`, outFile);
  return report;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await runCliStart(process.argv.slice(2));
}
