import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { isWatchedFile } from './commands/dev.js';
import { serveArgvOf, settingsOverridesOf, trustProxyOf } from './commands/serve.js';
import { resolveAppSpec } from './load-app.js';
import { CLI_DIR, spawnCli, freePort } from '../../../testing/cli-process.js';

// `svc serve` and `svc dev` as real processes (the built CLI when fresh, else the sources through tsx:
// testing/cli-process.ts).
const TMP_DIR = join(CLI_DIR, '.tmp-test');
const STARTUP_MS = 90_000; // tsx compiles the core on a busy 2-core machine
const REQUEST_TIMEOUT_MS = 10_000;
const SECRET = 'a'.repeat(16) + randomBytes(16).toString('hex');

const TEST_MS = 240_000; // per test and hook: several CLI processes start one after the other

const projects: string[] = [];
const processes: ChildProcess[] = [];

afterAll(() => {
  for (const child of processes)
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  for (const dir of projects) rmSync(dir, { recursive: true, force: true });
});

const MAIN_MJS = `
import { createApp, defineRouter } from '@svc/core';
import { answer } from './answer.mjs';

const demo = defineRouter({ prefix: '/demo', public: true });
demo.get('/answer', { public: true }, async () => ({ answer }));
demo.get('/pid', { public: true }, async () => ({ pid: process.pid }));
demo.get('/slow', { public: true }, async () => {
  process.stderr.write('slow request started\\n');
  await new Promise((resolve) => setTimeout(resolve, 500));
  return { slow: 'done' };
});
export const app = createApp({ routers: [demo] });
`;

/** A project under packages/cli/.tmp-test (inside the repo, so `@svc/core` resolves). */
function makeProject(files: Record<string, string> = {}): string {
  const dir = join(TMP_DIR, `serve-${randomBytes(6).toString('hex')}`);
  mkdirSync(dir, { recursive: true });
  projects.push(dir);
  const all: Record<string, string> = {
    'main.mjs': MAIN_MJS,
    'answer.mjs': 'export const answer = 1;\n',
    '.env': `SVC_SECRET_KEY=${SECRET}\nSVC_AUTH_DATABASE_URL=file:./auth.db\nSVC_AUTO_CREATE_AUTH_SCHEMA=true\n`,
    ...files,
  };
  for (const [name, content] of Object.entries(all)) writeFileSync(join(dir, name), content);
  return dir;
}

interface CliProcess {
  child: ChildProcess;
  stderr: () => string;
  /** Resolves with the first match of `pattern` in stderr (rejects when the process exits first). */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

function startCli(args: string[], env: Record<string, string> = {}): CliProcess {
  const child = spawnCli(args, { cwd: CLI_DIR, env });
  child.stdin.end();
  processes.push(child);
  let stderr = '';
  const listeners = new Set<() => void>();
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
    for (const listener of listeners) listener();
  });
  child.stdout!.resume();
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => {
      for (const listener of listeners) listener();
      resolve({ code, signal });
    }),
  );
  return {
    child,
    stderr: () => stderr,
    exited,
    waitFor(pattern, timeoutMs = STARTUP_MS) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => done(new Error(`timed out waiting for ${pattern}; stderr:\n${stderr}`)),
          timeoutMs,
        );
        const check = () => {
          const match = stderr.match(pattern);
          if (match) done(undefined, match);
          else if (child.exitCode !== null || child.signalCode !== null) {
            done(new Error(`exited before ${pattern}; stderr:\n${stderr}`));
          }
        };
        const done = (error?: Error, match?: RegExpMatchArray) => {
          clearTimeout(timer);
          listeners.delete(check);
          if (error) reject(error);
          else resolve(match!);
        };
        listeners.add(check);
        check();
      });
    },
  };
}

/** One request on a fresh connection (no keep-alive: with workers, each request may reach another process). */
function get(port: number, path: string): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, agent: false }, (res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => (text += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode!, body: text ? JSON.parse(text) : null }));
    });
    req.on('error', reject);
    // A connection handed to a dying worker must not hang a test.
    req.setTimeout(REQUEST_TIMEOUT_MS, () => req.destroy(new Error(`GET ${path} timed out`)));
    req.end();
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Whether `pid` runs (a zombie does not: orphans may stay unreaped here, PID 1 is not always an init). */
function isAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    // no /proc: ask the kernel
  }
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function eventually<T>(probe: () => Promise<T | undefined>, timeoutMs = STARTUP_MS): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await sleep(200);
  }
}

