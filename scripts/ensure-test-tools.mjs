#!/usr/bin/env node
// Run before jest by `pnpm test` (the `pretest` script). Two suites drive programs from Debian's packages, which
// no npm package downloads here: the browser suites (test/browser) Chromium, the cluster suite (test/cluster)
// nginx. For each one missing:
// - as root with apt-get: installs Debian's package;
// - otherwise under CI=true: fails, so CI never goes green without those suites;
// - otherwise: says so and goes on; the suites then report why they did not run (as the PostgreSQL suites do
//   without SVC_TEST_POSTGRES_URL).
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

const ci = process.env.CI === 'true';
const tools = [
  {
    pkg: 'chromium',
    path: process.env.SVC_TEST_CHROMIUM || '/usr/bin/chromium',
    // A path of the developer's own choosing is not ours to install.
    installable: !process.env.SVC_TEST_CHROMIUM,
    suites: 'the browser suites (test/browser)',
  },
  { pkg: 'nginx', path: '/usr/sbin/nginx', installable: true, suites: 'the cluster suite (test/cluster)' },
];

const missing = tools.filter((tool) => !existsSync(tool.path));
if (missing.length === 0) process.exit(0);

const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
const hasApt = spawnSync('sh', ['-c', 'command -v apt-get'], { stdio: 'ignore' }).status === 0;
const installable = missing.filter((tool) => tool.installable);
if (isRoot && hasApt && installable.length > 0) {
  const names = installable.map((tool) => tool.pkg).join(' ');
  console.log(`pretest: missing ${names}; installing Debian's packages (apt-get install ${names})`);
  // Installing nginx may start its distribution service; the cluster suite runs an nginx of its own anyway.
  spawnSync('sh', ['-c', `apt-get update -q && apt-get install -y -q ${names}`], {
    stdio: 'inherit',
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
  });
}

let failed = false;
for (const tool of missing) {
  if (existsSync(tool.path)) continue;
  const how = !isRoot
    ? 'not root'
    : !hasApt
      ? 'no apt-get'
      : tool.installable
        ? 'apt-get install failed'
        : 'SVC_TEST_CHROMIUM names a missing file';
  console.error(`pretest: no ${tool.pkg} at ${tool.path} for ${tool.suites} (${how})`);
  if (ci) {
    console.error(
      `pretest: CI=true needs ${tool.suites}: install ${tool.pkg} (apt-get install ${tool.pkg}) first`,
    );
    failed = true;
  } else {
    console.error(`pretest: ${tool.suites} will report why they did not run`);
  }
}
process.exit(failed ? 1 : 0);
