import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { desc, eq, sql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/better-sqlite3';
import * as sq from 'drizzle-orm/sqlite-core';
import { SettingsSchema } from '../config/schema.js';
import { createLogger } from '../log/logger.js';
import { openDatabase } from './database.js';
import { withStatementCache } from './statement-cache.js';

const notes = sq.sqliteTable('note', {
  id: sq.integer('id').primaryKey({ autoIncrement: true }),
  text: sq.text('text').notNull(),
  createdAt: sq.integer('created_at', { mode: 'timestamp_ms' }).notNull(),
});

describe('SQLite statement cache (docs/performance.md)', () => {
  let dir: string;
  let client: BetterSqlite3.Database;
  let compiled: string[];
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'svc-stmt-'));
    client = new BetterSqlite3(join(dir, 'cache.db'));
    client.exec(
      'CREATE TABLE note (id INTEGER PRIMARY KEY AUTOINCREMENT, text TEXT NOT NULL, created_at INTEGER NOT NULL)',
    );
    // Counts the statements the native client really compiles.
    compiled = [];
    const prepare = client.prepare.bind(client);
    client.prepare = ((source: string) => {
      compiled.push(source);
      return prepare(source);
    }) as typeof client.prepare;
  });
  afterEach(() => {
    client.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('compiles a query built again on every call only once, with the values of each call', async () => {
    const orm = drizzle({ client: withStatementCache(client) });
    const at = new Date('2026-11-24T10:00:00.000Z');
    for (let i = 0; i < 50; i++) await orm.insert(notes).values({ text: `n${i}`, createdAt: at });
    const found: string[] = [];
    for (let i = 0; i < 50; i += 10) {
      const [row] = await orm
        .select()
        .from(notes)
        .where(eq(notes.text, `n${i}`));
      found.push(row!.text);
      expect(row!.createdAt).toEqual(at);
    }
    expect(found).toEqual(['n0', 'n10', 'n20', 'n30', 'n40']);
    expect(compiled.filter((s) => s.startsWith('insert'))).toHaveLength(1);
    expect(compiled.filter((s) => s.startsWith('select'))).toHaveLength(1);
  });

  it('answers objects to a plain query and arrays to drizzle mapped reads of the same SQL', async () => {
    const orm = drizzle({ client: withStatementCache(client) });
    await orm.insert(notes).values({ text: 'one', createdAt: new Date(0) });
    const query = sql`select "id", "text", "created_at" from "note"`;
    // drizzle maps `select()` itself (raw mode) and hands `all(sql)` rows through as the driver gives them.
    const mapped = await orm
      .select({ id: notes.id, text: notes.text, createdAt: notes.createdAt })
      .from(notes);
    const plain = orm.all<Record<string, unknown>>(query);
    const mappedAgain = await orm
      .select({ id: notes.id, text: notes.text, createdAt: notes.createdAt })
      .from(notes);
    expect(mapped).toEqual([{ id: 1, text: 'one', createdAt: new Date(0) }]);
    expect(plain).toEqual([{ id: 1, text: 'one', created_at: 0 }]);
    expect(mappedAgain).toEqual(mapped);
    // One compiled statement served all three: the mode was switched back and forth.
    expect(compiled.filter((s) => s.startsWith('select'))).toHaveLength(1);
  });

  it('never shares a statement that is still being iterated', () => {
    const cached = withStatementCache(client) as unknown as {
      prepare(sql: string): { native: BetterSqlite3.Statement; all(): unknown[] };
    };
    client.exec("INSERT INTO note (text, created_at) VALUES ('a', 0), ('b', 0)");
    const first = cached.prepare('SELECT text FROM note ORDER BY id');
    const iterator = first.native.iterate();
    iterator.next();
    const second = cached.prepare('SELECT text FROM note ORDER BY id');
    expect(second).not.toBe(first);
    expect(second.all()).toEqual([{ text: 'a' }, { text: 'b' }]);
    iterator.return?.();
    expect(cached.prepare('SELECT text FROM note ORDER BY id')).toBe(first);
  });

  it('keeps at most its size of statements, the least recently used leaving first', () => {
    const cached = withStatementCache(client, 2) as unknown as { prepare(sql: string): unknown };
    const a = cached.prepare('SELECT 1');
    cached.prepare('SELECT 2');
    expect(cached.prepare('SELECT 1')).toBe(a);
    cached.prepare('SELECT 3'); // evicts SELECT 2
    cached.prepare('SELECT 2');
    expect(compiled).toEqual(['SELECT 1', 'SELECT 2', 'SELECT 3', 'SELECT 2']);
  });

  it('follows a schema change made after a statement was cached', async () => {
    const orm = drizzle({ client: withStatementCache(client) });
    await orm.insert(notes).values({ text: 'x', createdAt: new Date(0) });
    const list = () => orm.select().from(notes).orderBy(desc(notes.id));
    expect(await list()).toHaveLength(1);
    client.exec('ALTER TABLE note ADD COLUMN extra TEXT');
    client.exec("INSERT INTO note (text, created_at, extra) VALUES ('y', 0, 'e')");
    expect((await list()).map((n) => n.text)).toEqual(['y', 'x']);
  });

  it('is what the kernel hands drizzle for a file database, its own client kept for native work', async () => {
    const settings = SettingsSchema.parse({});
    const db = openDatabase({
      url: `file:${join(dir, 'kernel.db')}`,
      settings,
      log: createLogger({ level: 'CRITICAL', format: 'text' }),
    });
    try {
      await db.exec(
        'CREATE TABLE note (id INTEGER PRIMARY KEY AUTOINCREMENT, text TEXT NOT NULL, created_at INTEGER NOT NULL)',
      );
      const native = db.native as BetterSqlite3.Database;
      const session = (db.orm as unknown as { session: { client: unknown } }).session;
      expect(session.client).not.toBe(native);
      expect(Object.getPrototypeOf(session.client)).toBe(native);
      await db.transaction(async (tx) => {
        await tx.insert(notes).values({ text: 'in a transaction', createdAt: new Date(0) });
      });
      expect((await db.orm.select().from(notes)).map((n) => n.text)).toEqual(['in a transaction']);
    } finally {
      await db.close();
    }
  });
});
