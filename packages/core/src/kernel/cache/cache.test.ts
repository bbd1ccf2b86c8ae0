import { createClient } from 'redis';
import { describeEachCache } from '../../testing/each.js';
import { SvcError } from '../errors/svc-error.js';
import type { Logger } from '../log/logger.js';
import { runCacheContract } from '../../../../../testing/cache-contract.js';
import { createCache, MemoryCache, RedisCache } from './index.js';

/** A logger that keeps its records, to assert what the cache reported. */
function recordingLogger(): Logger & { records: { level: string; message: string }[] } {
  const records: { level: string; message: string }[] = [];
  const logger = {
    records,
    debug: (message: string) => void records.push({ level: 'debug', message }),
    info: (message: string) => void records.push({ level: 'info', message }),
    warn: (message: string) => void records.push({ level: 'warn', message }),
    error: (message: string) => void records.push({ level: 'error', message }),
    child: () => logger,
  };
  return logger;
}

describeEachCache('Cache contract', (testCache) => {
  // The Cache interface cannot list keys; drop this block's keys so a shared test Redis does not fill up.
  afterAll(async () => {
    if (testCache.kind !== 'redis') return;
    const client = await createClient({ url: testCache.url }).connect();
    try {
      for await (const keys of client.scanIterator({ MATCH: `${testCache.prefix}*`, COUNT: 100 })) {
        if (keys.length > 0) await client.del(keys);
      }
    } finally {
      await client.close();
    }
  });
  runCacheContract((prefix) =>
    createCache({
      settings: {
        cache_url: testCache.url,
        cache_prefix: testCache.prefix + prefix,
        cache_max_entries: 1_000,
      },
    }),
  );

  test(`createCache picks the ${testCache.kind} implementation`, async () => {
    const cache = await createCache({
      settings: { cache_url: testCache.url, cache_prefix: testCache.prefix, cache_max_entries: 10 },
    });
    try {
      expect(cache.kind).toBe(testCache.kind);
      expect(cache).toBeInstanceOf(testCache.kind === 'memory' ? MemoryCache : RedisCache);
    } finally {
      await cache.close();
    }
  });
});

describe('MemoryCache', () => {
  test('evicts the least recently used entry beyond max entries', async () => {
    const cache = new MemoryCache(3);
    await cache.set('a', 1);
    await cache.set('b', 2);
    await cache.set('c', 3);
    expect(await cache.get('a')).toBe(1); // a is now the most recently used, b the least
    await cache.set('d', 4);
    expect(await cache.get('b')).toBeUndefined();
    expect(await cache.get('a')).toBe(1);
    expect(await cache.get('c')).toBe(3);
    expect(await cache.get('d')).toBe(4);
  });

  test('never evicts security state for ordinary entries (SPEC-3 §7 rule 6)', async () => {
    const cache = new MemoryCache(3);
    await cache.set('cooldown', 1, 60, { keep: 'security' });
    for (let i = 0; i < 10; i++) await cache.set(`anonymous:${i}`, i, 60);
    expect(await cache.get('cooldown')).toBe(1);
    expect(await cache.get('anonymous:0')).toBeUndefined(); // the ordinary ones are evicted among themselves
  });

  test('refuses a pending anonymous entry beyond max entries instead of dropping one (SPEC-3 §7 rule 6)', async () => {
    const cache = new MemoryCache(3);
    for (let i = 0; i < 3; i++) await cache.set(`login:${i}`, i, 60, { keep: 'anonymous' });
    await expect(cache.set('login:3', 3, 60, { keep: 'anonymous' })).rejects.toMatchObject({
      code: 'cache.unavailable',
      status: 503,
    });
    await expect(cache.setIfAbsent('login:3', 3, 60, { keep: 'anonymous' })).rejects.toMatchObject({
      code: 'cache.unavailable',
    });
    expect([await cache.get('login:0'), await cache.get('login:1'), await cache.get('login:2')]).toEqual([
      0, 1, 2,
    ]);
    // Security state of known users has its own room: a full anonymous pool does not refuse it.
    expect(await cache.setIfAbsent('cooldown', 1, 60, { keep: 'security' })).toBe(true);
    // A pending entry that leaves (taken, or expired) makes room again; so does overwriting a pending key.
    await cache.set('login:2', 'again', 60, { keep: 'anonymous' });
    expect(await cache.take('login:0')).toBe(0);
    await cache.set('login:3', 3, 60, { keep: 'anonymous' });
    expect(await cache.get('login:3')).toBe(3);
  });

  test('sweeps expired anonymous entries when full, so expired ones do not refuse new ones', async () => {
    const cache = new MemoryCache(2);
    await cache.set('a', 1, 0.1, { keep: 'anonymous' });
    await cache.set('b', 2, 0.1, { keep: 'anonymous' });
    await new Promise((resolve) => setTimeout(resolve, 150));
    await cache.set('c', 3, 60, { keep: 'anonymous' });
    await cache.set('d', 4, 60, { keep: 'anonymous' });
    expect([await cache.get('c'), await cache.get('d')]).toEqual([3, 4]);
  });

  test('refuses a value JSON cannot carry instead of storing nothing', async () => {
    await expect(new MemoryCache(3).set('nothing', undefined)).rejects.toThrow(TypeError);
  });
});

describe('RedisCache with the server unreachable', () => {
  test('connects without throwing, rejects calls with cache.unavailable within 2 s, logs the failure once', async () => {
    const log = recordingLogger();
    const started = Date.now();
    const cache = await RedisCache.connect('redis://127.0.0.1:1', 'svc:', log);
    try {
      const failure = await cache.get('anything').then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(Date.now() - started).toBeLessThan(2_000);
      expect(failure).toBeInstanceOf(SvcError);
      expect(failure).toMatchObject({ code: 'cache.unavailable', status: 503 });
      await expect(cache.incr('counter', 60)).rejects.toMatchObject({ code: 'cache.unavailable' });
      // Let the background reconnects fail a few times: each is an 'error' event that must not crash the process.
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(log.records.filter((r) => r.level === 'error')).toEqual([
        { level: 'error', message: 'cache connection failed' },
      ]);
    } finally {
      await cache.close();
    }
  });
});
