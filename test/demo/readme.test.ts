import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_DIR, fetchClosing, freePort } from '../../testing/cli-process.js';

/**
 * The README's first code block, run as a newcomer runs it: in a fresh clone of the committed repository (no
 * `node_modules`, no `dist` anywhere), verbatim, through bash. A clone in the OS temporary directory, outside
 * this working tree, so nothing installed or built here (a linked `svc`, a `dist/`) can make it pass.
 * `pnpm install` compiles better-sqlite3 and the build runs tsc on a shared two-core machine: minutes.
 */
const WHOLE_RUN_MS = 12 * 60_000;
/** Install, build, `svc init`, the demo's migration and `svc serve` until /api/health/live answers. */
const STARTUP_MS = 10 * 60_000;
const DEMO_ADMIN = { username: 'admin', password: 'demo-admin-password' }; // examples/demo/package.json

/** The first ```sh block of a Markdown text, as written there. */
function firstShellBlock(markdown: string): string {
  const match = /^```sh\n([\s\S]*?)^```$/m.exec(markdown);
  if (!match) throw new Error('README.md has no ```sh code block');
  return match[1]!;
}

/**
 * The environment of a newcomer's shell: no `SVC_*` settings of this process, and nothing pnpm or npm set for
 * the script that may be running this test (its package, lifecycle, node options).
 */
function newcomerEnv(port: number): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value === undefined || key.startsWith('SVC_') || key === 'FORWARDED_ALLOW_IPS') continue;
    if (/^npm_(package_|lifecycle_|execpath$|node_execpath$|command$|config_user_agent$)/.test(key)) continue;
    if (key === 'NODE_OPTIONS' || key === 'INIT_CWD' || key === 'PNPM_SCRIPT_SRC_DIR') continue;
    env[key] = value;
  }
  // SPEC "Command-line interface": for the port the environment wins over .env, svc.yaml and the default, so
  // the demo's `svc serve` listens here instead of on 8000, which another process may hold.
  return { ...env, SVC_PORT: String(port), NO_COLOR: '1', CI: '1' };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('README: the first code block in a fresh clone', () => {
  let workDir: string;
  let clone: string;
  let shell: ChildProcess | undefined;
  let output = '';
  let exited: { code: number | null; signal: NodeJS.Signals | null } | undefined;

  beforeAll(() => {
    workDir = mkdtempSync(join(tmpdir(), 'svc-readme-test-'));
    clone = join(workDir, 'svc');
    const cloned = spawnSync('git', ['clone', '--quiet', '--no-hardlinks', REPO_DIR, clone], {
      encoding: 'utf8',
    });
    if (cloned.status !== 0) throw new Error(`git clone failed: ${cloned.stderr}`);
  });

  afterAll(async () => {
    if (shell?.pid !== undefined && !exited) {
      // The block runs npx, pnpm, sh and node under bash: stop the whole process group it leads.
      try {
        process.kill(-shell.pid, 'SIGTERM');
      } catch {
        // already gone
      }
      const deadline = Date.now() + 15_000;
      while (!exited && Date.now() < deadline) await sleep(100);
      try {
        process.kill(-shell.pid, 'SIGKILL');
      } catch {
        // the group is gone
      }
    }
    rmSync(workDir, { recursive: true, force: true });
  }, 60_000);

  it(
    'installs, builds and starts the demo, which answers /api/health/live, logs the demo admin in and serves /app/',
    async () => {
      expect(existsSync(join(clone, 'node_modules'))).toBe(false);
      const block = firstShellBlock(readFileSync(join(clone, 'README.md'), 'utf8'));
      const port = await freePort();
      const base = `http://127.0.0.1:${port}`;

      shell = spawn('bash', ['-c', block], {
        cwd: clone,
        env: newcomerEnv(port),
        stdio: ['ignore', 'pipe', 'pipe'],
        detached: true, // its own process group, stopped as a whole in afterAll
      });
      shell.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
      shell.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
      shell.once('exit', (code, signal) => (exited = { code, signal }));

      const deadline = Date.now() + STARTUP_MS;
      // Every request on a connection of its own (fetchClosing): afterAll's SIGTERM then finds no idle
      // keep-alive connection to wait for (docs/deployment.md: a stop waits up to about 5.5 s for those).
      let live: Response | undefined;
      while (!live) {
        if (exited) {
          throw new Error(
            `the README's first code block ended (${JSON.stringify(exited)}) before the demo answered:\n${output.slice(-6000)}`,
          );
        }
        if (Date.now() > deadline) {
          throw new Error(`the demo did not answer ${base}/api/health/live in time:\n${output.slice(-6000)}`);
        }
        live = await fetchClosing(`${base}/api/health/live`).catch(() => undefined);
        if (!live) await sleep(500);
      }
      expect(live.status).toBe(200);
      expect(await live.json()).toEqual({ status: 'ok' });
      // The server took its port from SVC_PORT (the demo's svc.yaml sets none; the default is 8000).
      expect(output).toContain(`listening on ${base}`);

      const login = await fetchClosing(`${base}/api/auth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams(DEMO_ADMIN),
      });
      const body = (await login.json()) as { access_token?: unknown; token_type?: unknown };
      expect({ status: login.status, token_type: body.token_type }).toEqual({
        status: 200,
        token_type: 'bearer',
      });
      expect(typeof body.access_token).toBe('string');
      const me = await fetchClosing(`${base}/api/auth/user`, {
        headers: { authorization: `Bearer ${body.access_token as string}` },
      });
      expect(me.status).toBe(200);
      expect(((await me.json()) as { data: { username: string } }).data.username).toBe('admin');

      // The README's next line: the example frontend, built by the demo's start script, on the demo's origin.
      const page = await fetchClosing(`${base}/app/`);
      expect(page.status).toBe(200);
      expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
      expect(await page.text()).toContain('<script type="module" src="./app.js"></script>');
      expect((await fetchClosing(`${base}/app/app.js`)).status).toBe(200);
    },
    WHOLE_RUN_MS,
  );
});
