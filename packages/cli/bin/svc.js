#!/usr/bin/env node
// The `svc` program as package managers link it. It is committed, not built: pnpm and npm link a package's
// `bin` when they install it, and in a fresh clone of the repository that is before `pnpm build` writes
// dist/, so a `bin` pointing into dist/ would leave no `svc` command at all. The program itself is
// dist/bin.js (from src/bin.ts).
import { existsSync } from 'node:fs';

const program = new URL('../dist/bin.js', import.meta.url);

if (existsSync(program)) {
  await import(program.href);
} else {
  // Only a checkout can lack dist/: the published package always holds it.
  process.stderr.write('svc: @svc/cli is not built yet: run `pnpm build` in the repository first\n');
  process.exitCode = 1;
}
