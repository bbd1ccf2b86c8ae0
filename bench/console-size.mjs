// The admin console's size (SPEC-3 §6 budget, issue text "Budgets": its JavaScript <= 150 KB gzipped): builds
// the console afresh with its own build script (packages/core/console/build.mjs) into a scratch folder and
// measures each file raw and gzipped (level 9, what a compressing proxy or the server's compression sends at
// most), plus the largest inputs of the script from esbuild's metafile. A measurement, not a timed test: it
// prints a table and writes bench/results-console.json.
//   pnpm bench --console
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';

/** The budget of the console's JavaScript, gzipped. */
export const CONSOLE_JS_BUDGET_BYTES = 150 * 1024;

export async function runConsoleSize() {
  const { buildConsole } = await import('../packages/core/console/build.mjs');
  const outdir = mkdtempSync(join(tmpdir(), 'svc-console-size-'));
  try {
    const result = await buildConsole({ outdir });
    const files = readdirSync(outdir).map((name) => {
      const bytes = readFileSync(join(outdir, name));
      return { file: name, bytes: bytes.length, gzipBytes: gzipSync(bytes, { level: 9 }).length };
    });
    const script = files.find((file) => file.file === 'console.js');
    const inputs = Object.entries(result.metafile.outputs[Object.keys(result.metafile.outputs)[0]].inputs)
      .map(([path, { bytesInOutput }]) => ({ path, bytesInOutput }))
      .sort((a, b) => b.bytesInOutput - a.bytesInOutput);
    // Grouped by package (node_modules/.pnpm/<name>@<version>/...) or by svc's own folder.
    const byPackage = {};
    for (const input of inputs) {
      const match = /node_modules\/(?:\.pnpm\/[^/]+\/node_modules\/)?((?:@[^/]+\/)?[^/]+)/.exec(input.path);
      const key = match ? match[1] : input.path.split('/').slice(0, 3).join('/');
      byPackage[key] = (byPackage[key] ?? 0) + input.bytesInOutput;
    }
    const summary = {
      date: new Date().toISOString(),
      node: process.version,
      budgetGzipBytes: CONSOLE_JS_BUDGET_BYTES,
      withinBudget: script.gzipBytes <= CONSOLE_JS_BUDGET_BYTES,
      files,
      scriptByPackage: Object.fromEntries(Object.entries(byPackage).sort((a, b) => b[1] - a[1])),
    };
    console.table(files);
    console.log(
      `console.js: ${(script.gzipBytes / 1024).toFixed(1)} KB gzipped of a ${CONSOLE_JS_BUDGET_BYTES / 1024} KB budget` +
        (summary.withinBudget ? '' : '  OVER BUDGET'),
    );
    console.table(summary.scriptByPackage);
    writeFileSync(new URL('results-console.json', import.meta.url), JSON.stringify(summary, null, 2) + '\n');
    return summary;
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await runConsoleSize();
