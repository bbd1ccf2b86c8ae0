#!/usr/bin/env node
// docs/performance.md "Profiled and fixed": profile one scenario on a real `svc serve` (node --cpu-prof) and print the functions with the most
// self time, grouped by package. The .cpuprofile is kept in bench/.tmp/ for Chrome DevTools.
//
//   node bench/lib/profile.mjs <user|notes|org-notes|login|refresh|write|live|admin-patch> [seconds] [SVC_SETTING=value ...]
//
// `admin-patch` is the webhook bench's PATCH /api/admin/user/{id} (bench/webhooks.mjs); with SVC_WEBHOOKS_ENABLED=true
// an endpoint of every `user.updated` points at a receiver in this process that answers 204.
//
// Only the samples of the load's window count; figures are per request answered. PROFILE_CONNECTIONS=1 runs one
// request at a time; PROFILE_POSTGRES=1 serves a fresh database of SVC_TEST_POSTGRES_URL.
import { URLSearchParams } from 'node:url';
import { fork } from 'node:child_process';
import { createServer } from 'node:http';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from './pg.mjs';
import { ADMIN, READER, TMP, call, createProject, login, seedReader, startServe } from './project.mjs';

const [scenario = 'user', seconds = '8', ...pairs] = process.argv.slice(2);
const settings = Object.fromEntries(
  pairs.map((p) => p.split('=')).map(([k, v]) => [k.replace(/^SVC_/, '').toLowerCase(), v]),
);
// PROFILE_POSTGRES=1: the project on a fresh database of SVC_TEST_POSTGRES_URL instead of the file database.
const database = process.env.PROFILE_POSTGRES
  ? await pg.create(process.env.SVC_TEST_POSTGRES_URL)
  : undefined;
