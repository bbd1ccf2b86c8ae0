import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import {
  createPostgresDatabase,
  reportSkipped,
  TEST_POSTGRES_URL,
  TEST_REDIS_URL,
  TEST_SECRET_KEY,
} from '@svc/core/testing';
import { CLI_DIR, REPO_DIR, runCli, spawnCli, freePort } from '../../../testing/cli-process.js';

// SPEC "Events" with several hosts: two real `svc serve` processes on one PostgreSQL database and one Redis
// (same cache_url and cache_prefix); a login on one reaches a superuser's event socket on the other.
// `ws` is a dependency of @svc/core only: the test borrows it from there.
interface WsClient {
  on(event: 'message', listener: (data: unknown) => void): void;
  on(event: 'close', listener: (code: number) => void): void;
}
const { WebSocket } = createRequire(join(REPO_DIR, 'packages/core/package.json'))('ws') as {
  WebSocket: new (url: string) => WsClient;
};

const TEST_MS = 240_000; // two CLI processes start on a busy 2-core machine (tsx compiles the sources)
const PASSWORD = 'correct-horse-battery';

function serve(dir: string, port: number): { child: ChildProcess; listening: Promise<void> } {
  const child = spawnCli(['serve', '--base-dir', dir, '--port', String(port)], { cwd: CLI_DIR });
  child.stdin!.end();
  child.stdout!.resume();
  let stderr = '';
  const listening = new Promise<void>((resolve, reject) => {
    child.stderr!.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      if (/listening/.test(stderr)) resolve();
    });
    child.once('exit', (code) => reject(new Error(`svc serve exited with ${code}:\n${stderr}`)));
  });
  return { child, listening };
}

/**
 * One request on a connection of its own (`Connection: close`): the SIGTERMs at the end then find no idle
 * keep-alive connection to wait for (docs/deployment.md: a stop waits up to about 5.5 s for those).
 */
async function post(port: number, path: string, init: { token?: string; form?: Record<string, string> }) {
  const headers: Record<string, string> = { Connection: 'close' };
  if (init.token) headers.Authorization = `Bearer ${init.token}`;
  let body: string | undefined;
  if (init.form) {
    headers['Content-Type'] = 'application/x-www-form-urlencoded';
    body = new URLSearchParams(init.form).toString();
  }
  const res = await fetch(`http://127.0.0.1:${port}${path}`, { method: 'POST', headers, body });
  const json = (await res.json()) as any;
  return { status: res.status, body: json?.data ?? json };
}

describe('event fan-out across two svc serve processes', () => {
  if (!TEST_POSTGRES_URL || !TEST_REDIS_URL) {
    reportSkipped('svc serve event fan-out', 'SVC_TEST_POSTGRES_URL and SVC_TEST_REDIS_URL are both needed');
    return;
  }
  const processes: ChildProcess[] = [];
  let dir: string;
  let database: { url: string; drop(): Promise<void> };

  beforeAll(async () => {
    database = await createPostgresDatabase();
    dir = join(CLI_DIR, '.tmp-test', `events-${randomBytes(6).toString('hex')}`);
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      join(dir, 'main.mjs'),
      "import { createApp } from '@svc/core';\nexport const app = createApp();\n",
    );
    writeFileSync(
      join(dir, '.env'),
      [
        `SVC_SECRET_KEY=${TEST_SECRET_KEY}`,
        `SVC_AUTH_DATABASE_URL=${database.url}`,
        'SVC_AUTO_CREATE_AUTH_SCHEMA=true',
        'SVC_EVENTS_BROADCAST_ENABLED=true',
        `SVC_CACHE_URL=${TEST_REDIS_URL}`,
        `SVC_CACHE_PREFIX=svctest:${randomBytes(5).toString('hex')}:`,
        'SVC_LOG_LEVEL=ERROR',
        '',
      ].join('\n'),
    );
    const created = await runCli([
      '--base-dir',
      dir,
      'users',
      'create',
      'root',
      '--password',
      PASSWORD,
      '--superuser',
    ]);
    expect(created.code).toBe(0);
  }, TEST_MS);
  afterAll(async () => {
    for (const child of processes) if (child.exitCode === null) child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
    await database?.drop();
  }, 30_000);

  it(
    'delivers a login on process A to a superuser socket on process B, once',
    async () => {
      const [portA, portB] = [await freePort(), await freePort()];
      const a = serve(dir, portA);
      processes.push(a.child);
      await a.listening; // one at a time: both would create the same tables
      const b = serve(dir, portB);
      processes.push(b.child);
      await b.listening;

      const loginB = await post(portB, '/api/auth/token', { form: { username: 'root', password: PASSWORD } });
      expect(loginB.status).toBe(200);
      const ticket = await post(portB, '/api/core/events/ticket', { token: loginB.body.access_token });
      expect(ticket.status).toBe(200);
      const frames: any[] = [];
      const socket = new WebSocket(`ws://127.0.0.1:${portB}/api/core/events/ws?ticket=${ticket.body.ticket}`);
      const snapshot = new Promise<void>((resolve) =>
        socket.on('message', (data) => {
          frames.push(JSON.parse(String(data)));
          if (frames.length === 1) resolve();
        }),
      );
      await snapshot;
      expect(frames[0].type).toBe('snapshot');

      const loginA = await post(portA, '/api/auth/token', { form: { username: 'root', password: PASSWORD } });
      expect(loginA.status).toBe(200);
      const deadline = Date.now() + 10_000;
      while (!frames.some((f) => f.type === 'login') && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      // The login on B came before the socket; the one on A arrives through Redis, exactly once.
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(frames.filter((f) => f.type === 'login')).toEqual([
        {
          type: 'login',
          timestamp: expect.any(String),
          data: { userId: expect.any(String), username: 'root' },
        },
      ]);

      const closed = new Promise<number>((resolve) => socket.on('close', (code) => resolve(code)));
      b.child.kill('SIGTERM'); // graceful shutdown closes event sockets with 1001
      expect(await closed).toBe(1001);
      a.child.kill('SIGTERM');
      await Promise.all(
        [a.child, b.child].map((child) =>
          child.exitCode !== null ? undefined : new Promise((resolve) => child.once('exit', resolve)),
        ),
      );
    },
    TEST_MS,
  );
});
