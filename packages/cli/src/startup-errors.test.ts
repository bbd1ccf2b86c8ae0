import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { CLI_DIR, freePort, runCli, spawnCli } from '../../../testing/cli-process.js';

// What the first hour meets when something is wrong (docs/cli.md "Errors", docs/configuration.md "Typos"):
// the real `svc` program on real projects; every problem is named with its place and fix, never a stack.
const TMP_DIR = join(CLI_DIR, '.tmp-test');
const STARTUP_MS = 90_000; // tsx compiles the core on a busy 2-core machine
const TEST_MS = 240_000;
const SECRET = 's'.repeat(16) + randomBytes(16).toString('hex');

const projects: string[] = [];
const processes: ChildProcess[] = [];
afterAll(() => {
  for (const child of processes)
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  for (const dir of projects) rmSync(dir, { recursive: true, force: true });
});

const MAIN_MJS = `import { createApp } from '@svc/core';\nexport const app = createApp({});\n`;
const ENV = `SVC_SECRET_KEY=${SECRET}\nSVC_AUTH_DATABASE_URL=file:./auth.db\nSVC_AUTO_CREATE_AUTH_SCHEMA=true\n`;

/** A project under packages/cli/.tmp-test (inside the repo, so `@svc/core` resolves); `null` leaves a file out. */
function makeProject(files: Record<string, string | null> = {}): string {
  const dir = join(TMP_DIR, `errors-${randomBytes(6).toString('hex')}`);
  mkdirSync(dir, { recursive: true });
  projects.push(dir);
  const all: Record<string, string | null> = { 'main.mjs': MAIN_MJS, '.env': ENV, ...files };
  for (const [name, content] of Object.entries(all)) {
    if (content !== null) writeFileSync(join(dir, name), content);
  }
  return dir;
}

/** Lines of stderr without the `svc: ` prefix of the first. */
function linesOf(stderr: string): string[] {
  return stderr.trimEnd().split('\n');
}

function expectNoStack(stderr: string): void {
  expect(stderr).not.toMatch(/^\s+at /m);
  expect(stderr).not.toMatch(/unexpected error/);
}

describe('errors say where (docs/cli.md "Errors")', () => {
  it(
    'prints a syntax error of main.ts with file, line, column, reason and a code frame',
    async () => {
      const dir = makeProject({
        'main.mjs': null,
        'main.ts':
          "import { createApp } from '@svc/core';\n\nconst x = {\n  a: 1\n  b: 2,\n};\nexport const app = createApp({});\n",
      });
      const result = await runCli(['serve', '--base-dir', dir]);
      expect(result.code).toBe(1);
      expect(linesOf(result.stderr)).toEqual([
        'svc: cannot load main.ts: main.ts:5:3: syntax error: Expected "}" but found "b"',
        '  3 | const x = {',
        '  4 |   a: 1',
        '> 5 |   b: 2,',
        '    |   ^',
        '  6 | };',
        '  7 | export const app = createApp({});',
      ]);
    },
    TEST_MS,
  );

  it(
    'prints a syntax error of main.mjs and an error thrown while main.ts runs, at their place',
    async () => {
      const js = makeProject({ 'main.mjs': `${MAIN_MJS}const a = {\n  b: 1\n  c: 2 };\n` });
      const jsResult = await runCli(['serve', '--base-dir', js]);
      expect(jsResult.code).toBe(1);
      expect(linesOf(jsResult.stderr).slice(0, 1)).toEqual([
        "svc: cannot load main.mjs: main.mjs:5:3: syntax error: Unexpected identifier 'c'",
      ]);
      expect(jsResult.stderr).toContain('> 5 |   c: 2 };\n    |   ^\n');

      const ts = makeProject({
        'main.mjs': null,
        'main.ts':
          "import { createApp } from '@svc/core';\nconst settings = undefined as any;\nexport const app = createApp({ settings: settings.missing });\n",
      });
      const tsResult = await runCli(['serve', '--base-dir', ts]);
      expect(tsResult.code).toBe(1);
      expect(linesOf(tsResult.stderr)[0]).toMatch(
        /^svc: cannot load main\.ts: main\.ts:3:\d+: TypeError: Cannot read properties of undefined/,
      );
      expect(tsResult.stderr).toContain('> 3 | export const app');
      expectNoStack(tsResult.stderr);
    },
    TEST_MS,
  );

  it(
    'prints a broken svc.yaml with file, line, column, reason and a code frame',
    async () => {
      const dir = makeProject({ 'svc.yaml': 'port: 8000\nhost: [x\n  y: 1\n' });
      const result = await runCli(['serve', '--base-dir', dir]);
      expect(result.code).toBe(1);
      const lines = linesOf(result.stderr);
      expect(lines[0]).toMatch(
        /^svc: \S*errors-\w+\/svc\.yaml:3:4: invalid YAML: missed comma between flow collection entries$/,
      );
      expect(lines.slice(1)).toEqual(['  1 | port: 8000', '  2 | host: [x', '> 3 |   y: 1', '    |    ^']);
    },
    TEST_MS,
  );

  it(
    'names the source and the accepted range of a bad value, and an exported short secret key',
    async () => {
      const dir = makeProject({ '.env': `${ENV}SVC_ACCESS_TOKEN_EXPIRE_MINUTES=0\n` });
      const fromDotenv = await runCli(['serve', '--base-dir', dir]);
      expect(fromDotenv.code).toBe(1);
      expect(fromDotenv.stderr).toBe(
        "svc: invalid setting 'access_token_expire_minutes' in .env (SVC_ACCESS_TOKEN_EXPIRE_MINUTES): must be an integer of at least 1\n",
      );

      const ok = makeProject();
      const exported = await runCli(['serve', '--base-dir', ok], { env: { SVC_SECRET_KEY: 'too-short' } });
      expect(exported.code).toBe(1);
      expect(exported.stderr).toBe(
        'svc: secret_key is too short (9 characters) in the environment (SVC_SECRET_KEY): it needs at least 32; the exported variable wins over .env: unset it or export a longer key\n',
      );

      const option = await runCli(['serve', '--base-dir', ok, '--port', '70000']);
      expect(option.code).toBe(2);
      expect(option.stderr).toBe('svc: --port must be a whole number from 1 to 65535 (got 70000)\n');
    },
    TEST_MS,
  );
});

