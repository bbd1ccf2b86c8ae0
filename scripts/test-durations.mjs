#!/usr/bin/env node
// Records each test file's duration for testing/sequencer.mjs, from a full run:
//   pnpm test --json --outputFile=/tmp/jest.json && node scripts/test-durations.mjs /tmp/jest.json
// Files without a recorded duration run first (jest's rule for unknown ones), so a new slow file costs
// nothing until the next recording.
import { readFileSync, writeFileSync } from 'node:fs';
import { relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)));
const input = process.argv[2];
if (!input) {
  process.stderr.write('usage: node scripts/test-durations.mjs <jest --json output>\n');
  process.exit(2);
}
const report = JSON.parse(readFileSync(input, 'utf8'));
const durations = Object.fromEntries(
  report.testResults
    .map((result) => [relative(ROOT, result.name), Math.round(result.endTime - result.startTime)])
    .sort(([a], [b]) => (a < b ? -1 : 1)),
);
writeFileSync(resolve(ROOT, 'test/durations.json'), `${JSON.stringify(durations, null, 2)}\n`);
process.stdout.write(`test/durations.json: ${Object.keys(durations).length} files\n`);
