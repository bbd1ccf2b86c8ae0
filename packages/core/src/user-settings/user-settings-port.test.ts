import { Writable } from 'node:stream';
import { eq } from 'drizzle-orm';
import type { Cache } from '../kernel/cache/cache.js';
import type { CoreTables } from '../kernel/db/tables.js';
import { createLogger } from '../kernel/log/logger.js';
import { defineRouter } from '../kernel/router.js';
import {
  describeEachDatabase,
  startTestApp,
  TEST_REDIS_URL,
  type LoggedInClient,
  type TestApp,
} from '../testing/index.js';
import { builtinSections } from './builtin.js';
import { cacheKey, createUserSettingsService } from './service.js';
import { createSettingsStore } from './store.js';

/** Writes a user's document behind the API's back (a change made outside the service). */
async function writeDirectly(app: TestApp, userId: string, data: Record<string, unknown>): Promise<void> {
  const rt = app.app.runtime;
  const { userSettings } = rt.tables.core as unknown as CoreTables;
  await rt.authDb.orm.delete(userSettings).where(eq(userSettings.userId, userId));
  await rt.authDb.orm.insert(userSettings).values({ userId, data, updatedAt: new Date() });
}

const pageSize = defineRouter({ prefix: '/page-size' });
pageSize.get('', {}, async (ctx) => ({
  pageSize: await ctx.settings.get(ctx.user!, 'preferences.tablePageSize'),
}));

describeEachDatabase('userSettings port', (database) => {
  let app: TestApp;
  let alice: LoggedInClient;
  const redis = TEST_REDIS_URL
    ? {
        kind: 'redis' as const,
        url: TEST_REDIS_URL,
        prefix: `svctest:${Math.random().toString(16).slice(2)}:`,
      }
    : undefined;

  beforeAll(async () => {
    app = await startTestApp({ database, cache: redis, routers: [pageSize] });
    alice = await app.loginAs(await app.createUser({ username: 'alice', isSuperuser: true }));
  });
  afterAll(() => app.close());

  it('reads a value (default first), caches it 30 seconds in the shared cache and drops it on write', async () => {
    const port = app.app.runtime.ports.get('userSettings');
    const cache = app.app.runtime.cache;
    expect(await port.get(alice.user.id, 'audit.disableActivityLog')).toBe(false);
    expect(await cache.get(cacheKey(alice.user.id))).toMatchObject({ audit: { disableActivityLog: false } });
    const ttl = await cache.ttl(cacheKey(alice.user.id));
    expect(ttl).toBeGreaterThan(25);
    expect(ttl).toBeLessThanOrEqual(30);

    // A change outside the API is seen only when the cached entry goes: the read is served from the cache.
    await writeDirectly(app, alice.user.id, { audit: { disableActivityLog: true } });
    expect(await port.get(alice.user.id, 'audit.disableActivityLog')).toBe(false);

    // A write through the API drops the entry at once.
    const res = await alice.put('/api/auth/user/settings/audit/disable_activity_log', { value: true });
    expect(res.status).toBe(200);
    expect(await cache.get(cacheKey(alice.user.id))).toBeUndefined();
    expect(await port.get(alice.user.id, 'audit.disable_activity_log')).toBe(true);
    await alice.patch('/api/auth/user/settings', { audit: { disableActivityLog: false } });
    expect(await port.get(alice.user.id, 'audit.disableActivityLog')).toBe(false);
  });

  it('serves handlers through ctx.settings.get', async () => {
    expect((await alice.get('/api/page-size')).body.data).toEqual({ pageSize: 25 });
    await alice.put('/api/auth/user/settings/preferences/tablePageSize', { value: 40 });
    expect((await alice.get('/api/page-size')).body.data).toEqual({ pageSize: 40 });
  });

  it('throws for an unknown setting path', async () => {
    const port = app.app.runtime.ports.get('userSettings');
    await expect(port.get(alice.user.id, 'audit.nope')).rejects.toThrow(/unknown user setting 'audit.nope'/);
    await expect(port.get(alice.user.id, 'audit')).rejects.toThrow(/unknown user setting/);
  });

  it('falls back to the database with a logged warning when the cache is unavailable', async () => {
    const rt = app.app.runtime;
    const lines: string[] = [];
    const log = createLogger(
      {
        level: 'WARNING',
        format: 'text',
        stream: new Writable({
          write(chunk, _encoding, callback) {
            lines.push(String(chunk));
            callback();
          },
        }),
      },
      'settings',
    );
    // The failure injected is the cache's; the database and the service are the real ones.
    const down = new Error('cache connection refused');
    const brokenCache: Cache = {
      kind: 'redis',
      get: () => Promise.reject(down),
      set: () => Promise.reject(down),
      setIfAbsent: () => Promise.reject(down),
      delete: () => Promise.reject(down),
      take: () => Promise.reject(down),
      incr: () => Promise.reject(down),
      ttl: () => Promise.reject(down),
      close: () => Promise.resolve(),
    };
    const service = createUserSettingsService({
      sections: builtinSections,
      store: createSettingsStore(rt.authDb, rt.tables.core as unknown as CoreTables),
      cache: brokenCache,
      log,
    });
    await writeDirectly(app, alice.user.id, { audit: { disableActivityLog: true } });
    expect(await service.reader.get(alice.user.id, 'audit.disableActivityLog')).toBe(true);
    expect(lines.some((l) => /cache unavailable: reading user settings from the database/.test(l))).toBe(
      true,
    );
    // A write still succeeds; failing to drop the cached entry is a warning, not an error.
    const values = await service.put(alice.user.id, 'audit', 'disableActivityLog', false);
    expect(values.audit).toEqual({ disableActivityLog: false });
    expect(lines.some((l) => /could not drop cached user settings/.test(l))).toBe(true);
  });
});