/** Startup problems: one line `svc: …` on stderr, a non-zero exit code, no stack trace. */
async function expectStartupRefused(cli: CliProcess, message: RegExp): Promise<void> {
  const { code } = await cli.exited;
  const lines = cli
    .stderr()
    .split('\n')
    .filter((line) => line !== '');
  expect(code).toBe(1);
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(/^svc: /);
  expect(lines[0]).toMatch(message);
  expect(cli.stderr()).not.toMatch(/\n\s+at /);
}

describe('svc serve', () => {
  let port: number;
  let cli: CliProcess;

  beforeAll(async () => {
    port = await freePort();
    cli = startCli(['serve', '--base-dir', makeProject(), '--port', String(port)]);
    await cli.waitFor(/listening/);
  }, TEST_MS);

  it('prints one listening line with the docs address', () => {
    const url = `http://127.0.0.1:${port}`;
    expect(cli.stderr().split('\n')[0]).toBe(`svc: listening on ${url} (docs: ${url}/docs)`);
  });

  it(
    'serves the core health route and the project routes',
    async () => {
      const live = await get(port, '/api/health/live');
      expect(live.status).toBe(200);
      expect(live.body).toEqual({ status: 'ok' });
      const answer = await get(port, '/api/demo/answer');
      expect(answer.status).toBe(200);
      expect(answer.body.data).toEqual({ answer: 1 });
      expect((await get(port, '/api/demo/pid')).body.data.pid).toBe(cli.child.pid);
    },
    TEST_MS,
  );

  it(
    'lets an in-flight request finish on Ctrl-C and the signals relayed with it, then exits 0',
    async () => {
      const slow = get(port, '/api/demo/slow');
      await cli.waitFor(/slow request started/);
      // Ctrl-C under `pnpm demo`: the terminal's SIGINT, then pnpm's relayed copy of it and the SIGTERM it turns
      // a second one into, a few milliseconds apart; that is one keypress, not the second Ctrl-C that stops
      // waiting (exit 130).
      cli.child.kill('SIGINT');
      await new Promise((resolve) => setTimeout(resolve, 50));
      cli.child.kill('SIGINT');
      cli.child.kill('SIGTERM');
      const res = await slow;
      expect(res.status).toBe(200);
      expect(res.body.data).toEqual({ slow: 'done' });
      expect(await cli.exited).toEqual({ code: 0, signal: null });
    },
    TEST_MS,
  );
});

describe('svc serve: host and port priority', () => {
  it(
    'takes --port over SVC_PORT over .env over svc.yaml over the default',
    async () => {
      const [yamlPort, dotenvPort, envPort, optionPort] = await Promise.all([
        freePort(),
        freePort(),
        freePort(),
        freePort(),
      ]);
      const dotenv = `SVC_SECRET_KEY=${SECRET}\nSVC_AUTH_DATABASE_URL=file:./auth.db\nSVC_AUTO_CREATE_AUTH_SCHEMA=true\n`;
      const yaml = `host: 127.0.0.1\nport: ${yamlPort}\n`;
      const cases: {
        expected: number;
        files: Record<string, string>;
        env: Record<string, string>;
        args: string[];
      }[] = [
        {
          expected: optionPort,
          files: { '.env': `${dotenv}SVC_PORT=${dotenvPort}\n` },
          env: { SVC_PORT: String(envPort) },
          args: ['--port', String(optionPort)],
        },
        {
          expected: envPort,
          files: { '.env': `${dotenv}SVC_PORT=${dotenvPort}\n` },
          env: { SVC_PORT: String(envPort) },
          args: [],
        },
        { expected: dotenvPort, files: { '.env': `${dotenv}SVC_PORT=${dotenvPort}\n` }, env: {}, args: [] },
        { expected: yamlPort, files: {}, env: {}, args: [] },
      ];
      const started = cases.map((c) =>
        startCli(['serve', '--base-dir', makeProject({ ...c.files, 'svc.yaml': yaml }), ...c.args], c.env),
      );
      const ports = await Promise.all(
        started.map(async (cli) =>
          Number((await cli.waitFor(/listening on http:\/\/127\.0\.0\.1:(\d+) /))[1]),
        ),
      );
      expect(ports).toEqual(cases.map((c) => c.expected));
      for (const [i, cli] of started.entries()) {
        expect((await get(ports[i]!, '/api/health/live')).status).toBe(200);
        cli.child.kill('SIGTERM');
      }
      for (const cli of started) expect((await cli.exited).code).toBe(0);
    },
    TEST_MS,
  );
});

