#!/usr/bin/env node
// docs/performance.md "What stands in the way": garbage collection under GET /api/auth/user. One `svc serve`
// per variant of V8 flags (and the HS256 + SELECT Express baseline), each under `--trace-gc`; rounds of
// autocannon (10 connections) interleaved across them; per variant: req/s, p50 / p99 / max, the server's CPU
// per request, the bytes allocated per request (from the heap sizes the trace prints: what a collection
// found minus what the previous one left) and the scavenge pauses.
//
//   node bench/lib/gc.mjs [rounds] [seconds] ['--flag --flag' ...]   e.g. 5 3 '' '--max-semi-space-size=16'
import { fork } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cpuSecondsOf } from './cpu.mjs';
import { READER, createProject, login, projectDatabaseUrl, seedReader, startServe } from './project.mjs';
import { fmtInt, fmtMs, fmtUs, median, percentile, table } from './stats.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const [roundsArg = '5', secondsArg = '3', ...variantArgs] = process.argv.slice(2);
const variants = variantArgs.length ? variantArgs : [''];
const rounds = Number(roundsArg);
const seconds = Number(secondsArg);

/** Collects `--trace-gc` lines of a process: time, kind, heap before and after (MB), pause (ms). */
function gcRecorder(stream) {
  const events = [];
  let rest = '';
  stream.on('data', (chunk) => {
    const lines = (rest + chunk).split('\n');
    rest = lines.pop();
    for (const line of lines) {
      const m =
        /(\d+) ms: (Scavenge|Mark-Compact|Mark-sweep)[^\d]*([\d.]+) \(([\d.]+)\) -> ([\d.]+) \(([\d.]+)\) MB, ([\d.]+)/.exec(
          line,
        );
      if (m) events.push({ kind: m[2], before: Number(m[3]), after: Number(m[5]), pause: Number(m[7]) });
    }
  });
  return events;
}

function summarise(events, from, to, requests) {
  let allocated = 0;
  const pauses = [];
  let majors = 0;
  for (let i = Math.max(from, 1); i < to; i += 1) {
    allocated += Math.max(0, events[i].before - events[i - 1].after);
    if (events[i].kind === 'Scavenge') pauses.push(events[i].pause);
    else majors += 1;
  }
  return {
    bytesPerRequest: (allocated * 2 ** 20) / requests,
    scavenges: pauses.length,
    pauseP50: median(pauses),
    pauseMax: pauses.length ? Math.max(...pauses) : NaN,
    pauseP99: percentile(pauses, 99),
    majors,
  };
}

const project = await createProject();
const env = readFileSync(join(project.dir, '.env'), 'utf8');
const secret = /^SVC_SECRET_KEY=(.*)$/m.exec(env)[1].trim();
const stops = [];
const loader = fork(join(HERE, 'load.mjs'), { stdio: 'inherit' });
try {
  const targets = [];
  for (const flags of variants) {
    const nodeOptions = ['--trace-gc', ...flags.split(/\s+/).filter(Boolean)];
    const server = await startServe(project.dir, {}, { nodeOptions });
    stops.push(server.stop);
    targets.push({
      name: `svc ${flags || '(defaults)'}`,
      pid: server.pid,
      port: server.port,
      path: '/api/auth/user',
      events: gcRecorder(server.child.stdout),
    });
  }
  await seedReader(`http://127.0.0.1:${targets[0].port}`);
  const reader = await login(`http://127.0.0.1:${targets[0].port}`, READER);
  const baseline = fork(
    join(HERE, 'baselines.mjs'),
    [
      '--express-auth',
      JSON.stringify({ secret, databaseUrl: projectDatabaseUrl(project.dir), table: 'svc_user' }),
    ],
    { execArgv: ['--trace-gc'], stdio: ['ignore', 'pipe', 'inherit', 'ipc'] },
  );
  const events = gcRecorder(baseline.stdout);
  const { port } = await new Promise((resolve) => baseline.once('message', resolve));
  stops.push(async () => baseline.send('stop'));
  targets.push({
    name: 'baseline: Express 5, HS256 + PK SELECT',
    pid: baseline.pid,
    port,
    path: '/me',
    events,
  });

  const ask = (job) =>
    new Promise((resolve) => {
      loader.once('message', resolve);
      loader.send(job);
    });
  const results = new Map(targets.map((t) => [t.name, []]));
  for (let r = 0; r <= rounds; r += 1) {
    for (const t of targets) {
      const gcFrom = t.events.length;
      const cpu0 = cpuSecondsOf(t.pid);
      const res = await ask({
        url: `http://127.0.0.1:${t.port}${t.path}`,
        method: 'GET',
        connections: 10,
        seconds,
        tokens: [reader.access_token],
      });
      const cpu = (cpuSecondsOf(t.pid) - cpu0) / res.total;
      if (r > 0)
        results.get(t.name).push({ ...res, cpu, ...summarise(t.events, gcFrom, t.events.length, res.total) }); // round 0 warms up
    }
  }
  const lines = [
    [
      'server',
      'req/s',
      'p50',
      'p99',
      'max',
      'CPU / request',
      'allocated / request',
      'scavenges / s',
      'scavenge pause p50 / p99 / max',
      'mark-compacts',
    ],
  ];
  for (const [name, list] of results) {
    const m = (k) => median(list.map((x) => x[k]));
    lines.push([
      name,
      fmtInt(m('rps')),
      fmtMs(m('p50')),
      fmtMs(m('p99')),
      fmtMs(m('max')),
      fmtUs(m('cpu')),
      `${(m('bytesPerRequest') / 1024).toFixed(1)} KiB`,
      (m('scavenges') / seconds).toFixed(1),
      `${m('pauseP50').toFixed(1)} / ${m('pauseP99').toFixed(1)} / ${m('pauseMax').toFixed(1)} ms`,
      String(list.reduce((n, x) => n + x.majors, 0)),
    ]);
  }
  console.log(
    `${new Date().toISOString()}  ${rounds} interleaved rounds of ${seconds} s, 10 connections, medians\n`,
  );
  console.log(table(lines));
} finally {
  loader.kill();
  for (const stop of stops.reverse()) await stop().catch(() => {});
  project.remove();
}
