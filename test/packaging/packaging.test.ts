import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { TEST_POSTGRES_URL } from '@svc/core/testing';
import { distIsFresh } from '../../testing/cli-process.js';

/**
 * The three packages, packed like a publish and installed with npm into a project outside the repository, give
 * a working `svc init` / `svc serve` / login / protected route; a strict TypeScript consumer compiles against
 * their declarations; an install without optional dependencies runs on PostgreSQL. The work happens in
 * scripts/pack-install-check.mjs (also runnable by hand); this test runs it and reads its JSON summary.
 * It packs (building first unless every package's dist/ is newer than its sources) and runs `npm install` (the
 * npm registry is needed for third-party dependencies; better-sqlite3 may compile from source), so it takes
 * minutes.
 */
const REPO = resolve(import.meta.dirname ?? new URL('.', import.meta.url).pathname, '../..');
const SCRIPT = join(REPO, 'scripts', 'pack-install-check.mjs');
/** Build + pack + npm install (+ a native compile of better-sqlite3) on a shared two-core machine. */
const CHECK_TIMEOUT_MS = 15 * 60_000;

interface TarballSummary {
  name: string;
  version: string;
  file: string;
  bytes: number;
  files: number;
  javascript: number;
  declarations: number;
  dependencies: Record<string, string>;
}

interface CheckResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Runs the script in its own process group, so that a timeout stops npm, npx and the server with it. */
function runCheck(workDir: string): { result: Promise<CheckResult>; stop(): void } {
  // CI builds before the tests (the README's test command): the packages are packed as built, not built again.
  const build = distIsFresh(['core', 'migrations', 'cli', 'client', 'react']) ? ['--skip-build'] : [];
  const child = spawn(process.execPath, [SCRIPT, '--work-dir', workDir, ...build], {
    cwd: REPO,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const result = new Promise<CheckResult>((resolveResult) => {
    child.once('exit', (code, signal) => resolveResult({ code, signal, stdout, stderr }));
  });
  return {
    result,
    stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      try {
        process.kill(-child.pid!, 'SIGTERM'); // the script cleans up on SIGTERM
      } catch {
        // already gone
      }
    },
  };
}

describe('packaging: tarballs installed with npm outside the repository (docs/getting-started.md)', () => {
  let workDir: string;
  let check: ReturnType<typeof runCheck> | undefined;

  beforeAll(() => {
    workDir = mkdtempSync(join(tmpdir(), 'svc-packaging-test-'));
  });

  afterAll(async () => {
    check?.stop();
    await check?.result;
    rmSync(workDir, { recursive: true, force: true });
  });

  it(
    'packs complete tarballs, installs them, and serves a project made with svc init',
    async () => {
      check = runCheck(workDir);
      const { code, signal, stdout, stderr } = await check.result;
      if (code !== 0)
        throw new Error(`pack-install-check failed (${code ?? signal}):\n${stderr.slice(-8000)}`);
      const summary = JSON.parse(stdout.trim().split('\n').pop()!) as {
        ok: boolean;
        tarballs: TarballSummary[];
        checks: string[];
        declarationErrorsElsewhere: Record<string, number>;
        postgresOnly: { fileDatabaseError: string; postgres: boolean; drizzleKitError?: string };
      };
      expect(summary.ok).toBe(true);
      expect(summary.tarballs.map((tarball) => tarball.name)).toEqual([
        '@svc/core',
        '@svc/migrations',
        '@svc/cli',
        '@svc/client',
        '@svc/react',
      ]);
      // The browser and Node client depends on no other svc package (docs/client.md).
      expect(
        Object.keys(summary.tarballs.find((tarball) => tarball.name === '@svc/client')!.dependencies),
      ).toEqual(['openapi-fetch']);
      // The React bindings bring the client only; React is the project's own (a peer, docs/react.md).
      expect(
        Object.keys(summary.tarballs.find((tarball) => tarball.name === '@svc/react')!.dependencies),
      ).toEqual(['@svc/client']);
      for (const tarball of summary.tarballs) {
        expect(tarball.declarations).toBeGreaterThan(0);
        expect(tarball.javascript).toBeGreaterThan(0);
        // pnpm pack replaced workspace:* by the released version of the sibling package.
        for (const [dependency, range] of Object.entries(tarball.dependencies)) {
          if (dependency.startsWith('@svc/')) expect(range).toBe(tarball.version);
        }
      }
      expect(summary.tarballs.find((tarball) => tarball.name === '@svc/cli')!.dependencies).toHaveProperty(
        'tsx',
      );
      expect(summary.checks).toEqual(
        expect.arrayContaining([
          'svc init',
          'svc serve',
          'protected route 200/401/403',
          '@svc/client login and user() on Node',
          'SIGTERM exit 0',
        ]),
      );
      // A strict consumer (skipLibCheck off) compiles against svc's declarations: the script fails on any
      // error in them or in the consumer's files; only other packages' own declarations may have some.
      expect(summary.checks).toContain('tsc on the project (strict, skipLibCheck off)');
      expect(
        Object.keys(summary.declarationErrorsElsewhere).filter((pkg) => pkg.startsWith('@svc/')),
      ).toEqual([]);
      expect(summary.checks).toContain('svc init Docs line');
      // Installed without better-sqlite3: a file database names the fix; PostgreSQL works.
      expect(summary.postgresOnly.fileDatabaseError).toBe('DB_SQLITE_DRIVER_MISSING');
      if (TEST_POSTGRES_URL) {
        expect(summary.postgresOnly.postgres).toBe(true);
        // @svc/core alone (no drizzle-kit, an optional peer) asked to create tables names the fix.
        expect(summary.postgresOnly.drizzleKitError).toBe('DB_DRIZZLE_KIT_MISSING');
      }
      expect(stderr).not.toContain('FAILED');
    },
    CHECK_TIMEOUT_MS,
  );
});
