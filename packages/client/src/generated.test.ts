import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

// The client's types are what the server says now (docs/client.md "Types"): schema.ts from the OpenAPI
// document of a real app, codes.ts from the error registry. A route or code changed without `pnpm gen:client`
// fails here.
const REPO = fileURLToPath(new URL('../../../', import.meta.url));

it('has schema.ts and codes.ts as the server produces them now (run `pnpm gen:client`)', () => {
  const result = spawnSync(
    `${REPO}packages/cli/node_modules/.bin/tsx`,
    ['scripts/gen-client-types.ts', '--check'],
    { cwd: REPO, encoding: 'utf8', timeout: 60_000 },
  );
  expect(result.stderr).toBe('');
  expect(result.status).toBe(0);
});
