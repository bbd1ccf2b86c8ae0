import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { sql } from 'drizzle-orm';
import { createAuthSchema } from '@svc/core';
import { createLogger, loadCoreModules, loadSettings, openDatabase } from '@svc/core/internal';
import { describeEachDatabase } from '@svc/core/testing';
import { runCli, type CliResult } from '../../../../testing/cli-process.js';

const DAY_MS = 86_400_000;
const OLD_ENTRIES = 12_000; // more than two purge batches of 5,000
const CLI_TIMEOUT = 120_000;

/** The real program (built when fresh, else its sources through tsx). */
const svc = (args: string[], env: Record<string, string> = {}): Promise<CliResult> => runCli(args, { env });

const silent = createLogger({
  level: 'CRITICAL',
  format: 'text',
  stream: new Writable({ write: (_c, _e, cb) => cb() }),
});

describeEachDatabase('svc audit purge', (database) => {
  let dir: string;
  const settingsOf = () =>
    loadSettings({
      baseDir: dir,
      env: {},
      overrides: { auth_database_url: database.url },
      requireSecretKey: false,
    });
  async function withDb<T>(fn: (db: ReturnType<typeof openDatabase>) => Promise<T>): Promise<T> {
    const db = openDatabase({ url: database.url, settings: settingsOf(), log: silent, baseDir: dir });
    try {
      return await fn(db);
    } finally {
      await db.close();
    }
  }
  const countAll = () =>
    withDb(async (db) =>
      Number((await db.all<{ n: number }>(sql`select count(*) as n from svc_activity_log`))[0]!.n),
    );

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'svc-audit-purge-'));
    writeFileSync(join(dir, '.env'), `SVC_AUTH_DATABASE_URL=${database.url}\n`);
    await withDb(async (db) => {
      const settings = settingsOf();
      const { buildAuthSchema } = await loadCoreModules();
      const schema = buildAuthSchema(settings, db.dialect);
      await createAuthSchema(db, schema);
      const table = schema.activityLog as any;
      const now = Date.now();
      const entry = (ageMs: number, path: string) => ({
        timestamp: new Date(now - ageMs),
        method: 'POST',
        path,
        statusCode: 200,
        durationMs: 1,
      });
      const old = Array.from({ length: OLD_ENTRIES }, (_, i) =>
        entry(40 * DAY_MS + i * 1000, `/api/old/${i}`),
      );
      for (let i = 0; i < old.length; i += 500) await db.orm.insert(table).values(old.slice(i, i + 500));
      await db.orm
        .insert(table)
        .values([
          entry(2 * DAY_MS, '/api/two-days'),
          entry(60_000, '/api/recent-1'),
          entry(1_000, '/api/recent-2'),
        ]);
    });
  }, 60_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it(
    'refuses to guess when activity_log_retention_days is 0 and --days is absent',
    async () => {
      const res = await svc(['audit', 'purge', '--base-dir', dir]);
      expect(res.code).toBe(2);
      expect(res.stderr).toMatch(/^svc: .*pass --days N/);
      expect(await countAll()).toBe(OLD_ENTRIES + 3);
    },
    CLI_TIMEOUT,
  );

  it(
    'only counts with --dry-run',
    async () => {
      const res = await svc(['audit', 'purge', '--base-dir', dir, '--days', '30', '--dry-run']);
      expect(res).toMatchObject({ code: 0, stderr: '' });
      expect(res.stdout).toMatch(
        new RegExp(`^dry run: ${OLD_ENTRIES} activity log entries older than 30 days`),
      );
      expect(await countAll()).toBe(OLD_ENTRIES + 3);
    },
    CLI_TIMEOUT,
  );

  it(
    'deletes entries older than --days in batches, printing progress and the total',
    async () => {
      const res = await svc(['audit', 'purge', '--base-dir', dir, '--days', '30']);
      expect(res).toMatchObject({ code: 0, stderr: '' });
      expect(res.stdout.trim().split('\n')).toEqual([
        `deleted 5000 of ${OLD_ENTRIES} entries`,
        `deleted 10000 of ${OLD_ENTRIES} entries`,
        `deleted ${OLD_ENTRIES} of ${OLD_ENTRIES} entries`,
        expect.stringMatching(
          new RegExp(`^deleted ${OLD_ENTRIES} activity log entries older than 30 days \\(before `),
        ),
      ]);
      expect(await countAll()).toBe(3);
    },
    CLI_TIMEOUT,
  );

  it(
    'uses activity_log_retention_days when --days is absent',
    async () => {
      const res = await svc(['audit', 'purge', '--base-dir', dir], { SVC_ACTIVITY_LOG_RETENTION_DAYS: '1' });
      expect(res).toMatchObject({ code: 0, stderr: '' });
      expect(res.stdout).toMatch(/^deleted 1 of 1 entries\ndeleted 1 activity log entries older than 1 days/);
      const left = await withDb((db) =>
        db.all<{ path: string }>(sql`select path from svc_activity_log order by path`),
      );
      expect(left.map((r) => r.path)).toEqual(['/api/recent-1', '/api/recent-2']);
    },
    CLI_TIMEOUT,
  );
});
