// Builds the admin console (SPEC-3 §6, docs/admin-console.md) ahead of time into the package's dist/console/:
// console.js (src/main.tsx with React, @svc/react and @svc/client, bundled and minified), console.css and
// index.html. The root `pnpm build` runs it after tsc, so the published @svc/core carries the console and a
// project needs no build step of its own; nothing is fetched at run time.
//   node packages/core/console/build.mjs
import { copyFileSync, mkdirSync } from 'node:fs';
import { build } from 'esbuild';

const here = new URL('.', import.meta.url);
const source = (path) => new URL(`../../${path}`, here).pathname;

/** Bundles the console; returns esbuild's result (with its metafile: what went into console.js). */
export async function buildConsole({ outdir = new URL('../dist/console/', here).pathname } = {}) {
  mkdirSync(outdir, { recursive: true });
  const result = await build({
    entryPoints: [new URL('src/main.tsx', here).pathname],
    outfile: `${outdir}/console.js`,
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    minify: true,
    jsx: 'automatic',
    // No source map in the package (the tarball ships none); the sources are in the repository.
    sourcemap: false,
    metafile: true,
    legalComments: 'none',
    logLevel: 'warning',
    define: { 'process.env.NODE_ENV': '"production"' },
    // The sibling packages from their sources: the console is built before (or without) their own dist/.
    alias: {
      '@svc/client': source('client/src/index.ts'),
      '@svc/react': source('react/src/index.ts'),
    },
  });
  for (const file of ['index.html', 'console.css']) copyFileSync(new URL(file, here), `${outdir}/${file}`);
  return result;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await buildConsole();
  console.log('admin console: packages/core/dist/console/ written');
}
