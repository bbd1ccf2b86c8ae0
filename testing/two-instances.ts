import { randomBytes } from 'node:crypto';
import {
  createPostgresDatabase,
  reportSkipped,
  startTestApp,
  TEST_POSTGRES_URL,
  TEST_REDIS_URL,
  type StartTestAppOptions,
  type TestApp,
  type TestCache,
  type TestDatabase,
} from '../packages/core/src/testing/index.js';

// Two app instances on one PostgreSQL database and one Redis stand for two hosts behind a load balancer
// (docs/deployment.md): what one instance changes, the other must see at its very next request.

/** The options of each instance without the shared database and cache; `[a, b]` when they differ. */
type InstanceOptions = Omit<StartTestAppOptions, 'database' | 'cache'>;

/** What the two instances share, given to the options callback. */
export interface SharedServices {
  database: TestDatabase;
  cache: TestCache;
}

/** The two running instances, filled in by the `beforeAll` of {@link useTwoInstances}. */
export interface TwoInstances {
  a: TestApp;
  b: TestApp;
}

/**
 * Inside a `describe`: starts instances A and B on a fresh PostgreSQL database and one Redis key prefix before
 * the tests and stops them (and drops the database) after. Without `SVC_TEST_POSTGRES_URL` and
 * `SVC_TEST_REDIS_URL` it reports the suite as not run and returns `undefined`: return from the `describe`.
 * @example
 * describe('sessions across two app instances', () => {
 *   const cluster = useTwoInstances('sessions across instances', () => ({ settings: { events_broadcast_enabled: true } }));
 *   if (!cluster) return;
 *   it('…', async () => { const user = await cluster.a.createUser({ username: 'nomad' }); … });
 * });
 */
export function useTwoInstances(
  what: string,
  options: (
    shared: SharedServices,
  ) =>
    | InstanceOptions
    | [InstanceOptions, InstanceOptions]
    | Promise<InstanceOptions | [InstanceOptions, InstanceOptions]>,
): TwoInstances | undefined {
  if (!TEST_POSTGRES_URL || !TEST_REDIS_URL) {
    reportSkipped(what, 'SVC_TEST_POSTGRES_URL and SVC_TEST_REDIS_URL are both needed');
    return undefined;
  }
  const instances = {} as TwoInstances;
  let created: { url: string; drop(): Promise<void> } | undefined;

  beforeAll(async () => {
    created = await createPostgresDatabase();
    const shared: SharedServices = {
      database: { dialect: 'pg', label: 'postgres', url: created.url },
      cache: { kind: 'redis', url: TEST_REDIS_URL!, prefix: `svctest:${randomBytes(5).toString('hex')}:` },
    };
    const chosen = await options(shared);
    const [forA, forB] = Array.isArray(chosen) ? chosen : [chosen, chosen];
    instances.a = await startTestApp({ ...forA, ...shared });
    instances.b = await startTestApp({ ...forB, ...shared });
  }, 60_000);
  afterAll(async () => {
    await instances.a?.close();
    await instances.b?.close();
    await created?.drop();
  }, 30_000);

  return instances;
}
