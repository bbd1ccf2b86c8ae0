// Records every module a Node process loads, for tests that check what a command does NOT import
// (docs/performance.md "The CLI's start"). Preload it with `--import` (in NODE_OPTIONS for a child process) and
// name the output file in RECORD_MODULES_FILE: each ES module's URL, as resolved, and at exit every CommonJS
// module in require's cache, one a line.
import { appendFileSync, writeFileSync } from 'node:fs';
import { createRequire, register } from 'node:module';
import { pathToFileURL } from 'node:url';

const file = process.env.RECORD_MODULES_FILE;
if (file) {
  writeFileSync(file, '');
  // Resolve hooks run on the loader's thread: the hook module gets the file through its `data`.
  const hooks = `
import { appendFileSync } from 'node:fs';
let file;
export function initialize(data) { file = data.file; }
export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  appendFileSync(file, resolved.url + '\\n');
  return resolved;
}`;
  register(`data:text/javascript,${encodeURIComponent(hooks)}`, { data: { file } });
  const require = createRequire(import.meta.url);
  process.on('exit', () => {
    const lines = Object.keys(require.cache).map((path) => `${pathToFileURL(path).href}\n`);
    appendFileSync(file, lines.join(''));
  });
}
