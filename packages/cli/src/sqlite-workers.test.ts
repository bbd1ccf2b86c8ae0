import { randomBytes } from 'node:crypto';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createLogger, openDatabase, SettingsSchema } from '@svc/core/internal';
import { sql } from 'drizzle-orm';
import { CLI_DIR, spawnCli, freePort } from '../../../testing/cli-process.js';

// docs/deployment.md "Workers": several processes (`--workers 2`) write to one SQLite file (WAL, busy_timeout) without
// SQLITE_BUSY errors under load.
const REQUESTS = 2_000;
const CONCURRENCY = 50;
const TEST_MS = 240_000;

const MAIN_MJS = `
import { createApp, defineRouter } from '@svc/core';
const hits = defineRouter({ prefix: '/hits', public: true });
hits.post('/', { status: 201 }, async (ctx) => {
  await ctx.db.exec(\`INSERT INTO hits (pid) VALUES (\${process.pid})\`);
  return { pid: process.pid };
});
export const app = createApp({
  routers: [hits],
  async onStartup(app) {
    await app.runtime.db.exec('CREATE TABLE IF NOT EXISTS hits (id INTEGER PRIMARY KEY AUTOINCREMENT, pid INTEGER NOT NULL)');
  },
});
`;

describe('the file database under two workers (docs/deployment.md "Workers")', () => {
  it(
    `takes ${REQUESTS} concurrent writes from two processes with no busy error and no lost row`,
    async () => {
      const dir = join(CLI_DIR, '.tmp-test', `workers-${randomBytes(5).toString('hex')}`);
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, 'main.mjs'), MAIN_MJS);
      writeFileSync(
        join(dir, '.env'),
        `SVC_SECRET_KEY=${'w'.repeat(40)}\nSVC_AUTH_DATABASE_URL=file:./auth.db\nSVC_AUTO_CREATE_AUTH_SCHEMA=true\n`,
      );
      const port = await freePort();
      const server = spawnCli(['serve', '--workers', '2', '--port', String(port), '--log-level', 'warning'], {
        cwd: dir,
      });
      server.stdin.end();
      let log = '';
      server.stdout.on('data', (chunk: Buffer) => (log += chunk));
      try {
        await new Promise<void>((resolve, reject) => {
          server.stderr.on('data', (chunk: Buffer) => {
            log += chunk;
            if (/listening on/.test(log)) resolve();
          });
          server.on('close', () => reject(new Error(`serve exited: ${log}`)));
        });
        const statuses = new Map<number, number>();
        const pids = new Set<number>();
        let next = 0;
        await Promise.all(
          Array.from({ length: CONCURRENCY }, async () => {
            while (next < REQUESTS) {
              next++;
              // The last CONCURRENCY requests close their connections, so that the SIGTERM below finds no idle
              // keep-alive connection to wait for (docs/deployment.md: a stop waits up to about 5.5 s for those).
              const headers: Record<string, string> =
                next > REQUESTS - CONCURRENCY ? { connection: 'close' } : {};
              const res = await fetch(`http://127.0.0.1:${port}/api/hits/`, { method: 'POST', headers });
              statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
              if (res.status === 201) pids.add(((await res.json()) as { data: { pid: number } }).data.pid);
              else await res.text();
            }
          }),
        );
        expect(Object.fromEntries(statuses)).toEqual({ 201: REQUESTS });
        expect(pids.size).toBe(2); // both workers wrote
        expect(log).not.toMatch(/SQLITE_BUSY|database is locked/i);
      } finally {
        server.kill('SIGTERM');
        await new Promise((resolve) => server.once('close', resolve));
      }
      const db = openDatabase({
        url: `file:${join(dir, 'auth.db')}`,
        settings: SettingsSchema.parse({}),
        log: createLogger({ level: 'CRITICAL', format: 'text' }),
      });
      try {
        const [row] = await db.all<{ n: number }>(sql.raw('SELECT count(*) AS n FROM hits') as never);
        expect(row!.n).toBe(REQUESTS);
      } finally {
        await db.close();
        rmSync(dir, { recursive: true, force: true });
      }
    },
    TEST_MS,
  );
});
