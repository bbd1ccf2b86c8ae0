import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { dirname } from 'node:path';
import { REPO_DIR, cleanEnv, fetchClosing, freePort } from '../../testing/cli-process.js';

// `pnpm demo` from the repository root, as docs/getting-started.md starts it, stopped with Ctrl-C: the real
// pnpm, the demo's start script (its init and migration, then `svc serve`) and one signal to the whole process
// group, as a terminal sends it.
const STARTUP_MS = 240_000;

/** The pnpm a developer runs: the one on PATH, else the one npx keeps (pnpm@10, the repository's manager). */
function pnpmDir(): string {
  const found = spawnSync('sh', ['-c', 'command -v pnpm || npx --yes -p pnpm@10 -c "command -v pnpm"'], {
    encoding: 'utf8',
  });
  const path = found.stdout.trim().split('\n').at(-1) ?? '';
  if (found.status !== 0 || path === '') throw new Error(`no pnpm found: ${found.stderr}`);
  return dirname(path);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('pnpm demo', () => {
  let demo: ChildProcess | undefined;
  afterAll(() => {
    if (demo?.exitCode === null && demo.pid) process.kill(-demo.pid, 'SIGKILL');
  });

  it(
    'answers /favicon.ico with 204, lists the password scheme first and stops cleanly on Ctrl-C',
    async () => {
      const port = await freePort();
      const base = `http://127.0.0.1:${port}`;
      const env = cleanEnv();
      demo = spawn('pnpm', ['demo'], {
        cwd: REPO_DIR,
        // SPEC "Command-line interface": the environment's port wins over the demo's default 8000.
        env: { ...env, PATH: `${pnpmDir()}:${env.PATH ?? ''}`, SVC_PORT: String(port), NO_COLOR: '1' },
        stdio: ['ignore', 'pipe', 'pipe'],
        detached: true, // its own process group, like a terminal's foreground job
      });
      let output = '';
      demo.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
      demo.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
      const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
        demo!.once('exit', (code, signal) => resolve({ code, signal })),
      );

      const deadline = Date.now() + STARTUP_MS;
      while (!output.includes(`listening on ${base}`)) {
        if (demo.exitCode !== null) throw new Error(`pnpm demo ended before listening:\n${output}`);
        if (Date.now() > deadline) throw new Error(`pnpm demo did not listen in time:\n${output}`);
        await sleep(250);
      }

      // Browsers ask for it on every page (the docs, /app/): "no icon", cached, instead of a logged 404.
      // fetchClosing: the Ctrl-C below then finds no idle keep-alive connection to wait for.
      const icon = await fetchClosing(`${base}/favicon.ico`);
      expect(icon.status).toBe(204);
      expect(icon.headers.get('cache-control')).toBe('public, max-age=86400');
      expect(await icon.text()).toBe('');
      const docs = (await (await fetchClosing(`${base}/openapi.json`)).json()) as {
        components: { securitySchemes: Record<string, unknown> };
      };
      // Swagger UI's Authorize lists the schemes in this order: the password form first.
      expect(Object.keys(docs.components.securitySchemes)).toEqual(['oauth2Password', 'bearerAuth']);

      // Ctrl-C: SIGINT to the whole foreground group, which pnpm relays to its script once more (as SIGINT, then
      // SIGTERM); svc serve takes them all as one keypress, stops cleanly and pnpm has no failure to print.
      process.kill(-demo.pid!, 'SIGINT');
      expect(await exited).toEqual({ code: 0, signal: null });
      expect(output).not.toMatch(/ELIFECYCLE|ERR_PNPM|Command failed/);
      expect(output).not.toContain('GET /favicon.ico 404');
    },
    STARTUP_MS + 60_000,
  );
});