describe('svc serve: startup problems', () => {
  it(
    'refuses a missing secret key, an invalid log_level, a secret in svc.yaml and a missing app',
    async () => {
      const port = String(await freePort());
      const base = ['serve', '--port', port, '--base-dir'];
      const noSecret = startCli([...base, makeProject({ '.env': 'SVC_AUTH_DATABASE_URL=file:./auth.db\n' })]);
      const shortSecret = startCli([...base, makeProject({ '.env': 'SVC_SECRET_KEY=too-short\n' })]);
      const badLevel = startCli([...base, makeProject()], { SVC_LOG_LEVEL: 'verbose' });
      const yamlSecret = startCli([...base, makeProject({ 'svc.yaml': `secret_key: ${SECRET}\n` })]);
      const noExport = startCli([...base, makeProject(), '--app', 'main:application']);
      const noModule = startCli([...base, makeProject(), '--app', 'server:app']);
      const commonJs = startCli([
        ...base,
        makeProject({
          'package.json': '{ "type": "commonjs" }\n',
          'main.ts': "import { createApp } from '@svc/core';\nexport const app = createApp();\n",
        }),
        '--app',
        'main.ts:app',
      ]);
      await Promise.all([
        expectStartupRefused(noSecret, /secret_key is not set/),
        expectStartupRefused(shortSecret, /secret_key is too short/),
        expectStartupRefused(badLevel, /invalid setting 'log_level'/),
        expectStartupRefused(yamlSecret, /svc\.yaml: 'secret_key' is a secret/),
        expectStartupRefused(noExport, /main\.mjs has no export 'application'/),
        expectStartupRefused(noModule, /none of server\.ts, server\.js, server\.mjs exists/),
        expectStartupRefused(commonJs, /not an ES module package.*npm pkg set type=module/),
      ]);
    },
    TEST_MS,
  );

  it(
    'refuses an unknown --log-level on one line with exit code 2',
    async () => {
      const cli = startCli(['serve', '--base-dir', makeProject(), '--log-level', 'loud']);
      const { code } = await cli.exited;
      expect(code).toBe(2);
      expect(cli.stderr().trim().split('\n')).toEqual([
        expect.stringMatching(/^svc: Invalid values: .*log-level/),
      ]);
    },
    TEST_MS,
  );
});

/** SPEC "Startup rules" 5: the keys every JSON line carries. */
const JSON_LINE_KEYS = ['time', 'level', 'logger', 'message', 'request_id'];

/** Every line of `stderr` as a parsed object; a line that is not one JSON object with the keys fails the test. */
function jsonLines(stderr: string): Record<string, unknown>[] {
  return stderr
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => {
      let record: unknown;
      try {
        record = JSON.parse(line);
      } catch {
        throw new Error(`a stderr line is not JSON: ${line}\nstderr:\n${stderr}`);
      }
      expect({ line, keys: Object.keys(record as object) }).toEqual({
        line,
        keys: expect.arrayContaining(JSON_LINE_KEYS),
      });
      return record as Record<string, unknown>;
    });
}

