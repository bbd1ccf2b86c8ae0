// Faults under load through nginx (docs/deployment.md "Several hosts behind a load balancer"): a host killed
// with SIGKILL, a rolling restart, a host killed with activity_log_sync on. The load is a few hundred requests a
// second of logged writes and reads from keep-alive clients; the figures are printed and in docs/deployment.md.
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { reportSkipped, TEST_POSTGRES_URL, TEST_REDIS_URL } from '../../packages/core/src/testing/each.js';
import { NGINX, startCluster, type Cluster } from './cluster.js';
import { accessToken, grant, register } from './helpers.js';
import { answeredBy, checkStored, failuresOf, startLoad, type Load, type Outcome } from './load.js';

/** Requests a second in all, over this many keep-alive connections. */
const RATE = 200;
const CONNECTIONS = 8;
const BEFORE_MS = 1_500;
const AFTER_MS = 2_000;

const missing = !TEST_POSTGRES_URL
  ? 'SVC_TEST_POSTGRES_URL is not set'
  : !TEST_REDIS_URL
    ? 'SVC_TEST_REDIS_URL is not set'
    : !existsSync(NGINX)
      ? `${NGINX} is missing (.ci/run installs Debian's nginx)`
      : '';

function figures(name: string, values: Record<string, unknown>): void {
  process.stderr.write(`cluster faults, ${name}: ${JSON.stringify(values)}\n`);
}

const count = (outcomes: Outcome[], kind?: Outcome['kind']) =>
  outcomes.filter((o) => !kind || o.kind === kind).length;

if (missing) {
  describe('faults under load behind nginx', () => reportSkipped('the cluster fault suite', missing));
} else {
  describe('faults under load behind nginx', () => {
    let cluster: Cluster;
    let token: string;
    /** The load of a test that failed before stopping it stops here. */
    const loads: Load[] = [];
    const load = () => {
      const started = startLoad(cluster, token, { rate: RATE, connections: CONNECTIONS });
      loads.push(started);
      return started;
    };

    beforeAll(async () => {
      cluster = await startCluster({
        settings: {
          SVC_CACHE_URL: TEST_REDIS_URL,
          SVC_CACHE_PREFIX: `svccluster:${randomBytes(5).toString('hex')}:`,
        },
      });
      const writer = await register(cluster, 'load-writer');
      await grant(cluster, writer.id, ['notes.read', 'notes.write']);
      token = await accessToken(cluster, writer);
    }, 120_000);
    afterAll(async () => {
      await Promise.all(loads.map((l) => l.stop()));
      await cluster?.close();
    }, 60_000);

    it('serves on when a host is killed: 5xx only for writes that were on it, every acknowledged write stored', async () => {
      const [A, B] = cluster.hosts;
      const running = load();
      await sleep(BEFORE_MS);
      await A.kill();
      await sleep(AFTER_MS);
      const { outcomes, perSecond } = await running.stop();
      const failures = failuresOf(outcomes);
      // B's writer flushes every 200 ms: every entry of what B answered arrives.
      let stored = await checkStored(cluster, outcomes);
      for (let i = 0; i < 50 && stored.entriesLost(B.address) > 0; i++) {
        await sleep(100);
        stored = await checkStored(cluster, outcomes);
      }
      const answeredByA = stored.acknowledgedArchives.filter((o) => answeredBy(o) === A.address).length;
      figures('SIGKILL of one host (write-behind)', {
        requests: outcomes.length,
        perSecond: Math.round(perSecond),
        failures: failures.length,
        failedOnKilledHost: failures.filter((o) => o.upstream === A.address).length,
        acknowledgedArchivesOnKilledHost: answeredByA,
        entriesLost: stored.entriesLost(A.address),
      });
      // nginx sends reads on (idempotent), and a POST only when it was not sent yet (proxy_next_upstream).
      expect(failures.filter((o) => o.kind === 'read')).toEqual([]);
      expect(failures.filter((o) => o.upstream !== A.address || o.status !== 502)).toEqual([]);
      expect(failures.length).toBeLessThanOrEqual(CONNECTIONS);
      expect(count(outcomes.filter((o) => answeredBy(o) === B.address && o.status < 300))).toBeGreaterThan(0);
      expect(stored.missingNotes).toEqual([]);
      expect(stored.notArchived).toEqual([]);
      expect(stored.entriesLost(B.address)).toBe(0);
      await A.start();
    }, 60_000);

    it('answers every request during a rolling restart (SIGTERM, start again, one host at a time)', async () => {
      const running = load();
      await sleep(BEFORE_MS / 2);
      const exitCodes: (number | null)[] = [];
      for (const host of cluster.hosts) {
        exitCodes.push(await host.stop());
        // The new version: with activity_log_sync on, for the next test.
        await host.start({ activity_log_sync: 'true' });
        // Before the next host stops, nginx must send to this one again: it retries a host that failed once
        // `fail_timeout` passed (docs/deployment.md "Rolling restart"). Until then, stopping the other would
        // leave nginx no live host (502 for everything).
        const since = running.outcomes.length;
        for (let i = 0; i < 200; i++) {
          if (running.outcomes.slice(since).some((o) => answeredBy(o) === host.address && o.status < 300))
            break;
          await sleep(50);
        }
      }
      const { outcomes, perSecond } = await running.stop();
      const refused = outcomes.filter((o) => o.status === 0 || o.status >= 300);
      const stored = await checkStored(cluster, outcomes);
      figures('rolling restart', {
        requests: outcomes.length,
        perSecond: Math.round(perSecond),
        failures: refused.length,
      });
      expect(exitCodes).toEqual([0, 0]);
      expect(refused.map((o) => `${o.kind} ${o.status} ${o.upstream}`)).toEqual([]);
      expect(stored.missingNotes).toEqual([]);
      expect(stored.notArchived).toEqual([]);
    }, 90_000);

    it('loses no acknowledged activity entry when a host is killed with activity_log_sync on', async () => {
      const [, B] = cluster.hosts;
      const running = load();
      await sleep(BEFORE_MS);
      await B.kill();
      await sleep(AFTER_MS / 2);
      const { outcomes, perSecond } = await running.stop();
      const failures = failuresOf(outcomes);
      const stored = await checkStored(cluster, outcomes);
      const answeredByB = stored.acknowledgedArchives.filter((o) => answeredBy(o) === B.address).length;
      figures('SIGKILL of one host (activity_log_sync)', {
        requests: outcomes.length,
        perSecond: Math.round(perSecond),
        failures: failures.length,
        acknowledgedArchivesOnKilledHost: answeredByB,
        entriesLost: stored.entriesLost(B.address),
      });
      expect(answeredByB).toBeGreaterThan(0);
      expect(stored.entriesLost(B.address)).toBe(0);
      expect(stored.missingNotes).toEqual([]);
      expect(failures.filter((o) => o.kind === 'read')).toEqual([]);
    }, 60_000);
  });
}
