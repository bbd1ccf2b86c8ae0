import { setTimeout as sleep } from 'node:timers/promises';
import type { Cache } from '../packages/core/src/kernel/cache/cache.js';

/**
 * The behaviour every {@link Cache} implementation owes its callers, as one suite
 * (STYLE "Tests": shared suites for every implementation of an interface).
 *
 * `makeCache(prefix)` returns a new, connected cache whose keys live under `prefix` (appended to a prefix
 * unique to the calling block, so runs on a shared Redis do not meet). Expiry uses real time, 1–2 s TTLs.
 *
 * @example
 * describeEachCache('Cache', (cache) => runCacheContract((p) => createCache({ settings: { …, cache_prefix: cache.prefix + p } })));
 */
export function runCacheContract(makeCache: (prefix: string) => Promise<Cache>): void {
  let cache: Cache;
  let other: Cache;

  beforeAll(async () => {
    cache = await makeCache('a:');
    other = await makeCache('b:');
  });
  afterAll(async () => {
    await cache?.close();
    await other?.close();
  });

  test('get answers undefined for a key never set', async () => {
    expect(await cache.get('never-set')).toBeUndefined();
    expect(await cache.ttl('never-set')).toBeUndefined();
  });

  test('set then get returns every JSON value as stored', async () => {
    const values = {
      object: { a: 1, b: [true, null, 'x'] },
      array: [1, 2],
      text: 'hé',
      zero: 0,
      no: false,
      nil: null,
    };
    for (const [key, value] of Object.entries(values)) await cache.set(`json:${key}`, value);
    for (const [key, value] of Object.entries(values)) expect(await cache.get(`json:${key}`)).toEqual(value);
  });

  test('set overwrites the value and its expiry', async () => {
    await cache.set('overwrite', 1, 60);
    expect(await cache.ttl('overwrite')).toBe(60);
    await cache.set('overwrite', 2);
    expect(await cache.get('overwrite')).toBe(2);
    expect(await cache.ttl('overwrite')).toBeUndefined();
  });

  test('a value set with a TTL expires after it', async () => {
    await cache.set('expiring', 'soon', 1);
    await cache.set('lasting', 'stays');
    expect(await cache.ttl('expiring')).toBe(1);
    expect(await cache.ttl('lasting')).toBeUndefined();
    await sleep(1_200);
    expect(await cache.get('expiring')).toBeUndefined();
    expect(await cache.ttl('expiring')).toBeUndefined();
    expect(await cache.get('lasting')).toBe('stays');
  });

  test('setIfAbsent stores only when the key is absent and keeps the first value', async () => {
    expect(await cache.setIfAbsent('once', 'first', 60)).toBe(true);
    expect(await cache.setIfAbsent('once', 'second', 60)).toBe(false);
    expect(await cache.get('once')).toBe('first');
    expect(await cache.ttl('once')).toBe(60);
  });

  test('setIfAbsent: exactly one of 20 parallel calls wins, and its value is stored', async () => {
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => cache.setIfAbsent('race', { caller: i }, 60)),
    );
    expect(results.filter(Boolean)).toHaveLength(1);
    expect(await cache.get('race')).toEqual({ caller: results.indexOf(true) });
  });

  test('setIfAbsent treats an expired key as absent', async () => {
    expect(await cache.setIfAbsent('lapsed', 1, 1)).toBe(true);
    await sleep(1_200);
    expect(await cache.setIfAbsent('lapsed', 2, 1)).toBe(true);
    expect(await cache.get('lapsed')).toBe(2);
  });

  test('take returns the value once and removes the key', async () => {
    await cache.set('ticket', { user: 'alice' }, 60);
    expect(await cache.take('ticket')).toEqual({ user: 'alice' });
    expect(await cache.take('ticket')).toBeUndefined();
    expect(await cache.get('ticket')).toBeUndefined();
  });

  test('take: exactly one of 20 parallel calls gets the value', async () => {
    await cache.set('single-use', 'code', 60);
    const taken = await Promise.all(Array.from({ length: 20 }, () => cache.take('single-use')));
    expect(taken.filter((v) => v !== undefined)).toEqual(['code']);
  });

  test('incr: 100 parallel increments return 1..100, each once', async () => {
    const values = await Promise.all(Array.from({ length: 100 }, () => cache.incr('counter', 60)));
    expect([...values].sort((a, b) => a - b)).toEqual(Array.from({ length: 100 }, (_, i) => i + 1));
    expect(await cache.get('counter')).toBe(100);
  });

  test('incr sets the expiry on the first increment only; later increments do not extend it', async () => {
    expect(await cache.incr('window', 2)).toBe(1);
    await sleep(1_100);
    const values = await Promise.all(Array.from({ length: 100 }, () => cache.incr('window', 2)));
    expect(Math.max(...values)).toBe(101);
    // A later increment resetting the expiry would show 2 here.
    expect(await cache.ttl('window')).toBe(1);
    await sleep(1_100);
    expect(await cache.get('window')).toBeUndefined();
    expect(await cache.incr('window', 2)).toBe(1);
    expect(await cache.ttl('window')).toBe(2);
  });

  test('incr continues from an integer stored with set', async () => {
    await cache.set('preset', 5);
    expect(await cache.incr('preset', 60)).toBe(6);
  });

  test('delete removes the key; deleting an absent key is a no-op', async () => {
    await cache.set('doomed', 'x', 60);
    await cache.delete('doomed');
    expect(await cache.get('doomed')).toBeUndefined();
    await expect(cache.delete('doomed')).resolves.toBeUndefined();
  });

  test('caches with different prefixes do not see each other', async () => {
    await cache.set('shared-name', 'a');
    await other.set('shared-name', 'b');
    expect(await cache.get('shared-name')).toBe('a');
    expect(await other.get('shared-name')).toBe('b');
    expect(await other.take('shared-name')).toBe('b');
    expect(await cache.get('shared-name')).toBe('a');
    expect(await other.incr('only-in-b', 60)).toBe(1);
    expect(await cache.get('only-in-b')).toBeUndefined();
  });

  test('values are copies: mutating what was stored or read does not change the cache', async () => {
    const stored = { list: [1], nested: { n: 1 } };
    await cache.set('copy', stored);
    stored.list.push(2);
    stored.nested.n = 2;
    const read = await cache.get<typeof stored>('copy');
    expect(read).toEqual({ list: [1], nested: { n: 1 } });
    read!.list.push(3);
    expect(await cache.get('copy')).toEqual({ list: [1], nested: { n: 1 } });
  });

  // SPEC-3 §7 rule 6: security state is never dropped to make room for entries anonymous requests create. The
  // caches under test hold 1,000 ordinary entries (cache_max_entries), so 1,100 writes overflow the memory one.
  test('entries kept as security state survive any number of ordinary writes', async () => {
    await cache.set('kept:cooldown', 1, 60, { keep: 'security' });
    expect(await cache.setIfAbsent('kept:totp-step', 1, 60, { keep: 'security' })).toBe(true);
    await cache.set('kept:challenge', { challenge: 'c' }, 60, { keep: 'anonymous' });
    await Promise.all(Array.from({ length: 1_100 }, (_, i) => cache.set(`flood:${i}`, i, 60)));
    expect(await cache.get('kept:cooldown')).toBe(1);
    expect(await cache.ttl('kept:cooldown')).toBe(60);
    expect(await cache.setIfAbsent('kept:totp-step', 2, 60, { keep: 'security' })).toBe(false);
    expect(await cache.take('kept:challenge')).toEqual({ challenge: 'c' });
    expect(await cache.take('kept:challenge')).toBeUndefined();
  });

  test('kept entries expire with their TTL, and delete or an ordinary set replaces them', async () => {
    await cache.set('kept:short', 'x', 1, { keep: 'security' });
    await cache.set('kept:deleted', 'x', 60, { keep: 'anonymous' });
    await cache.set('kept:replaced', 'x', 60, { keep: 'security' });
    await cache.delete('kept:deleted');
    await cache.set('kept:replaced', 'y');
    expect(await cache.get('kept:deleted')).toBeUndefined();
    expect(await cache.get('kept:replaced')).toBe('y');
    expect(await cache.ttl('kept:replaced')).toBeUndefined();
    await sleep(1_200);
    expect(await cache.get('kept:short')).toBeUndefined();
    expect(await cache.setIfAbsent('kept:short', 'again', 60, { keep: 'security' })).toBe(true);
  });

  test('refuses a kept entry without a TTL (it would never leave)', async () => {
    await expect(cache.set('kept:forever', 1, 0, { keep: 'security' })).rejects.toThrow(TypeError);
    await expect(cache.setIfAbsent('kept:forever', 1, 0, { keep: 'anonymous' })).rejects.toThrow(TypeError);
    expect(await cache.get('kept:forever')).toBeUndefined();
  });
}
