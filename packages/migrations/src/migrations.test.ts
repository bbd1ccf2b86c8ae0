import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import type { Database } from '@svc/core';
import { getTableName, sql, type Table } from 'drizzle-orm';
import {
  createLogger,
  loadCoreModules,
  openDatabase,
  SettingsSchema,
  type Dialect,
} from '@svc/core/internal';
import { describeEachDatabase } from '@svc/core/testing';
import {
  MigrationError,
  STATEMENT_BREAKPOINT,
  chainDir,
  checkSchema,
  createRevision,
  createRevisions,
  currentRevision,
  downgrade,
  pendingRevisions,
  readChain,
  stamp,
  upgrade,
  versionTableName,
  warnIfBehind,
} from './index.js';

const { buildAuthSchema } = await loadCoreModules();

const settings = SettingsSchema.parse({ table_prefix: 'mt_' });
const versionTable = versionTableName(settings);
const quiet = () =>
  createLogger(
    {
      level: 'CRITICAL',
      format: 'text',
      stream: new Writable({ write: (_c, _e, cb) => cb() }),
    },
    'test',
  );

async function tablesOf(db: Database): Promise<string[]> {
  if (db.dialect === 'sqlite') {
    const client = db.native as { prepare(s: string): { all(): { name: string }[] } };
    return client
      .prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'`)
      .all()
      .map((r) => r.name)
      .sort();
  }
  const sql = db.native as { unsafe(q: string): Promise<{ name: string }[]> };
  const rows = await sql.unsafe(`SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public'`);
  return rows.map((r) => r.name).sort();
}

/** The table names the live schema defines (whatever modules exist at test time). */
function schemaTableNames(dialect: Dialect): string[] {
  return Object.values(buildAuthSchema(settings, dialect))
    .map((t) => getTableName(t as Table))
    .sort();
}

