import { sql } from 'drizzle-orm';
import { defineRouter } from '../kernel/router.js';
import { describeEachDatabase, startTestApp, type TestApp } from '../testing/index.js';

/** Entries stored for `path`, read on the app's own connection the moment a response arrived. */
async function entriesFor(app: TestApp, path: string): Promise<number> {
  const rows = await app.app.runtime.authDb.all<{ n: number | string }>(
    sql`select count(*) as n from svc_activity_log where path = ${path}`,
  );
  return Number(rows[0]!.n);
}

function hitRouter() {
  const router = defineRouter({ prefix: '/sync', name: 'sync', public: true });
  router.post('/hit/:n', { logAs: 'hit {n}' }, () => null);
  return router;
}

describeEachDatabase('activity_log_sync', (database) => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({
      database,
      routers: [hitRouter()],
      settings: { activity_log_enabled: true, activity_log_sync: true },
    });
  });
  afterAll(() => app.close());

  it('has the entry of a logged write stored when its response arrives, one request after another', async () => {
    for (let n = 0; n < 20; n++) {
      const res = await app.post(`/api/sync/hit/${n}`);
      expect(res.status).toBe(200);
      expect(await entriesFor(app, `/api/sync/hit/${n}`)).toBe(1);
    }
  });

  it('has the entry stored when the response arrives for 50 requests in flight together', async () => {
    const missing: string[] = [];
    await Promise.all(
      Array.from({ length: 50 }, async (_, i) => {
        const path = `/api/sync/hit/${1000 + i}`;
        const res = await app.post(path);
        if (res.status !== 200 || (await entriesFor(app, path)) !== 1) missing.push(path);
      }),
    );
    expect(missing).toEqual([]);
  });

  it('stores the entry of a write answered 404 before answering it as well', async () => {
    const res = await app.post('/api/sync/hit/not-a-route/x');
    expect(res.status).toBe(404);
    expect(await entriesFor(app, '/api/sync/hit/not-a-route/x')).toBe(1);
  });
});