describe("log_format=json: every stderr line is one JSON object, the CLI's own included", () => {
  it(
    "svc serve: the listening line, the request's lines and the shutdown are JSON records",
    async () => {
      const port = await freePort();
      const cli = startCli(['serve', '--base-dir', makeProject(), '--port', String(port)], {
        SVC_LOG_FORMAT: 'json',
      });
      // Scripts read the address from the listening line: it is still there, inside the record's message.
      const [, url] = await cli.waitFor(/listening on (http:\/\/127\.0\.0\.1:\d+)/);
      expect(url).toBe(`http://127.0.0.1:${port}`);
      expect((await get(port, '/api/demo/answer')).body.data).toEqual({ answer: 1 });
      expect((await get(port, '/api/nowhere')).status).toBe(404);
      cli.child.kill('SIGTERM');
      expect(await cli.exited).toEqual({ code: 0, signal: null });

      const records = jsonLines(cli.stderr());
      expect(records).toContainEqual(
        expect.objectContaining({
          level: 'INFO',
          logger: 'svc.cli',
          message: `listening on ${url} (docs: ${url}/docs)`,
          request_id: '-',
        }),
      );
      // The request's lines carry its id (SPEC "Startup rules" 5: `-` only outside a request).
      expect(records.some((record) => record.request_id !== '-')).toBe(true);
    },
    TEST_MS,
  );

  it(
    'svc serve: a refused start is one JSON error record, also when another setting is the problem',
    async () => {
      const port = String(await freePort());
      const noSecret = startCli(
        ['serve', '--port', port, '--base-dir', makeProject({ '.env': 'SVC_LOG_FORMAT=json\n' })],
        {},
      );
      const badLevel = startCli(
        [
          'serve',
          '--port',
          port,
          '--base-dir',
          makeProject({ 'svc.yaml': 'log_format: json\nlog_level: verbose\n' }),
        ],
        {},
      );
      const badOption = startCli(['serve', '--base-dir', makeProject(), '--log-level', 'loud'], {
        SVC_LOG_FORMAT: 'json',
      });
      const cases: [CliProcess, number, RegExp][] = [
        [noSecret, 1, /^secret_key is not set/],
        [badLevel, 1, /^invalid setting 'log_level'/],
        [badOption, 2, /^Invalid values: .*log-level/],
      ];
      for (const [cli, exitCode, message] of cases) {
        expect((await cli.exited).code).toBe(exitCode);
        const records = jsonLines(cli.stderr());
        expect(records).toEqual([
          expect.objectContaining({ level: 'ERROR', logger: 'svc.cli', request_id: '-' }),
        ]);
        expect(records[0]!.message).toMatch(message);
      }
    },
    TEST_MS,
  );

  it(
    "svc dev and svc serve --workers 2: the reload and the primary's lines are JSON records",
    async () => {
      const [devPort, workersPort] = await Promise.all([freePort(), freePort()]);
      const dir = makeProject();
      const dev = startCli(['dev', '--base-dir', dir, '--port', String(devPort)], { SVC_LOG_FORMAT: 'json' });
      const workers = startCli(
        ['serve', '--base-dir', makeProject(), '--port', String(workersPort), '--workers', '2'],
        { SVC_LOG_FORMAT: 'json' },
      );
      await Promise.all([dev.waitFor(/listening on http/), workers.waitFor(/listening on http/)]);

      writeFileSync(join(dir, 'answer.mjs'), 'export const answer = 2;\n');
      await eventually(async () =>
        (await get(devPort, '/api/demo/answer')).body.data.answer === 2 ? true : undefined,
      );
      expect((await get(workersPort, '/api/demo/answer')).status).toBe(200);
      dev.child.kill('SIGTERM');
      workers.child.kill('SIGTERM');
      expect(await dev.exited).toEqual({ code: 0, signal: null });
      expect(await workers.exited).toEqual({ code: 0, signal: null });

      expect(jsonLines(dev.stderr())).toContainEqual(
        expect.objectContaining({
          level: 'INFO',
          logger: 'svc.cli',
          message: 'answer.mjs changed; restarting',
        }),
      );
      const primary = jsonLines(workers.stderr()).filter((record) =>
        String(record.message).startsWith('listening on'),
      );
      expect(primary).toEqual([expect.objectContaining({ level: 'INFO', logger: 'svc.cli' })]);
    },
    TEST_MS,
  );
});

describe('svc serve --workers 2', () => {
  it(
    'serves from two processes, replaces a killed worker and stops all on SIGTERM',
    async () => {
      const port = await freePort();
      const cli = startCli(['serve', '--base-dir', makeProject(), '--port', String(port), '--workers', '2']);
      await cli.waitFor(/listening/);
      expect(cli.stderr().match(/listening/g)).toHaveLength(1);

      const pids = new Set<number>();
      await eventually(async () => {
        pids.add((await get(port, '/api/demo/pid')).body.data.pid);
        return pids.size === 2 ? true : undefined;
      });
      expect(pids.has(cli.child.pid!)).toBe(false);
      const [killed, survivor] = [...pids] as [number, number];
      process.kill(killed, 'SIGKILL');

      const answeredBy: number[] = [];
      const replacement = await eventually(async () => {
        const pid = (await get(port, '/api/demo/pid')).body.data.pid as number;
        answeredBy.push(pid);
        return pid !== survivor && pid !== killed ? pid : undefined;
      });
      expect(answeredBy).not.toContain(killed);
      expect(isAlive(killed)).toBe(false);
      expect(cli.stderr()).toContain(`worker ${killed} died (signal SIGKILL); starting a new one`);

      cli.child.kill('SIGTERM');
      expect(await cli.exited).toEqual({ code: 0, signal: null });
      await eventually(async () => (!isAlive(survivor) && !isAlive(replacement) ? true : undefined), 15_000);
    },
    TEST_MS,
  );
});