describeEachDatabase('migrations of the auth target', (database) => {
  let dir: string;
  let db: Database;
  let schema: Record<string, unknown>;
  const run = () => ({ db, dir, target: 'auth', versionTable });

  beforeAll(() => {
    dir = join(mkdtempSync(join(tmpdir(), 'svc-mig-')), 'migrations', 'auth');
    db = openDatabase({ url: database.url, settings, log: quiet() });
    schema = buildAuthSchema(settings, database.dialect);
  });
  afterAll(async () => {
    await db.close();
    rmSync(join(dir, '..', '..'), { recursive: true, force: true });
  });

  it('autogenerates the first revision from the empty schema, applies it, then has nothing to do', async () => {
    const first = await createRevision({
      dir,
      message: 'initial auth schema',
      dialect: database.dialect,
      schema,
      autogenerate: true,
    });
    expect(first.parent).toBeNull();
    expect(first.revision).not.toBeNull();
    expect(first.revision!.dialect).toBe(database.dialect);
    expect(first.revision!.upgrade.length).toBeGreaterThan(0);
    expect(first.revision!.downgrade.length).toBeGreaterThan(0);
    expect(readdirSync(dir).sort()).toEqual([
      first.revision!.file.replace(/\.sql$/, '.snapshot.json'),
      first.revision!.file,
    ]);

    expect(await pendingRevisions(run())).toHaveLength(1);
    const result = await upgrade(run());
    expect(result).toMatchObject({ from: null, to: first.revision!.id });
    expect(result.steps.map((r) => r.id)).toEqual([first.revision!.id]);
    expect(await tablesOf(db)).toEqual([...schemaTableNames(database.dialect), versionTable].sort());
    expect(await currentRevision(db, versionTable, 'auth')).toBe(first.revision!.id);
    expect(await pendingRevisions(run())).toHaveLength(0);

    expect(await checkSchema({ dir, dialect: database.dialect, schema })).toMatchObject({
      clean: true,
      statements: [],
    });
    const again = await createRevision({
      dir,
      message: 'x',
      dialect: database.dialect,
      schema,
      autogenerate: true,
    });
    expect(again.revision).toBeNull();
    expect(again.parent!.id).toBe(first.revision!.id);
    expect(readdirSync(dir)).toHaveLength(2);
    expect((await upgrade(run())).steps).toHaveLength(0);
  });

  it('round-trips downgrade to base and upgrade to head: tables gone, then back', async () => {
    const down = await downgrade({ ...run(), to: 'base' });
    expect(down.to).toBeNull();
    expect(down.steps).toHaveLength(1);
    expect(await tablesOf(db)).toEqual([versionTable]);
    expect(await currentRevision(db, versionTable, 'auth')).toBeNull();

    const up = await upgrade({ ...run(), to: 'head' });
    expect(up.steps).toHaveLength(1);
    expect(await tablesOf(db)).toEqual([...schemaTableNames(database.dialect), versionTable].sort());
  });

  it('reports the schema as changed when a module adds a table, and generates just that change', async () => {
    const { sqliteTable, text } = await import('drizzle-orm/sqlite-core');
    const { pgTable, varchar } = await import('drizzle-orm/pg-core');
    const extra =
      database.dialect === 'pg'
        ? pgTable('mt_extra', { id: varchar('id', { length: 36 }).primaryKey() })
        : sqliteTable('mt_extra', { id: text('id').primaryKey() });
    const grown = { ...schema, extra };
    const check = await checkSchema({ dir, dialect: database.dialect, schema: grown });
    expect(check.clean).toBe(false);
    expect(check.statements.join('\n')).toContain('mt_extra');

    const second = await createRevision({
      dir,
      message: 'extra table',
      dialect: database.dialect,
      schema: grown,
      autogenerate: true,
    });
    expect(second.revision!.upgrade).toHaveLength(1);
    expect(second.revision!.upgrade[0]).toMatch(/^CREATE TABLE [`"]mt_extra[`"]/);
    expect(second.revision!.downgrade[0]).toMatch(/^DROP TABLE [`"]mt_extra[`"]/);
    expect((await readChain(dir)).map((r) => r.parent)).toEqual([null, (await readChain(dir))[0]!.id]);

    await upgrade(run());
    expect(await tablesOf(db)).toContain('mt_extra');
    const back = await downgrade({ ...run(), to: '-1' });
    expect(back.steps.map((r) => r.id)).toEqual([second.revision!.id]);
    expect(await tablesOf(db)).not.toContain('mt_extra');
    await upgrade(run());
  });

  it('applies hand-edited SQL: a statement added to a revision file runs on upgrade and its undo on downgrade', async () => {
    const manual = await createRevision({
      dir,
      message: 'hand made',
      dialect: database.dialect,
      schema,
      autogenerate: false,
    });
    expect(manual.revision!.upgrade).toEqual([]);
    const path = join(dir, manual.revision!.file);
    const text = readFileSync(path, 'utf8')
      .replace(
        '-- +svc upgrade\n-- (nothing)',
        `-- +svc upgrade\nCREATE TABLE mt_hand (id integer);\n${STATEMENT_BREAKPOINT}\nINSERT INTO mt_hand (id) VALUES (1); INSERT INTO mt_hand (id) VALUES (2);`,
      )
      .replace('-- +svc downgrade\n-- (nothing)', '-- +svc downgrade\nDROP TABLE mt_hand;');
    writeFileSync(path, text);
    await upgrade(run());
    const rows = await db.all<{ n: number | string }>(sql.raw('SELECT count(*) AS n FROM mt_hand'));
    expect(Number(rows[0]!.n)).toBe(2);
    await downgrade({ ...run(), to: '-1' });
    expect(await tablesOf(db)).not.toContain('mt_hand');
    rmSync(path);
    rmSync(path.replace(/\.sql$/, '.snapshot.json'));
  });

  it('rolls a failing upgrade back completely and keeps the recorded head', async () => {
    const before = await currentRevision(db, versionTable, 'auth');
    const broken = await createRevision({
      dir,
      message: 'broken',
      dialect: database.dialect,
      schema,
      autogenerate: false,
    });
    const path = join(dir, broken.revision!.file);
    writeFileSync(
      path,
      readFileSync(path, 'utf8').replace(
        '-- +svc upgrade\n-- (nothing)',
        `-- +svc upgrade\nCREATE TABLE mt_half (id integer);\n${STATEMENT_BREAKPOINT}\nTHIS IS NOT SQL;`,
      ),
    );
    await expect(upgrade(run())).rejects.toThrow(/upgrade of .* failed, nothing was applied/);
    expect(await tablesOf(db)).not.toContain('mt_half');
    expect(await currentRevision(db, versionTable, 'auth')).toBe(before);
    rmSync(path);
    rmSync(path.replace(/\.sql$/, '.snapshot.json'));
  });

  it('applies each revision once when two connections upgrade at the same time', async () => {
    await downgrade({ ...run(), to: 'base' });
    const other = openDatabase({ url: database.url, settings, log: quiet() });
    try {
      const results = await Promise.all([upgrade(run()), upgrade({ ...run(), db: other })]);
      const applied = results.map((r) => r.steps.length).sort();
      expect(applied).toEqual([0, (await readChain(dir)).length]);
      expect(await currentRevision(db, versionTable, 'auth')).toBe((await readChain(dir)).at(-1)!.id);
    } finally {
      await other.close();
    }
  });

  it('refuses a revision generated for the other dialect, with a clear error', async () => {
    const otherDir = join(dir, '..', 'other');
    const otherDialect: Dialect = database.dialect === 'pg' ? 'sqlite' : 'pg';
    await createRevision({
      dir: otherDir,
      message: 'initial',
      dialect: otherDialect,
      schema: buildAuthSchema(settings, otherDialect),
      autogenerate: true,
    });
    const attempt = upgrade({ db, dir: otherDir, target: 'other', versionTable });
    await expect(attempt).rejects.toBeInstanceOf(MigrationError);
    await expect(upgrade({ db, dir: otherDir, target: 'other', versionTable })).rejects.toThrow(
      database.dialect === 'pg'
        ? /generated for SQLite but the database is PostgreSQL/
        : /generated for PostgreSQL but the database is SQLite/,
    );
    await expect(
      createRevision({
        dir: otherDir,
        message: 'next',
        dialect: database.dialect,
        schema,
        autogenerate: true,
      }),
    ).rejects.toThrow(/generated for/);
    expect(await currentRevision(db, versionTable, 'other')).toBeNull();
  });

  it('warnIfBehind logs a warning while revisions are pending, and nothing at head', async () => {
    const lines: string[] = [];
    const log = createLogger(
      {
        level: 'WARNING',
        format: 'json',
        stream: new Writable({ write: (c, _e, cb) => (lines.push(String(c)), cb()) }),
      },
      'svc',
    );
    const runtime = { authDb: db, settings, log, authDatabaseMissing: false };
    const baseDir = join(dir, '..', '..');
    await downgrade({ ...run(), to: '-1' });
    expect(await warnIfBehind(runtime, baseDir)).toBe(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({
      level: 'WARNING',
      message: expect.stringMatching(/auth database is behind: 1 revision/),
    });
    await upgrade(run());
    lines.length = 0;
    expect(await warnIfBehind(runtime, baseDir)).toBe(0);
    expect(lines).toEqual([]);
    expect(await warnIfBehind(runtime, baseDir, 'absent')).toBe(0);
  });

  it('stamp records a revision without running SQL (tables made by auto_create_auth_schema)', async () => {
    const head = (await readChain(dir)).at(-1)!.id;
    await stamp({ ...run(), to: 'base' });
    expect(await currentRevision(db, versionTable, 'auth')).toBeNull();
    await expect(upgrade(run())).rejects.toThrow(/svc migrations stamp/);
    await stamp({ ...run(), to: head });
    expect(await currentRevision(db, versionTable, 'auth')).toBe(head);
  });
});

describeEachDatabase('migrations in a folder per dialect', (database) => {
  let baseDir: string;
  let db: Database;
  const otherDialect = (): Dialect => (database.dialect === 'pg' ? 'sqlite' : 'pg');
  const schemas = (tables: (dialect: Dialect) => Record<string, unknown> = () => ({})) => ({
    sqlite: { ...buildAuthSchema(settings, 'sqlite'), ...tables('sqlite') },
    pg: { ...buildAuthSchema(settings, 'pg'), ...tables('pg') },
  });
  const noteTables = async (dialect: Dialect) => {
    const { sqliteTable, text } = await import('drizzle-orm/sqlite-core');
    const { pgTable, varchar } = await import('drizzle-orm/pg-core');
    return dialect === 'pg'
      ? { note: pgTable('mt_note', { id: varchar('id', { length: 36 }).primaryKey() }) }
      : { note: sqliteTable('mt_note', { id: text('id').primaryKey() }) };
  };
  const lines: string[] = [];
  const runtime = () => ({
    authDb: db,
    settings,
    authDatabaseMissing: false,
    log: createLogger(
      {
        level: 'WARNING',
        format: 'json',
        stream: new Writable({ write: (c, _e, cb) => (lines.push(String(c)), cb()) }),
      },
      'svc',
    ),
  });

  beforeAll(() => {
    baseDir = mkdtempSync(join(tmpdir(), 'svc-mig-dialects-'));
    db = openDatabase({ url: database.url, settings, log: quiet() });
  });
  afterAll(async () => {
    await db.close();
    rmSync(baseDir, { recursive: true, force: true });
  });

  it('writes the revision of both dialects under one id, each into its folder, and nothing when both match', async () => {
    const first = await createRevisions({
      baseDir,
      target: 'auth',
      message: 'initial auth schema',
      autogenerate: true,
      schemas: schemas(),
    });
    expect(first.map((r) => [r.dialect, r.dir])).toEqual([
      ['sqlite', join(baseDir, 'migrations', 'auth', 'sqlite')],
      ['pg', join(baseDir, 'migrations', 'auth', 'pg')],
    ]);
    expect(first[0]!.revision!.id).toBe(first[1]!.revision!.id);
    expect(first.map((r) => r.revision!.dialect)).toEqual(['sqlite', 'pg']);
    expect(readFileSync(join(first[1]!.dir, first[1]!.revision!.file), 'utf8')).toMatch(/^-- dialect: pg$/m);
    expect(readdirSync(join(baseDir, 'migrations', 'auth')).sort()).toEqual(['pg', 'sqlite']);

    const again = await createRevisions({
      baseDir,
      target: 'auth',
      message: 'x',
      autogenerate: true,
      schemas: schemas(),
    });
    expect(again.map((r) => r.revision)).toEqual([null, null]);
  });

  it('upgrades the database from the folder of its own dialect and is clean against its schema', async () => {
    const dir = await chainDir(baseDir, 'auth', database.dialect);
    expect(dir).toBe(join(baseDir, 'migrations', 'auth', database.dialect));
    const result = await upgrade({ db, dir, target: 'auth', versionTable });
    expect(result.steps).toHaveLength(1);
    expect(result.steps[0]!.dialect).toBe(database.dialect);
    expect(await tablesOf(db)).toEqual([...schemaTableNames(database.dialect), versionTable].sort());
    expect(
      await checkSchema({ dir, dialect: database.dialect, schema: schemas()[database.dialect] }),
    ).toMatchObject({ clean: true });
    lines.length = 0;
    expect(await warnIfBehind(runtime(), baseDir)).toBe(0);
    expect(lines).toEqual([]);
  });

  it('writes a schema change into both folders; the other dialect is refused in a folder not its own', async () => {
    const sqliteNote = await noteTables('sqlite');
    const pgNote = await noteTables('pg');
    const grown = await createRevisions({
      baseDir,
      target: 'auth',
      message: 'note table',
      autogenerate: true,
      schemas: schemas((d) => (d === 'pg' ? pgNote : sqliteNote)),
    });
    expect(grown.map((r) => r.revision!.upgrade)).toEqual([
      [expect.stringMatching(/^CREATE TABLE `mt_note`/)],
      [expect.stringMatching(/^CREATE TABLE "mt_note"/)],
    ]);
    const dir = await chainDir(baseDir, 'auth', database.dialect);
    expect((await upgrade({ db, dir, target: 'auth', versionTable })).steps).toHaveLength(1);
    expect(await tablesOf(db)).toContain('mt_note');
    const otherDir = await chainDir(baseDir, 'auth', otherDialect());
    await expect(upgrade({ db, dir: otherDir, target: 'auth', versionTable })).rejects.toThrow(
      new RegExp(`generated for .* but the database is .*each dialect has its own folder`),
    );
  });

  it('writes nothing for any dialect when one schema is of the wrong dialect or one change is ambiguous', async () => {
    const before = () =>
      ['sqlite', 'pg'].map((d) => readdirSync(join(baseDir, 'migrations', 'auth', d)).length);
    const counts = before();
    await expect(
      createRevisions({
        baseDir,
        target: 'auth',
        message: 'wrong',
        autogenerate: true,
        schemas: { sqlite: schemas().sqlite, pg: schemas().sqlite },
      }),
    ).rejects.toThrow(/holds tables of another dialect/);
    const renamed = async (d: Dialect) => {
      const { sqliteTable, text } = await import('drizzle-orm/sqlite-core');
      const { pgTable, varchar } = await import('drizzle-orm/pg-core');
      return d === 'pg'
        ? { note: pgTable('mt_memo', { id: varchar('id', { length: 36 }).primaryKey() }) }
        : { note: sqliteTable('mt_memo', { id: text('id').primaryKey() }) };
    };
    const sqliteMemo = await renamed('sqlite');
    const pgMemo = await renamed('pg');
    await expect(
      createRevisions({
        baseDir,
        target: 'auth',
        message: 'renamed',
        autogenerate: true,
        interactive: false,
        schemas: schemas((d) => (d === 'pg' ? pgMemo : sqliteMemo)),
      }),
    ).rejects.toThrow(/ambiguous/);
    expect(before()).toEqual(counts);
  });

  it('reads the layout of earlier versions (revisions directly in the target folder) for their dialect', async () => {
    const legacy = join(baseDir, 'legacy');
    const flat = join(legacy, 'migrations', 'auth');
    await createRevision({
      dir: flat,
      message: 'initial auth schema',
      dialect: database.dialect,
      schema: schemas()[database.dialect],
      autogenerate: true,
    });
    expect(await chainDir(legacy, 'auth', database.dialect)).toBe(flat);
    expect(await chainDir(legacy, 'auth', otherDialect())).toBe(join(flat, otherDialect()));
    // The other dialect's first revision goes into its own folder; the flat files keep serving theirs.
    const written = await createRevisions({
      baseDir: legacy,
      target: 'auth',
      message: 'other dialect',
      autogenerate: true,
      schemas: schemas(),
    });
    const byDialect = Object.fromEntries(written.map((r) => [r.dialect, r]));
    expect(byDialect[database.dialect]).toMatchObject({ dir: flat, revision: null });
    expect(byDialect[otherDialect()]!.dir).toBe(join(flat, otherDialect()));
    expect(byDialect[otherDialect()]!.revision!.parent).toBeNull();
    expect(await chainDir(legacy, 'auth', database.dialect)).toBe(flat);
  });

  it('warnIfBehind says when the target folder has no revisions for the database dialect', async () => {
    const only = join(baseDir, 'only-other');
    await createRevisions({
      baseDir: only,
      target: 'auth',
      message: 'initial',
      autogenerate: true,
      schemas: { [otherDialect()]: schemas()[otherDialect()] },
    });
    lines.length = 0;
    expect(await warnIfBehind(runtime(), only)).toBe(0);
    expect(JSON.parse(lines[0]!)).toMatchObject({
      level: 'WARNING',
      message: expect.stringContaining(
        `migrations/auth/${database.dialect} holds no revisions for the ${database.dialect === 'pg' ? 'PostgreSQL' : 'SQLite'} auth database`,
      ),
    });
  });
});