const project = await createProject({ databaseUrl: database?.url });
let result;
const loadWindow = {};
/** PROFILE_CONNECTIONS: autocannon's connections (10, as the bench); 1 shows one request's work uncontended. */
const connections = Number(process.env.PROFILE_CONNECTIONS ?? 10);
const profDir = join(TMP, `prof-${scenario}-${Date.now()}`);
mkdirSync(profDir, { recursive: true });
const server = await startServe(project.dir, settings, {
  nodeOptions: ['--cpu-prof', `--cpu-prof-dir=${profDir}`],
});
try {
  const { noteId } = await seedReader(server.base);
  const reader = await login(server.base, READER);
  const url = (p) => `${server.base}${p}`;
  // SPEC-3 §2: the notes list under organizationPermissions, in an organization the reader owns.
  const orgId =
    scenario === 'org-notes'
      ? (
          await call(server.base, 'POST', '/api/organizations', {
            token: reader.access_token,
            json: { name: 'Bench', slug: 'bench-org' },
          })
        ).body.id
      : undefined;
  const jobs = {
    user: { url: url('/api/auth/user'), method: 'GET', tokens: [reader.access_token] },
    notes: { url: url('/api/notes/'), method: 'GET', tokens: [reader.access_token] },
    'org-notes': {
      url: url('/api/org-notes/'),
      method: 'GET',
      tokens: [reader.access_token],
      headers: { 'x-organization-id': orgId },
    },
    write: { url: url(`/api/notes/${noteId}/archive`), method: 'POST', tokens: [reader.access_token] },
    live: { url: url('/api/health/live'), method: 'GET' },
    login: {
      url: url('/api/auth/token'),
      method: 'POST',
      body: new URLSearchParams(READER).toString(),
      contentType: 'application/x-www-form-urlencoded',
    },
  };
  if (scenario === 'admin-patch') {
    const admin = (await login(server.base, ADMIN)).access_token;
    if (settings.webhooks_enabled === 'true') {
      const receiver = createServer((req, res) => req.resume().on('end', () => res.writeHead(204).end()));
      await new Promise((resolve) => receiver.listen(0, '127.0.0.1', resolve));
      receiver.unref();
      await call(server.base, 'POST', '/api/admin/webhooks', {
        token: admin,
        json: { url: `http://127.0.0.1:${receiver.address().port}/hook`, events: ['user.updated'] },
      });
    }
    const { body } = await call(server.base, 'POST', '/api/auth/register', {
      json: { username: 'bench-patch', password: 'bench-patch-password-1' },
    });
    jobs['admin-patch'] = {
      url: url(`/api/admin/user/${body.id}`),
      method: 'PATCH',
      headers: { authorization: `Bearer ${admin}` },
      // Alternating names, as the webhook bench: each PATCH changes the user, so each emits `user.updated`.
      bodies: ['{"firstName":"bench-a"}', '{"firstName":"bench-b"}'],
      contentType: 'application/json',
    };
  }
  if (scenario === 'refresh') {
    const seedTokens = [];
    for (let i = 0; i < 30; i++) seedTokens.push((await login(server.base, READER)).refresh_token);
    jobs.refresh = { url: url('/api/auth/refresh-token'), chain: 'refresh', seedTokens };
  }
  const loader = fork(join(import.meta.dirname, 'load.mjs'), { stdio: 'inherit' });
  // The load's window on the monotonic clock the profile's sample times use (µs): start-up, seeding and
  // shutdown stay out of the figures.
  loadWindow.from = Number(process.hrtime.bigint() / 1000n);
  result = await new Promise((resolve) => {
    loader.once('message', resolve);
    loader.send({ ...jobs[scenario], connections, seconds: Number(seconds) });
  });
  loadWindow.to = Number(process.hrtime.bigint() / 1000n);
  loader.kill();
  console.log(
    `${scenario}: ${Math.round(result.rps)} req/s, p50 ${result.p50} ms, p99 ${result.p99} ms, non-2xx ${result.non2xx}`,
  );
} finally {
  await server.stop();
  project.remove();
  await database?.drop();
}
// The main thread's profile (thread id 0); a file database's read worker writes one of its own.
const file = readdirSync(profDir).find((f) => /\.\d+\.0\.\d+\.cpuprofile$/.test(f));
// Beside the profile, for comparing two runs: the load's window and the requests answered in it.
writeFileSync(join(profDir, 'window.json'), JSON.stringify({ ...loadWindow, requests: result.total }));
const p = JSON.parse(readFileSync(join(profDir, file), 'utf8'));
const byId = new Map(p.nodes.map((n) => [n.id, n]));
const time = new Map();
// Sample i lasts until sample i + 1; only the samples inside the load's window count.
let at = p.startTime;
p.samples.forEach((s, i) => {
  at += p.timeDeltas[i];
  if (at < loadWindow.from || at > loadWindow.to) return;
  time.set(s, (time.get(s) ?? 0) + (p.timeDeltas[i + 1] ?? 0));
});
const self = new Map();
const pkgs = new Map();
for (const [id, t] of time) {
  const { functionName, url, lineNumber } = byId.get(id).callFrame;
  const m = /node_modules\/\.pnpm\/[^/]+\/node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  const pkg = m
    ? m[1]
    : url.includes('/packages/core/')
      ? '@svc/core'
      : url.startsWith('node:')
        ? 'node'
        : url || '(native/gc/idle)';
  pkgs.set(pkg, (pkgs.get(pkg) ?? 0) + t);
  const key = `${functionName || '(anonymous)'} ${url.replace(/.*node_modules\//, '').replace(/.*\/packages\//, '')}:${lineNumber + 1}`;
  self.set(key, (self.get(key) ?? 0) + t);
}
const total = [...time.values()].reduce((a, b) => a + b, 0);
const show = (m, n) =>
  [...m.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .forEach(([k, t]) =>
      console.log(
        `${((100 * t) / total).toFixed(1).padStart(5)}% ${(t / result.total).toFixed(1).padStart(7)} µs/req  ${k}`,
      ),
    );
const idle = [...time].filter(([id]) => byId.get(id).callFrame.functionName === '(idle)');
const busy = total - idle.reduce((a, [, t]) => a + t, 0);
console.log(
  `main thread busy (not idle) during the load: ${(busy / result.total).toFixed(1)} µs per request`,
);
console.log(`\nself time by package (${profDir}/${file}):`);
show(pkgs, 15);
console.log('\nself time by function:');
show(self, 30);

// Inclusive time of svc and middleware functions (a function counted once per stack).
const inclusive = new Map();
const parent = new Map();
for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
for (const [id, t] of time) {
  const seen = new Set();
  for (let cur = id; cur !== undefined; cur = parent.get(cur)) {
    const { functionName, url, lineNumber } = byId.get(cur).callFrame;
    if (
      !/packages\/core|helmet|body-parser|jsonwebtoken|logform|winston|drizzle-orm\/better|express\/lib\/response/.test(
        url,
      )
    )
      continue;
    const key = `${functionName || '(anonymous)'} ${url.replace(/.*node_modules\//, '').replace(/.*\/packages\//, '')}:${lineNumber + 1}`;
    if (seen.has(key)) continue;
    seen.add(key);
    inclusive.set(key, (inclusive.get(key) ?? 0) + t);
  }
}
console.log('\ninclusive time (svc, middleware, jwt, logging, driver):');
show(inclusive, 40);
