// Redis restarted under load behind nginx (docs/deployment.md "Redis"): two hosts on a Redis of this test
// (started with redis-server on a spare port, not the shared one), killed and started again empty while a load
// generator runs. Logins go on, auth_rate_limit is counted in each process meanwhile, and logins, the shared
// rate limit and event fan-out come back without restarting svc.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { reportSkipped, TEST_POSTGRES_URL } from '../../packages/core/src/testing/each.js';
import { eventsUrl, openSocket, type TestSocket } from '../../testing/events.js';
import { startPrivateRedis, type PrivateRedis } from '../hardening/helpers.js';
import { NGINX, startCluster, upstreamOf, type Cluster, type Host } from './cluster.js';
import {
  accessToken,
  adminToken,
  dataOf,
  expectStatus,
  freshAddress,
  grant,
  nextGoesTo,
  register,
} from './helpers.js';
import { failuresOf, startLoad } from './load.js';

const RATE_LIMIT = 5;

/** Connections the Redis server has from clients (every svc process holds its own). */
function redisClients(port: number): number {
  const list = spawnSync('redis-cli', ['-p', String(port), 'CLIENT', 'LIST'], { encoding: 'utf8' });
  return list.stdout.split('\n').filter((line) => line.startsWith('id=') && !line.includes('cmd=client'))
    .length;
}
/** Processes that count for themselves while Redis is down: 2 hosts × 2 workers. */
const PROCESSES = 4;

const missing = !TEST_POSTGRES_URL
  ? 'SVC_TEST_POSTGRES_URL is not set'
  : !existsSync(NGINX)
    ? `${NGINX} is missing (.ci/run installs Debian's nginx)`
    : '';

if (missing) {
  describe('Redis restarted under load behind nginx', () =>
    reportSkipped('the cluster Redis suite', missing));
} else {
  describe('Redis restarted under load behind nginx', () => {
    let redis: PrivateRedis;
    let cluster: Cluster;
    const sockets: TestSocket[] = [];
    let stopLoad: () => Promise<unknown> = async () => undefined;

    beforeAll(async () => {
      redis = await startPrivateRedis();
      cluster = await startCluster({
        settings: { SVC_CACHE_URL: redis.url, SVC_AUTH_RATE_LIMIT: String(RATE_LIMIT) },
      });
    }, 120_000);
    afterAll(async () => {
      await stopLoad();
      await Promise.all(sockets.map((s) => s.close()));
      await cluster?.close();
      await redis?.destroy();
    }, 60_000);

    /** Wrong-password logins from one new client until the first 429; the statuses seen. */
    async function attempts(address: string, max: number): Promise<number[]> {
      const client = cluster.client(address);
      const statuses: number[] = [];
      try {
        while (statuses.length < max && !statuses.includes(429)) {
          const res = await client.post('/api/auth/token', undefined, {
            form: { username: 'nobody-here', password: 'wrong-password-123' },
          });
          statuses.push(res.status);
        }
      } finally {
        client.close();
      }
      return statuses;
    }
    const shared = [...Array(RATE_LIMIT).fill(401), 429];

    async function login(user: { username: string; password: string }) {
      const client = cluster.client(freshAddress());
      try {
        return await client.post('/api/auth/token', undefined, {
          form: { username: user.username, password: user.password },
        });
      } finally {
        client.close();
      }
    }

    async function socketOn(host: Host, token: string): Promise<TestSocket> {
      const [A, B] = cluster.hosts;
      await nextGoesTo(cluster, host === A ? B : A);
      const client = cluster.client(freshAddress());
      const ticket = await client.post('/api/core/events/ticket', undefined, { token });
      client.close();
      expectStatus(ticket, 200);
      const socket = await openSocket(eventsUrl(cluster.url, { ticket: dataOf(ticket).ticket }));
      sockets.push(socket);
      await socket.waitFor((f) => f.type === 'snapshot');
      return socket;
    }

    it('logs in, limits per process and keeps sockets open while Redis is down, and recovers without a restart of svc', async () => {
      const [A, B] = cluster.hosts;
      const writer = await register(cluster, 'redis-writer');
      await grant(cluster, writer.id, ['notes.read', 'notes.write']);
      const user = await register(cluster, 'redis-user');
      const admin = await adminToken(cluster);
      const onB = await socketOn(B, admin);
      // Before: one count for the client across both hosts.
      expect(await attempts(freshAddress(), RATE_LIMIT + 1)).toEqual(shared);

      const load = startLoad(cluster, await accessToken(cluster, writer), { rate: 100, connections: 4 });
      stopLoad = () => load.stop();
      await sleep(500);
      const connected = redisClients(redis.port);
      await redis.kill();

      // Down: logins are answered on both hosts (lockout lives in the database). nginx's round robin is shared
      // with the load here, so the hosts are told apart by the answers.
      const loggedInOn = new Set<string>();
      for (let i = 0; i < 20 && loggedInOn.size < 2; i++) {
        const res = await login(user);
        expectStatus(res, 200);
        loggedInOn.add(upstreamOf(res));
      }
      expect(loggedInOn).toEqual(new Set([A.address, B.address]));
      // Down: each process counts in its own memory (docs/deployment.md "Redis"): the client is not refused
      // before the limit, and is refused once some process saw more than the limit.
      const outage = freshAddress();
      const during = await attempts(outage, PROCESSES * RATE_LIMIT + 1);
      expect(during.slice(0, RATE_LIMIT)).toEqual(Array(RATE_LIMIT).fill(401));
      expect(during[during.length - 1]).toBe(429);
      expect(onB.ws.readyState).toBe(onB.ws.OPEN);
      const warned = [...A.warnings(), ...B.warnings()].filter((line) =>
        line.includes('cache unavailable: rate limit counted in this process'),
      );
      expect(warned.length).toBeGreaterThan(0);

      await redis.start();
      const since = new Date().toISOString();
      // Every process reconnects by itself (its back-off is at most 2 s): wait until all of them are back.
      for (let i = 0; i < 100 && redisClients(redis.port) < connected; i++) await sleep(100);
      expect(redisClients(redis.port)).toBeGreaterThanOrEqual(connected);

      // Up again (empty): the shared count is back once every process reconnected.
      let after: number[] = [];
      for (let i = 0; i < 40 && JSON.stringify(after) !== JSON.stringify(shared); i++) {
        if (i > 0) await sleep(250);
        after = await attempts(freshAddress(), RATE_LIMIT + 1);
      }
      expect(after).toEqual(shared);
      // What the outage client was counted in process memory is not carried to Redis: a full allowance again.
      expect(await attempts(outage, RATE_LIMIT + 1)).toEqual(shared);
      // Events emitted on A reach the socket held on B again.
      let delivered = false;
      for (let i = 0; i < 40 && !delivered; i++) {
        const res = await login(user);
        expectStatus(res, 200);
        if (upstreamOf(res) !== A.address) continue;
        delivered = await onB
          .waitFor((f) => f.type === 'login' && f.data.userId === user.id && f.timestamp! > since, 500)
          .then(
            () => true,
            () => false,
          );
      }
      expect(delivered).toBe(true);
      const { outcomes, perSecond } = await load.stop();
      const failures = failuresOf(outcomes);
      process.stderr.write(
        `cluster Redis restart: ${JSON.stringify({ requests: outcomes.length, perSecond: Math.round(perSecond), failures: failures.length, rateLimitDuringOutage: during.length })}\n`,
      );
      expect(failures.map((o) => `${o.kind} ${o.status} ${o.detail ?? ''}`)).toEqual([]);
    }, 90_000);
  });
}
