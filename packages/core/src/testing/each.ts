import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';

// jest globals, declared here so the build (which has no jest types) compiles this module.
declare const describe: (name: string, fn: () => void) => void;
declare const test: (name: string, fn: () => unknown) => void;
declare const beforeAll: (fn: () => unknown, timeout?: number) => void;
declare const afterAll: (fn: () => unknown, timeout?: number) => void;
declare const expect: (value: unknown) => { toBeFalsy(): void };

/** A fresh, empty database for one test block. `url` is valid after the block's `beforeAll`. */
export interface TestDatabase {
  dialect: 'sqlite' | 'pg';
  label: string;
  readonly url: string;
}

/** Where the PostgreSQL and Redis tests go (set by `.ci/run`; unset outside CI skips them with a reason). */
export const TEST_POSTGRES_URL = process.env.SVC_TEST_POSTGRES_URL ?? '';
export const TEST_REDIS_URL = process.env.SVC_TEST_REDIS_URL ?? '';

/**
 * The visible trace of a service-backed suite that could not run: one passing test whose name says why,
 * which fails under CI=true so CI never goes green with the suite skipped.
 */
export function reportSkipped(name: string, reason: string): void {
  test(`${name} — not run: ${reason}`, () => {
    expect(process.env.CI).toBeFalsy();
  });
}

/** Creates an empty PostgreSQL database next to `SVC_TEST_POSTGRES_URL`; returns its URL and a drop function. */
export async function createPostgresDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const admin = postgres(TEST_POSTGRES_URL, { max: 1, onnotice: () => undefined });
  const name = `svc_test_${randomBytes(6).toString('hex')}`;
  try {
    await admin.unsafe(`CREATE DATABASE "${name}"`);
  } finally {
    await admin.end();
  }
  const url = new URL(TEST_POSTGRES_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const a = postgres(TEST_POSTGRES_URL, { max: 1, onnotice: () => undefined });
      try {
        await a.unsafe(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      } finally {
        await a.end();
      }
    },
  };
}

/** A fresh SQLite file in a temporary directory; returns its `file:` URL and a cleanup function. */
export function createSqliteDatabase(): { url: string; dir: string; drop(): Promise<void> } {
  const dir = mkdtempSync(join(tmpdir(), 'svc-test-'));
  return {
    url: `file:${join(dir, 'auth.db')}`,
    dir,
    async drop() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Runs `fn` once against a fresh SQLite file and once against a fresh PostgreSQL database
 * (`SVC_TEST_POSTGRES_URL`). Each run gets its own empty database.
 */
export function describeEachDatabase(name: string, fn: (database: TestDatabase) => void): void {
  describe(`${name} [sqlite]`, () => {
    let created: { url: string; drop(): Promise<void> } | undefined;
    const database: TestDatabase = {
      dialect: 'sqlite',
      label: 'sqlite',
      get url() {
        if (!created) throw new Error('database.url is available from beforeAll on');
        return created.url;
      },
    };
    beforeAll(() => {
      created = createSqliteDatabase();
    });
    afterAll(() => created?.drop());
    fn(database);
  });
  if (!TEST_POSTGRES_URL) {
    describe(`${name} [postgres]`, () => reportSkipped(name, 'SVC_TEST_POSTGRES_URL is not set'));
    return;
  }
  describe(`${name} [postgres]`, () => {
    let created: { url: string; drop(): Promise<void> } | undefined;
    const database: TestDatabase = {
      dialect: 'pg',
      label: 'postgres',
      get url() {
        if (!created) throw new Error('database.url is available from beforeAll on');
        return created.url;
      },
    };
    beforeAll(async () => {
      created = await createPostgresDatabase();
    }, 30_000);
    afterAll(() => created?.drop(), 30_000);
    fn(database);
  });
}

/** A cache configuration for tests: in-process, or Redis with a prefix of its own. */
export interface TestCache {
  kind: 'memory' | 'redis';
  /** `cache_url` setting ('' for in-process). */
  url: string;
  /** `cache_prefix` unique to this block. */
  prefix: string;
}

/** Runs `fn` once with the in-process cache and once with Redis (`SVC_TEST_REDIS_URL`). */
export function describeEachCache(name: string, fn: (cache: TestCache) => void): void {
  describe(`${name} [memory cache]`, () => fn({ kind: 'memory', url: '', prefix: 'svc:' }));
  if (!TEST_REDIS_URL) {
    describe(`${name} [redis]`, () => reportSkipped(name, 'SVC_TEST_REDIS_URL is not set'));
    return;
  }
  describe(`${name} [redis]`, () =>
    fn({ kind: 'redis', url: TEST_REDIS_URL, prefix: `svctest:${randomBytes(5).toString('hex')}:` }));
}