describe('svc dev', () => {
  it(
    'restarts the server when a project file changes',
    async () => {
      const port = await freePort();
      const dir = makeProject();
      const cli = startCli(['dev', '--base-dir', dir, '--port', String(port)]);
      await cli.waitFor(/listening/);
      expect((await get(port, '/api/demo/answer')).body.data).toEqual({ answer: 1 });
      const firstPid = (await get(port, '/api/demo/pid')).body.data.pid as number;

      writeFileSync(join(dir, 'answer.mjs'), 'export const answer = 2;\n');
      await eventually(async () =>
        (await get(port, '/api/demo/answer')).body.data.answer === 2 ? true : undefined,
      );
      expect(cli.stderr()).toContain('svc: answer.mjs changed; restarting');
      expect(isAlive(firstPid)).toBe(false);

      cli.child.kill('SIGTERM');
      expect(await cli.exited).toEqual({ code: 0, signal: null });
    },
    TEST_MS,
  );
});

describe('server options', () => {
  it('maps --proxy-headers and --forwarded-allow-ips to Express trust proxy', () => {
    expect(trustProxyOf({ proxyHeaders: true }, {})).toEqual(['loopback']);
    expect(trustProxyOf({ proxyHeaders: true }, { FORWARDED_ALLOW_IPS: '10.0.0.1' })).toEqual(['10.0.0.1']);
    expect(trustProxyOf({ proxyHeaders: true, forwardedAllowIps: ' 10.0.0.1 ,10.1.0.0/16' }, {})).toEqual([
      '10.0.0.1',
      '10.1.0.0/16',
    ]);
    expect(
      trustProxyOf({ proxyHeaders: true, forwardedAllowIps: '*' }, { FORWARDED_ALLOW_IPS: '10.0.0.1' }),
    ).toBe(true);
    expect(trustProxyOf({ proxyHeaders: false, forwardedAllowIps: '*' }, {})).toBe(false);
    expect(() => trustProxyOf({ proxyHeaders: true, forwardedAllowIps: 'proxy.local' }, {})).toThrow(
      /invalid --forwarded-allow-ips entry 'proxy.local'/,
    );
  });

  it('passes host, port and an explicit --log-level as settings (trace is DEBUG)', () => {
    expect(settingsOverridesOf({})).toEqual({});
    expect(settingsOverridesOf({ host: '0.0.0.0', port: 9000, logLevel: 'warning' })).toEqual({
      host: '0.0.0.0',
      port: 9000,
      log_level: 'WARNING',
    });
    expect(settingsOverridesOf({ logLevel: 'trace' })).toEqual({ log_level: 'DEBUG' });
  });

  it('rebuilds the serve command line for workers and dev children', () => {
    expect(
      serveArgvOf({ baseDir: '/srv/p', app: 'main:app', port: 9000, proxyHeaders: false, logLevel: 'debug' }),
    ).toEqual([
      'serve',
      '--base-dir',
      '/srv/p',
      '--app',
      'main:app',
      '--port',
      '9000',
      '--no-proxy-headers',
      '--log-level',
      'debug',
    ]);
  });

  it('resolves --app to main.ts, main.js or main.mjs in that order', () => {
    const dir = makeProject({ 'main.js': MAIN_MJS });
    expect(resolveAppSpec(dir, 'main:app')).toEqual({ file: join(dir, 'main.js'), exportName: 'app' });
    writeFileSync(join(dir, 'main.ts'), MAIN_MJS);
    expect(resolveAppSpec(dir, 'main:api')).toEqual({ file: join(dir, 'main.ts'), exportName: 'api' });
    expect(() => resolveAppSpec(dir, 'main:')).toThrow(/invalid --app 'main:'/);
  });

  it('watches sources, YAML and .env but not database files', () => {
    for (const name of ['main.ts', 'lib/x.js', 'a.mjs', 'svc.yaml', 'svc.yml', '.env'])
      expect(isWatchedFile(name)).toBe(true);
    for (const name of ['auth.db', 'auth.db-wal', 'auth.db-journal', 'README.md', '.env.example']) {
      expect(isWatchedFile(name)).toBe(false);
    }
  });
});
