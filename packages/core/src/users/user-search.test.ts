import { eq, sql } from 'drizzle-orm';
import type { CoreTables } from '../kernel/db/tables.js';
import { describeEachDatabase } from '../testing/each.js';
import { startTestApp, type LoggedInClient, type TestApp } from '../testing/test-app.js';
import { USER_TOTAL_COUNT_BOUND } from './store.js';

// docs/performance.md "Large tables": the text index of `search`, kept by the writes that change a
// searched column, the read worker and the bounded total, at small sizes (the 100,000-user figures are the
// bench's: `pnpm bench --data`).

const uid = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

/**
 * Waits out a kept-alive socket the server may close just as the next request reuses it (the bulk insert
 * before takes about as long as the server's keep-alive timeout): one fresh request, its outcome ignored.
 */
async function settleSockets(get: (path: string) => Promise<unknown>): Promise<void> {
  await get('/api/health/live').catch(() => undefined);
}

describeEachDatabase('Admin user search on a large table', (database) => {
  let app: TestApp;
  let admin: LoggedInClient;
  let tables: CoreTables;

  async function search(text: string, pageSize = 200) {
    const res = await admin.get(`/api/admin/user?search=${encodeURIComponent(text)}&pageSize=${pageSize}`);
    expect({ text, status: res.status }).toEqual({ text, status: 200 });
    return res.body.data as { items: { id: string; username: string }[]; total: number; pages: number };
  }

  /** What `search` matches per SPEC "User administration", from the table (case-insensitive substring). */
  async function expected(text: string): Promise<string[]> {
    const rows = await app.app.runtime.authDb.orm.select().from(tables.user);
    const needle = text.toLowerCase();
    return (
      rows
        .filter((u) =>
          [u.username, u.email ?? '', u.firstName, u.lastName].some((v) => v.toLowerCase().includes(needle)),
        )
        // The route's order: newest first, ties by id in the same direction (users/store.ts `list`).
        .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || b.id.localeCompare(a.id))
        .map((u) => u.username)
    );
  }

  beforeAll(async () => {
    app = await startTestApp({ database });
    tables = app.app.runtime.tables.core as unknown as CoreTables;
    admin = await app.loginAs(await app.createUser({ username: 'root', isSuperuser: true }));
    const rows = Array.from({ length: 120 }, (_, i) => ({
      id: uid(i + 1),
      username: `member${i}`,
      email: i % 5 === 0 ? null : `Member${i}@Example.ORG`,
      firstName: ['Zoë', 'Ann_a', 'Bo', ''][i % 4]!,
      // A name that starts with a capital outside ASCII: SQLite's own lower() and LIKE fold ASCII only.
      lastName: i % 7 === 0 ? '100% Sure' : i % 11 === 0 ? 'Öztürk' : 'Smith',
      passwordHash: 'not-a-hash',
      createdAt: new Date(Date.UTC(2026, 0, 1, 0, 0, i % 30)),
    }));
    await app.app.runtime.authDb.orm.insert(tables.user).values(rows);
  });
  afterAll(() => app.close());

  it('finds through the text index what a LIKE scan finds, with LIKE characters literal', async () => {
    for (const text of [
      'member1',
      'MEMBER1',
      'example.org',
      'zoë',
      'ann_a',
      'n_a',
      '100%',
      'bo',
      'mi',
      // Letters outside ASCII, in either case, below and above the text index's three characters.
      'Öz',
      'öZ',
      'ÖZTÜ',
      'tÜ',
      'nobody',
    ]) {
      const data = await search(text);
      const want = await expected(text);
      expect({ text, names: data.items.map((u) => u.username) }).toEqual({ text, names: want });
      expect({ text, total: data.total }).toEqual({ text, total: want.length });
    }
  });

  it('keeps the index with the table: created, renamed, deleted users; logins leave it alone', async () => {
    const db = app.app.runtime.authDb;
    await db.orm
      .update(tables.user)
      .set({ username: 'renamed-person' })
      .where(eq(tables.user.id, uid(3)));
    await db.orm
      .update(tables.user)
      .set({ lastLoginAt: new Date() })
      .where(eq(tables.user.id, uid(4)));
    await db.orm.delete(tables.user).where(eq(tables.user.id, uid(5)));
    await app.createUser({ username: 'fresh-person', firstName: 'Quentin' });
    expect((await search('renamed-pers')).items.map((u) => u.username)).toEqual(['renamed-person']);
    expect((await search('member2')).items.map((u) => u.username)).toEqual(await expected('member2'));
    expect((await search('member4')).items.map((u) => u.username)).toEqual(await expected('member4'));
    expect((await search('quentin')).items.map((u) => u.username)).toEqual(['fresh-person']);
  });

  it(`counts the total exactly up to ${USER_TOTAL_COUNT_BOUND} past the page, then says "more"`, async () => {
    const db = app.app.runtime.authDb;
    const bulk = Array.from({ length: USER_TOTAL_COUNT_BOUND + 10 }, (_, i) => ({
      id: uid(100_000 + i),
      username: `bulk${i}`,
      passwordHash: 'not-a-hash',
      createdAt: new Date(Date.UTC(2025, 0, 1)),
    }));
    for (let i = 0; i < bulk.length; i += 2000) {
      await db.orm.insert(tables.user).values(bulk.slice(i, i + 2000));
    }
    await settleSockets((path) => admin.get(path));
    try {
      expect(await search('bulk', 25)).toMatchObject({ total: USER_TOTAL_COUNT_BOUND + 1 });
      const all = (await db.orm.select({ n: sql<number>`count(*)` }).from(tables.user))[0]!.n;
      const last = Math.ceil(Number(all) / 100);
      const res = await admin.get(`/api/admin/user?pageSize=100&page=${last}`);
      expect(res.body.data).toMatchObject({ total: Number(all), pages: last });
    } finally {
      await db.orm.delete(tables.user).where(sql`${tables.user.username} like 'bulk%'`);
    }
  }, 120_000);
});
