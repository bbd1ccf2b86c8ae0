#!/usr/bin/env node
// Run before jest by `pnpm test` (the `pretest` script): the browser suites (test/browser) drive Debian's
// Chromium, which no npm package downloads here. When it is missing:
// - as root with apt-get: installs Debian's `chromium` package;
// - otherwise under CI=true: fails, so CI never goes green without the browser suites;
// - otherwise: says so and goes on; the browser suites then report why they did not run (as the PostgreSQL
//   suites do without SVC_TEST_POSTGRES_URL).
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

const path = process.env.SVC_TEST_CHROMIUM || '/usr/bin/chromium';
const ci = process.env.CI === 'true';

if (existsSync(path)) process.exit(0);

const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
const hasApt = spawnSync('sh', ['-c', 'command -v apt-get'], { stdio: 'ignore' }).status === 0;
if (isRoot && hasApt && !process.env.SVC_TEST_CHROMIUM) {
  console.log("pretest: Chromium is missing; installing Debian's package (apt-get install chromium)");
  const install = spawnSync('sh', ['-c', 'apt-get update -q && apt-get install -y -q chromium'], {
    stdio: 'inherit',
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
  });
  if (install.status === 0 && existsSync(path)) process.exit(0);
  console.error('pretest: installing Chromium failed');
} else {
  const how = !isRoot ? 'not root' : !hasApt ? 'no apt-get' : 'SVC_TEST_CHROMIUM names a missing file';
  console.error(`pretest: no Chromium at ${path} and no way to install it here (${how})`);
}
if (ci) {
  console.error(
    'pretest: CI=true needs the browser suites: install Chromium (apt-get install chromium) first',
  );
  process.exit(1);
}
console.error('pretest: the browser suites will report why they did not run');
