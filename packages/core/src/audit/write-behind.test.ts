import { Agent, request } from 'node:http';
import { Writable } from 'node:stream';
import { sql } from 'drizzle-orm';
import { openDatabase } from '../kernel/db/database.js';
import { createLogger } from '../kernel/log/logger.js';
import { defineRouter } from '../kernel/router.js';
import { describeEachDatabase, startTestApp, type TestApp } from '../testing/index.js';

const REQUESTS = 10_000;
const CONCURRENCY = 50;

const silent = createLogger({
  level: 'CRITICAL',
  format: 'text',
  stream: new Writable({ write: (_c, _e, cb) => cb() }),
});

/**
 * `POST path` on one of the agent's kept-alive connections; resolves with the status. The load goes through
 * node:http rather than the test app's `fetch`: in this file's profile undici on the client side took a third
 * of the process's CPU, the server being what is checked.
 */
function post(agent: Agent, url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', agent }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/** Counts the stored entries on a fresh connection (after the app closed). */
async function countEntries(url: string, settings: TestApp['app']['runtime']['settings']): Promise<number> {
  const db = openDatabase({ url, settings, log: silent });
  try {
    const [row] = await db.all<{ n: number | string }>(sql`select count(*) as n from svc_activity_log`);
    return Number(row!.n);
  } finally {
    await db.close();
  }
}

describeEachDatabase('Activity log write-behind', (database) => {
  it(`stores exactly ${REQUESTS} entries for ${REQUESTS} write requests once the app closed`, async () => {
    const cheap = defineRouter({ prefix: '/cheap', name: 'cheap', public: true });
    cheap.post('/hit', {}, () => null);
    const app = await startTestApp({ database, routers: [cheap], settings: { activity_log_enabled: true } });
    const settings = app.app.runtime.settings;
    const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
    let next = 0;
    let failed = 0;
    // Bounded concurrency: CONCURRENCY requests in flight at any time.
    try {
      await Promise.all(
        Array.from({ length: CONCURRENCY }, async () => {
          while (next < REQUESTS) {
            next++;
            if ((await post(agent, `${app.url}/api/cheap/hit`)) !== 200) failed++;
          }
        }),
      );
    } finally {
      agent.destroy();
    }
    expect(failed).toBe(0);
    await app.close();
    expect(await countEntries(database.url, settings)).toBe(REQUESTS);
  }, 240_000);
});
