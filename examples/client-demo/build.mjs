// Builds the example into dist/ with esbuild: app.js (src/main.ts and @svc/client, bundled), index.html and
// style.css. The demo's start script runs it, then serves dist/ at /app/ (examples/demo/main.ts).
//   node build.mjs            (pnpm --filter client-demo build)
import { copyFileSync, mkdirSync } from 'node:fs';
import { build } from 'esbuild';

const here = new URL('.', import.meta.url);

/** Bundles the example; returns esbuild's result (with its metafile: what went into app.js). */
export async function buildDemo({ outdir = new URL('dist/', here).pathname } = {}) {
  mkdirSync(outdir, { recursive: true });
  const result = await build({
    entryPoints: [new URL('src/main.ts', here).pathname],
    outfile: `${outdir}/app.js`,
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    minify: true,
    sourcemap: true,
    metafile: true,
    logLevel: 'warning',
  });
  for (const file of ['index.html', 'style.css']) copyFileSync(new URL(file, here), `${outdir}/${file}`);
  return result;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await buildDemo();
  console.log('client-demo: dist/ written');
}
