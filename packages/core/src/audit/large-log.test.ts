import { asc, desc, sql } from 'drizzle-orm';
import { describeEachDatabase, startTestApp, type LoggedInClient, type TestApp } from '../testing/index.js';
import { TOTAL_COUNT_BOUND } from './constants.js';
import type { ActivityLogTable, NewActivity } from './tables.js';

// docs/activity-log.md "Large logs": keyset continuation, the text index, the bounded total and the read
// worker of a file database, at small sizes (the million-row figures are the bench's: `pnpm bench --data`).

const USERS = ['Alice', 'bob', 'Chloé', 'dave', null] as const;
const uid = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

/** Entry `i`: repeated timestamps, usernames (some null), methods and status codes, so every sort has ties. */
function entry(i: number): NewActivity {
  const user = USERS[i % USERS.length]!;
  return {
    timestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, Math.floor(i / 3))),
    userId: user === null ? null : uid(i % USERS.length),
    username: user,
    method: ['POST', 'PATCH', 'DELETE'][i % 3]!,
    path:
      i % 17 === 0 ? '/api/auth/refresh-token' : `/api/Notes/${i % 40}/Archive_${i % 7 === 0 ? '100%' : 'x'}`,
    statusCode: [200, 201, 400, 404][i % 4]!,
    durationMs: i % 11,
    description: null,
  };
}
const SEED = Array.from({ length: 240 }, (_, i) => entry(i + 1));

/** The entries `search` matches per SPEC "Audit routes": case-insensitive substring of username or path. */
function expectedSearch<T extends { username: string | null; path: string }>(text: string, rows: T[]): T[] {
  const needle = text.toLowerCase();
  return rows.filter(
    (r) => (r.username ?? '').toLowerCase().includes(needle) || r.path.toLowerCase().includes(needle),
  );
}

/**
 * Waits out a kept-alive socket the server may close just as the next request reuses it (the bulk insert
 * before takes about as long as the server's keep-alive timeout): one fresh request, its outcome ignored.
 */
async function settleSockets(get: (path: string) => Promise<unknown>): Promise<void> {
  await get('/api/health/live').catch(() => undefined);
}