describe('misspelt settings (docs/configuration.md "Typos")', () => {
  it(
    'warns once at start-up, with two workers, and starts anyway',
    async () => {
      const dir = makeProject({
        'svc.yaml': 'acess_token_expire_minutes: 5\nmy_project_flag: yes\n',
        '.env': `${ENV}SVC_ACESS_TOKEN_EXPIRE_MINUTES=5\n`,
      });
      const port = await freePort();
      const child = spawnCli(['serve', '--base-dir', dir, '--port', String(port), '--workers', '2'], {
        cwd: CLI_DIR,
        env: { SVC_PROT: '9000' },
      });
      processes.push(child);
      child.stdin.end();
      child.stdout.resume();
      let stderr = '';
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      const listening = await new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => resolve(false), STARTUP_MS);
        child.stderr.on('data', () => {
          if (/svc: listening on/.test(stderr)) {
            clearTimeout(timer);
            resolve(true);
          }
        });
        child.once('exit', () => resolve(false));
      });
      expect({ listening, stderr }).toMatchObject({ listening: true });
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('exit', resolve));
      const warnings = stderr.split('\n').filter((line) => line.startsWith('svc: warning: unknown setting'));
      expect(warnings.sort()).toEqual(
        [
          "svc: warning: unknown setting 'acess_token_expire_minutes' in " +
            `${join('.tmp-test', dir.split('/').pop()!, 'svc.yaml')}: did you mean 'access_token_expire_minutes'? (unknown settings are allowed but svc does not use them)`,
          'svc: warning: unknown setting SVC_ACESS_TOKEN_EXPIRE_MINUTES in .env: did you mean SVC_ACCESS_TOKEN_EXPIRE_MINUTES? (unknown settings are allowed but svc does not use them)',
          'svc: warning: unknown setting SVC_PROT in the environment: did you mean SVC_PORT? (unknown settings are allowed but svc does not use them)',
        ].sort(),
      );
    },
    TEST_MS,
  );
});

describe('the first hour (docs/cli.md "Errors")', () => {
  it.each(['serve', 'dev'])(
    'svc %s in a folder without main.* suggests svc init',
    async (command) => {
      const dir = makeProject({ 'main.mjs': null });
      const result = await runCli([command, '--base-dir', dir]);
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(
        /^svc: cannot find the app module: none of main\.ts, main\.js, main\.mjs exists in \S+ \(--app main:app\); run `svc init` there to start a project \(it writes a starter main\.ts\), or name the project with --base-dir\n$/,
      );
    },
    TEST_MS,
  );

  describe('a busy port', () => {
    let holder: Server;
    let port: number;
    beforeAll(async () => {
      port = await freePort();
      holder = createServer();
      await new Promise<void>((resolve) => holder.listen(port, '127.0.0.1', resolve));
    });
    afterAll(() => new Promise((resolve) => holder.close(resolve)));

    it.each([
      ['serve', []],
      ['serve', ['--workers', '2']],
      ['dev', []],
    ])(
      'svc %s %j: one line suggesting --port, exit 1, no stack',
      async (command, extra) => {
        const result = await runCli([command, '--base-dir', makeProject(), '--port', String(port), ...extra]);
        expect(result.code).toBe(1);
        expect(result.stderr).toBe(
          `svc: cannot listen on 127.0.0.1:${port}: the port is already in use (another server running?); stop it or choose another port with --port ${port + 1} (or SVC_PORT)\n`,
        );
      },
      TEST_MS,
    );
  });
});
