#!/usr/bin/env node
// docs/performance.md "What stands in the way": where GET /api/auth/user allocates. A `svc serve` under the
// inspector; V8's sampling heap profiler (`HeapProfiler.startSampling`, objects collected by minor and major
// GCs included, so short-lived garbage counts) runs while autocannon (10 connections) loads the route; the
// sampled bytes are attributed to the allocating function (self) and to svc's or a package's frames on the
// stack (inclusive), per request.
//
//   node bench/lib/alloc.mjs [seconds] [route]     default: 8 /api/auth/user
import { fork } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import WebSocket from 'ws';
import { READER, createProject, login, seedReader, startServe } from './project.mjs';
import { table } from './stats.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const [secondsArg = '8', route = '/api/auth/user'] = process.argv.slice(2);

function inspector(url) {
  const ws = new WebSocket(url);
  let id = 0;
  const pending = new Map();
  ws.on('message', (data) => {
    const m = JSON.parse(data);
    if (m.id && pending.has(m.id)) {
      pending.get(m.id)(m);
      pending.delete(m.id);
    }
  });
  return new Promise((resolve) =>
    ws.once('open', () =>
      resolve({
        send: (method, params = {}) =>
          new Promise((done) => {
            id += 1;
            pending.set(id, done);
            ws.send(JSON.stringify({ id, method, params }));
          }),
        close: () => ws.close(),
      }),
    ),
  );
}

/** The package a frame belongs to: svc's own packages by folder, others by their node_modules name. */
function packageOf(url) {
  if (!url) return '(native / V8)';
  if (url.startsWith('node:')) return 'node';
  const m = /node_modules\/(?:\.pnpm\/[^/]+\/node_modules\/)?((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (m && !m[1].startsWith('@svc/')) return m[1];
  const svc = /packages\/(core|cli|migrations)\/(?:dist|src)\/([^/]+)/.exec(url);
  if (svc) return `svc ${svc[1]}/${svc[2].replace(/\.[jt]s$/, '')}`;
  return url.split('/').slice(-2).join('/');
}

const project = await createProject();
const server = await startServe(project.dir, {}, { nodeOptions: ['--inspect=127.0.0.1:0'] });
const loader = fork(join(HERE, 'load.mjs'), { stdio: 'inherit' });
try {
  await seedReader(server.base);
  const reader = await login(server.base, READER);
  const job = {
    url: `${server.base}${route}`,
    method: 'GET',
    connections: 10,
    tokens: [reader.access_token],
  };
  const run = (seconds) =>
    new Promise((resolve) => {
      loader.once('message', resolve);
      loader.send({ ...job, seconds });
    });
  await run(2); // warm-up: code compiled, statements prepared
  const session = await inspector(/ws:\/\/127\.0\.0\.1:\d+\/[\w-]+/.exec(server.output())[0]);
  await session.send('HeapProfiler.enable');
  await session.send('HeapProfiler.startSampling', {
    samplingInterval: 4096,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  });
  const result = await run(Number(secondsArg));
  const answer = await session.send('HeapProfiler.stopSampling');
  if (!answer.result) throw new Error(JSON.stringify(answer.error ?? answer));
  const { profile } = answer.result;
  session.close();
  const self = new Map();
  const inclusive = new Map();
  let total = 0;
  const walk = (node, stack) => {
    const pkg = packageOf(node.callFrame.url);
    const fn = `${node.callFrame.functionName || '(anonymous)'} ${pkg}`;
    const here = node.selfSize;
    total += here;
    self.set(fn, (self.get(fn) ?? 0) + here);
    const next = new Set(stack).add(pkg);
    for (const p of next) inclusive.set(p, (inclusive.get(p) ?? 0) + here);
    for (const child of node.children) walk(child, next);
  };
  walk(profile.head, new Set());
  const perRequest = (bytes) => `${(bytes / result.total / 1024).toFixed(2)} KiB`;
  console.log(
    `${route}: ${result.total} requests in ${secondsArg} s (${Math.round(result.rps)} req/s), sampled ${perRequest(total)} per request\n`,
  );
  const top = (map, n) => [...map].sort((a, b) => b[1] - a[1]).slice(0, n);
  console.log(
    table([
      ['allocating function (self)', 'per request'],
      ...top(self, 25).map(([k, v]) => [k, perRequest(v)]),
    ]),
  );
  console.log('');
  console.log(
    table([
      ['package or svc file on the stack (inclusive)', 'per request'],
      ...top(inclusive, 25).map(([k, v]) => [k, perRequest(v)]),
    ]),
  );
} finally {
  loader.kill();
  await server.stop();
  project.remove();
}