describeEachDatabase('Audit routes on a large log', (database) => {
  let app: TestApp;
  let admin: LoggedInClient;
  let table: ActivityLogTable;

  async function logs(query: string) {
    const res = await admin.get(`/api/admin/audit/logs?${query}`);
    expect({ query, status: res.status }).toEqual({ query, status: 200 });
    return res.body.data as {
      items: { id: number; username: string | null; path: string }[];
      total: number;
      pages: number;
    };
  }

  beforeAll(async () => {
    app = await startTestApp({ database, settings: { activity_log_enabled: true } });
    admin = await app.loginAs(await app.createUser({ username: 'root', isSuperuser: true }));
    await app.app.runtime.ports.get('activity').recent(1); // the login's entry is written first
    table = (app.app.runtime.tables.audit as { activityLog: ActivityLogTable }).activityLog;
    await app.app.runtime.authDb.orm.delete(table);
    await app.app.runtime.authDb.orm.insert(table).values(SEED);
  });
  afterAll(() => app.close());

  it('continues with `after` exactly where the next `page` starts, in every sort order, NULLs last', async () => {
    for (const orderBy of [
      '-timestamp',
      'timestamp',
      'username',
      '-username',
      'userId',
      '-statusCode',
      'method',
      'id',
      '-durationMs',
    ]) {
      const byPage: number[] = [];
      for (let page = 1; ; page++) {
        const data = await logs(`orderBy=${orderBy}&excludePaths=&pageSize=25&page=${page}`);
        if (data.items.length === 0) break;
        byPage.push(...data.items.map((i) => i.id));
      }
      const byKey: number[] = [];
      let after: number | undefined;
      for (;;) {
        const data = await logs(
          `orderBy=${orderBy}&excludePaths=&pageSize=25${after ? `&after=${after}` : ''}`,
        );
        if (data.items.length === 0) break;
        byKey.push(...data.items.map((i) => i.id));
        after = data.items.at(-1)!.id;
      }
      expect({ orderBy, ids: byKey }).toEqual({ orderBy, ids: byPage });
      expect(new Set(byPage).size).toBe(SEED.length);
    }
    // `page` counts on from `after`; filters apply to the continuation as to the first page.
    const first = await logs('pageSize=10');
    const third = await logs('pageSize=10&page=3');
    expect((await logs(`pageSize=10&page=2&after=${first.items.at(-1)!.id}`)).items).toEqual(third.items);
  });

  it('finds through the text index what a LIKE scan finds, in any letter case, with LIKE characters literal', async () => {
    const rows = await app.app.runtime.authDb.orm
      .select()
      .from(table)
      .orderBy(desc(table.timestamp), desc(table.id));
    for (const text of [
      'alice',
      'ALICE',
      'notes/3',
      'chloé',
      '100%',
      'e_1',
      'archive_x',
      'ob',
      'refresh-token',
      '"x',
      'zzz',
    ]) {
      const data = await logs(`search=${encodeURIComponent(text)}&excludePaths=&pageSize=200`);
      const expected = expectedSearch(text, rows).map((r) => r.id);
      expect({ text, ids: data.items.map((i) => i.id) }).toEqual({ text, ids: expected });
      expect({ text, total: data.total }).toEqual({ text, total: expected.length });
    }
    // pathContains stays case-sensitive when the (case-insensitive) index narrows the rows first.
    const data = await logs('pathContains=Archive_1&excludePaths=&pageSize=200');
    expect(data.items.map((i) => i.id)).toEqual(
      rows.filter((r) => r.path.includes('Archive_1')).map((r) => r.id),
    );
    expect(await logs('pathContains=archive_1&excludePaths=')).toMatchObject({ total: 0 });
  });

  it('answers from the read worker what the server connection reads', async () => {
    const db = app.app.runtime.authDb;
    const direct = await db.orm
      .select()
      .from(table)
      .orderBy(asc(table.username), asc(table.timestamp), asc(table.id));
    const nonNull = direct
      .filter((r) => r.username !== null)
      .concat(direct.filter((r) => r.username === null));
    const res = await admin.get('/api/admin/audit/logs?orderBy=username&excludePaths=&pageSize=200');
    expect(res.body.data.items).toEqual(
      nonNull.slice(0, 200).map((r) => ({
        id: r.id,
        timestamp: r.timestamp.toISOString(),
        userId: r.userId,
        username: r.username,
        method: r.method,
        path: r.path,
        statusCode: r.statusCode,
        durationMs: r.durationMs,
        description: r.description,
        impersonatorId: r.impersonatorId, // SPEC-3 §4
      })),
    );
  });

  it('answers 422 request.validation_error for a bad or unknown `after`, never 500', async () => {
    for (const after of ['abc', '0', '-3', '1.5', '99999999999999999999', '987654321']) {
      const res = await admin.get(`/api/admin/audit/logs?after=${after}`);
      expect({ after, status: res.status }).toEqual({ after, status: 422 });
      expect(res.body.detail[0]).toMatchObject({ code: 'request.validation_error', loc: ['query', 'after'] });
    }
  });

  it(`counts the total exactly up to ${TOTAL_COUNT_BOUND} past the page, then says "more"`, async () => {
    const extra = Array.from({ length: TOTAL_COUNT_BOUND + 60 }, (_, i) => ({
      ...entry(i),
      path: '/api/bulk',
      username: 'bulk',
      timestamp: new Date(Date.UTC(2025, 0, 1)),
    }));
    for (let i = 0; i < extra.length; i += 2000) {
      await app.app.runtime.authDb.orm.insert(table).values(extra.slice(i, i + 2000));
    }
    await settleSockets((path) => admin.get(path));
    try {
      const all = SEED.length + extra.length;
      const lastPage = Math.ceil(all / 50);
      expect(await logs('excludePaths=&pageSize=50')).toMatchObject({ total: TOTAL_COUNT_BOUND + 1 });
      // A page past the bound is counted up to its end plus one ("more"); the last page exactly.
      expect(await logs(`excludePaths=&pageSize=50&page=${lastPage - 1}`)).toMatchObject({
        total: (lastPage - 1) * 50 + 1,
        pages: lastPage,
      });
      expect(await logs(`excludePaths=&pageSize=50&page=${lastPage}`)).toMatchObject({
        total: all,
        pages: lastPage,
      });
      // A page past the end says how many there are; a full page before the bound counts on after its end.
      expect(await logs(`excludePaths=&pageSize=50&page=${lastPage + 3}`)).toMatchObject({
        items: [],
        total: all,
        pages: lastPage,
      });
      const alices = SEED.filter((e) => e.username === 'Alice').length;
      expect(await logs('search=alice&excludePaths=&pageSize=5&page=2')).toMatchObject({ total: alices });
      expect(await logs(`search=alice&excludePaths=&pageSize=5&page=${Math.ceil(alices / 5)}`)).toMatchObject(
        {
          total: alices,
        },
      );
      expect(await logs('search=bulk&pageSize=50')).toMatchObject({ total: TOTAL_COUNT_BOUND + 1 });
      expect(await logs('search=alice&excludePaths=&pageSize=50')).toMatchObject({
        total: SEED.filter((e) => e.username === 'Alice').length,
      });
    } finally {
      await app.app.runtime.authDb.orm.delete(table).where(sql`${table.path} = '/api/bulk'`);
    }
  }, 120_000);
});
