import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { REPO_DIR, cleanEnv } from '../../testing/cli-process.js';

// docs/performance.md "Benchmark suite": `pnpm bench --quick` is CI's smoke test of the benchmark, so that the
// suite cannot rot while the code it drives changes. It runs the built CLI and @svc/core (CI builds first), on
// the file database only (PostgreSQL doubles the time and is the same code), with Better Auth beside it. No
// figure is asserted: on a shared machine a timing says nothing; what must hold is that every scenario ran and
// every request was answered as the scenario expects.
const BENCH_TIMEOUT = 240_000;

interface Row {
  rps?: number;
  cpu?: number;
  total?: number;
  failed?: number;
}

describe('pnpm bench --quick --peer', () => {
  it(
    'runs every scenario, Better Auth beside svc, to the end with no failed request',
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'svc-bench-'));
      try {
        const out = join(dir, 'results.json');
        await promisify(execFile)(
          process.execPath,
          [join(REPO_DIR, 'bench', 'run.mjs'), '--quick', '--peer', '--out', out],
          { cwd: REPO_DIR, env: cleanEnv(), maxBuffer: 16 * 1024 * 1024 },
        );
        const report = JSON.parse(readFileSync(out, 'utf8')) as {
          mode: string;
          databases: Record<
            string,
            { error?: string; rows: Record<string, Row>; peer?: unknown; sizing?: Record<string, number> }
          >;
        };
        expect(report.mode).toBe('quick peer');
        expect(Object.keys(report.databases)).toEqual(['file database (SQLite)']);
        const result = report.databases['file database (SQLite)']!;
        expect(result.error).toBeUndefined();
        const loadRows = [
          'express-bare',
          'express-auth',
          'argon2',
          'login',
          'user',
          'notes',
          'write-on',
          'write-off',
          'write-sync',
          'refresh',
          'user-access-log',
          'forgot-known',
          'forgot-unknown',
          'pat',
          // SPEC-3 §1: the social login exchange, its codes made before the round (bench/lib/oauth.mjs).
          'oauth-exchange',
          'peer-session',
          'login-one',
          'peer-login',
        ];
        for (const key of loadRows) {
          const row = result.rows[key];
          expect({ key, answered: (row?.total ?? 0) > 0, cpuMeasured: Number.isFinite(row?.cpu) }).toEqual({
            key,
            answered: true,
            cpuMeasured: true,
          });
          // A refresh chain loses the tokens in flight when a round ends; every other request must succeed.
          if (key !== 'refresh') expect({ key, failed: row!.failed }).toEqual({ key, failed: 0 });
        }
        for (const key of ['cold-start', 'broadcast', 'idle-socket']) expect(result.rows[key]).toBeDefined();
        // docs/performance.md "Sizing": per-core rates from the CPU per request, and the instance's memory.
        const sizing = result.sizing!;
        for (const key of ['loginsPerCore', 'argon2PerCore', 'refreshesPerCore', 'checksPerCore', 'rssMiB'])
          expect({ key, positive: (sizing[key] ?? 0) > 0 }).toEqual({ key, positive: true });
        expect(sizing.peakMiB).toBeGreaterThanOrEqual(sizing.rssMiB!);
        expect(result.peer).toMatchObject({ version: expect.any(String), pairs: expect.any(Array) });
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
    BENCH_TIMEOUT,
  );
});
