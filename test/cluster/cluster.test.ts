// Two hosts behind nginx behave as one (docs/deployment.md "Several hosts behind a load balancer"): every request
// goes through nginx, configured as the page shows; a step meant for one host is sent there by nginx's round
// robin and checked with the host that answered. Then faults under a load of a few hundred requests a second of
// logged writes and reads from keep-alive clients; their figures are printed and in docs/deployment.md.
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { reportSkipped, TEST_POSTGRES_URL, TEST_REDIS_URL } from '../../packages/core/src/testing/each.js';
import { closeCodeWithin, eventsUrl, openSocket, type TestSocket } from '../../testing/events.js';
import { awayFromStepBoundary, totpCode } from '../../testing/mfa.js';
import { NGINX, hostHolding, startCluster, upstreamOf, type Cluster, type ClusterClient } from './cluster.js';
import {
  PASSWORD,
  accessToken,
  adminToken,
  dataOf,
  expectStatus,
  freshAddress,
  grant,
  nextGoesTo,
  onHost,
  register,
} from './helpers.js';
import { startWebhookReceiver } from '../../testing/webhook-receiver.js';
import { answeredBy, checkStored, failuresOf, startLoad, type Load } from './load.js';

const RATE_LIMIT = 8;
/** The fault tests' load: requests a second in all, over this many keep-alive connections. */
const RATE = 200;
const CONNECTIONS = 8;
const BEFORE_MS = 1_500;
const AFTER_MS = 2_000;
const SETUP_MS = 120_000;

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

if (missing) {
  describe('two hosts behind nginx', () => reportSkipped('the cluster suite', missing));
} else {
  describe('two hosts behind nginx', () => {
    let cluster: Cluster;
    let A: Cluster['hosts'][0];
    let B: Cluster['hosts'][1];
    const clients: ClusterClient[] = [];
    const sockets: TestSocket[] = [];
    const client = (address = freshAddress()) => {
      const c = cluster.client(address);
      clients.push(c);
      return c;
    };
    const socket = async (token: string) => {
      const ticket = await client().post('/api/core/events/ticket', undefined, { token });
      expectStatus(ticket, 200);
      const opened = await openSocket(eventsUrl(cluster.url, { ticket: dataOf(ticket).ticket }));
      sockets.push(opened);
      return opened;
    };
    /** A socket held on `host`: the ticket request takes the other host's turn, the upgrade this one's. */
    const socketOn = async (host: Cluster['hosts'][number], token: string) => {
      await nextGoesTo(cluster, host === A ? B : A);
      const opened = await socket(token);
      await opened.waitFor((f) => f.type === 'snapshot');
      return opened;
    };

    beforeAll(async () => {
      cluster = await startCluster({
        settings: {
          SVC_CACHE_URL: TEST_REDIS_URL,
          SVC_CACHE_PREFIX: `svccluster:${randomBytes(5).toString('hex')}:`,
          SVC_AUTH_RATE_LIMIT: String(RATE_LIMIT),
          // SPEC-3 §3 Webhooks: a loopback receiver (private targets allowed), retries a second apart.
          SVC_WEBHOOKS_ENABLED: 'true',
          SVC_WEBHOOKS_ALLOW_PRIVATE_TARGETS: 'true',
          SVC_WEBHOOK_RETRY_SCHEDULE: '1,1,1,1,1,1,1,1,1,1',
          SVC_WEBHOOK_TIMEOUT_SECONDS: '2',
        },
      });
      [A, B] = cluster.hosts;
    }, SETUP_MS);
    afterAll(async () => {
      await Promise.all(sockets.map((s) => s.close()));
      for (const c of clients) c.close();
      await cluster?.close();
    }, 60_000);

    it('nginx sends requests to both hosts in turn', async () => {
      const probe = client();
      const answered = [];
      for (let i = 0; i < 4; i++) answered.push(upstreamOf(await probe.get('/api/health/ready')));
      expect(new Set(answered)).toEqual(new Set([A.address, B.address]));
      expect(answered[0]).not.toBe(answered[1]);
    });

    it('keeps a refresh chain going while its steps alternate between the hosts', async () => {
      const user = await register(cluster, 'chain-user');
      const c = client();
      const first = await onHost(cluster, A, () =>
        c.post('/api/auth/token', undefined, { form: { username: user.username, password: PASSWORD } }),
      );
      expectStatus(first, 200);
      let refresh = first.body.refresh_token as string;
      const spent: string[] = [];
      for (let step = 0; step < 6; step++) {
        const host = step % 2 === 0 ? B : A;
        const res = await onHost(cluster, host, () =>
          c.post('/api/auth/refresh-token', { refresh_token: refresh }),
        );
        expectStatus(res, 200);
        spent.push(refresh);
        refresh = res.body.refresh_token as string;
        const me = await c.get('/api/auth/user', { token: res.body.access_token as string });
        expectStatus(me, 200);
      }
      // A token spent on one host is spent on the other (SPEC "Refresh token and login": reuse is refused).
      const reuse = await onHost(cluster, B, () =>
        c.post('/api/auth/refresh-token', { refresh_token: spent[spent.length - 1] }),
      );
      expect(reuse.status).toBe(401);
      // Inside the reuse grace the login survives: the newest token still works, on the other host.
      const next = await onHost(cluster, A, () =>
        c.post('/api/auth/refresh-token', { refresh_token: refresh }),
      );
      expectStatus(next, 200);
    });

    it('counts auth_rate_limit per client across hosts, the client address taken from what nginx appends', async () => {
      const c = client();
      const statuses: number[] = [];
      const hosts = new Set<string>();
      for (let i = 0; i < RATE_LIMIT; i++) {
        // An address the client wrote itself is ignored: only nginx (BALANCER_ADDRESS) is trusted to set it.
        const res = await c.post('/api/auth/token', undefined, {
          form: { username: 'nobody-here', password: 'wrong-password-123' },
          headers: { 'x-forwarded-for': `198.51.100.${i}` },
        });
        statuses.push(res.status);
        hosts.add(upstreamOf(res));
      }
      expect(statuses).toEqual(Array(RATE_LIMIT).fill(401));
      expect(hosts).toEqual(new Set([A.address, B.address]));
      for (const host of [A, B]) {
        const refused = await onHost(cluster, host, () =>
          c.post('/api/auth/token', undefined, {
            form: { username: 'nobody-here', password: 'wrong-password-123' },
          }),
        );
        expect(refused.status).toBe(429);
        expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
      }
      // Another client (another address as nginx sees it) has its own count.
      const other = await client().post('/api/auth/token', undefined, {
        form: { username: 'nobody-here', password: 'wrong-password-123' },
      });
      expect(other.status).toBe(401);
    });

    it('locks an account after failures spread over both hosts', async () => {
      const user = await register(cluster, 'lock-target');
      const c = client();
      for (let i = 0; i < 5; i++) {
        const res = await onHost(cluster, i % 2 === 0 ? A : B, () =>
          c.post('/api/auth/token', undefined, {
            form: { username: user.username, password: 'wrong-password-123' },
          }),
        );
        expect(res.status).toBe(401);
      }
      // SPEC "Account login lock": the right password is refused on either host while locked.
      for (const host of [A, B]) {
        const res = await onHost(cluster, host, () =>
          client().post('/api/auth/token', undefined, {
            form: { username: user.username, password: PASSWORD },
          }),
        );
        expect(res.status).toBe(401);
        expect(res.body.detail[0].code).toBe('auth.invalid_credentials');
      }
      const [row] = await cluster.rows<{ locked: boolean }>(
        `select locked_until > now() as locked from svc_user where username = 'lock-target'`,
      );
      expect(row?.locked).toBe(true);
    });

    it('redeems a ticket issued by one host on the other, once', async () => {
      const token = await adminToken(cluster);
      const c = client();
      const issued = await onHost(cluster, A, () => c.post('/api/core/events/ticket', undefined, { token }));
      expectStatus(issued, 200);
      const url = eventsUrl(cluster.url, { ticket: dataOf(issued).ticket });
      await nextGoesTo(cluster, B);
      const opened = await openSocket(url);
      sockets.push(opened);
      await opened.waitFor((f) => f.type === 'snapshot');
      // The upgrade took B's turn: the next request goes to A.
      expect(upstreamOf(await c.get('/api/health/live'))).toBe(A.address);
      // SPEC "WebSocket ticket": used again, on the host that issued it, it is refused with 4401.
      await nextGoesTo(cluster, A);
      const again = await openSocket(url);
      expect(await closeCodeWithin(again, 5_000)).toBe(4401);
    });

    it('delivers an event emitted on one host to sockets on both hosts exactly once', async () => {
      const token = await adminToken(cluster);
      const onA = await socketOn(A, token);
      const onB = await socketOn(B, token);
      const first = await register(cluster, 'event-first');
      const last = await register(cluster, 'event-last');
      // Two logins on host A: `login` goes to superusers (SPEC "Event types and audience").
      for (const user of [first, last]) {
        const res = await onHost(cluster, A, () =>
          client().post('/api/auth/token', undefined, {
            form: { username: user.username, password: PASSWORD },
          }),
        );
        expectStatus(res, 200);
      }
      for (const s of [onA, onB]) {
        // Frames of one publisher arrive in order: once the second is here, a copy of the first would be too.
        await s.waitFor((f) => f.type === 'login' && f.data.userId === last.id);
        expect(s.frames.filter((f) => f.type === 'login' && f.data.userId === first.id)).toHaveLength(1);
        expect(s.frames.filter((f) => f.type === 'login' && f.data.userId === last.id)).toHaveLength(1);
      }
    });

    it('refuses on one host a TOTP step already used on the other', async () => {
      const user = await register(cluster, 'totp-user');
      const c = client();
      const token = await accessToken(cluster, user);
      const setup = await c.post('/api/mfa/totp/setup', undefined, { token });
      expectStatus(setup, 200);
      const { secret, backup_codes: backupCodes } = dataOf<{ secret: string; backup_codes: string[] }>(setup);
      await awayFromStepBoundary();
      const code = totpCode(secret);
      // SPEC "MFA enrolment": the code that confirms TOTP counts as used.
      const confirm = await onHost(cluster, A, () => c.post('/api/mfa/totp/confirm', { code }, { token }));
      expectStatus(confirm, 200);
      const challenge = await onHost(cluster, B, () =>
        c.post('/api/auth/token', undefined, { form: { username: user.username, password: PASSWORD } }),
      );
      expect(challenge.body.mfa_required).toBe(true);
      const replay = await onHost(cluster, B, () =>
        c.post('/api/mfa/verify', { mfa_token: challenge.body.mfa_token, code }),
      );
      expect(replay.status).toBe(401);
      expect(replay.body.detail[0].code).toBe('mfa.code_invalid');
      // The challenge itself was good: a backup code completes it on the same host.
      const backup = await onHost(cluster, B, () =>
        c.post('/api/mfa/verify', { mfa_token: challenge.body.mfa_token, code: backupCodes[0] }),
      );
      expectStatus(backup, 200);
    });

    it('tells a socket on one host of a permission change made on the other, and closes it when superuser status changes', async () => {
      const user = await register(cluster, 'promoted-user');
      const token = await accessToken(cluster, user);
      const held = await socketOn(B, token);
      const admin = await adminToken(cluster);
      const c = client();
      await grant(cluster, user.id, ['cluster.read']);
      await held.waitFor((f) => f.type === 'user_permissions_changed' && f.data.userId === user.id);
      // SPEC "WebSocket connection": superuser status gained through the API closes the socket with 4403.
      const promote = await onHost(cluster, A, () =>
        c.patch(`/api/admin/user/${user.id}`, { isSuperuser: true }, { token: admin }),
      );
      expectStatus(promote, 200);
      expect(await closeCodeWithin(held, 5_000)).toBe(4403);
    });

    it('refuses on the other host, at once, a session ended on one: its access and refresh tokens and its socket', async () => {
      const user = await register(cluster, 'session-user');
      const c = client();
      const form = { username: user.username, password: user.password };
      const ended = await onHost(cluster, A, () => c.post('/api/auth/token', undefined, { form }));
      expectStatus(ended, 200);
      const kept = await onHost(cluster, B, () => c.post('/api/auth/token', undefined, { form }));
      expectStatus(kept, 200);
      const held = await socketOn(B, ended.body.access_token as string);
      const listed = await onHost(cluster, B, () =>
        c.get('/api/auth/sessions', { token: kept.body.access_token as string }),
      );
      expectStatus(listed, 200);
      const other = dataOf<{ id: string; current: boolean }[]>(listed).filter((session) => !session.current);
      expect(other).toHaveLength(1);
      // SPEC-2 "Sessions": ended on A, refused on B from that moment, on every worker and host.
      const end = await onHost(cluster, A, () =>
        c.delete(`/api/auth/sessions/${other[0]!.id}`, { token: kept.body.access_token as string }),
      );
      expect(end.status).toBe(204);
      const access = await onHost(cluster, B, () =>
        c.get('/api/auth/user', { token: ended.body.access_token as string }),
      );
      expect(access.status).toBe(401);
      expect(access.body.detail[0].code).toBe('auth.session_revoked');
      const refresh = await onHost(cluster, B, () =>
        c.post('/api/auth/refresh-token', { refresh_token: ended.body.refresh_token }),
      );
      expect(refresh.status).toBe(401);
      expect(refresh.body.detail[0].code).toBe('auth.refresh_token_revoked');
      expect(await closeCodeWithin(held, 5_000)).toBe(4401);
      // The session that ended the other goes on, on both hosts.
      for (const host of [A, B]) {
        const me = await onHost(cluster, host, () =>
          c.get('/api/auth/user', { token: kept.body.access_token as string }),
        );
        expectStatus(me, 200);
      }
    });

    // Faults under load (docs/deployment.md "Figures of the cluster suite"): a host killed with SIGKILL, a rolling
    // restart, a host killed with activity_log_sync on. Last: they kill and restart the hosts.
    // SPEC-3 §3: a host killed while it holds a leased delivery loses nothing: the other host makes the attempt
    // again once the lease ends (within 60 s), with the same `webhook-id`; a receiver deduplicates by it.
    it('redelivers the attempt of a host killed mid-delivery from the other host, same webhook-id, and every event of a stream', async () => {
      // The first request is held open (no answer) until the host making it is dead: whichever host claimed
      // it, it is killed mid-lease, every time. The others are answered at once.
      const receiver = await startWebhookReceiver();
      receiver.answer('/cluster', 'hang', 204);
      let killed: Cluster['hosts'][number] | undefined;
      try {
        const admin = client();
        const token = await adminToken(cluster);
        const created = await admin.post(
          '/api/admin/webhooks',
          { url: receiver.url('/cluster'), events: ['user.created'] },
          { token },
        );
        expectStatus(created, 201);
        const acknowledged: string[] = [];
        const register = async () => {
          const res = await client().post('/api/auth/register', {
            username: `wh-${randomBytes(4).toString('hex')}`,
            password: PASSWORD,
          });
          if (res.status === 201) acknowledged.push(dataOf<{ id: string }>(res).id);
        };
        await register();
        // The held attempt: find the host whose process holds its connection, and kill that host while the
        // attempt is still running (well inside its 2 s timeout, so its lease has not ended).
        for (let i = 0; i < 200 && receiver.at('/cluster').length === 0; i++) await sleep(25);
        const [held] = receiver.at('/cluster');
        expect(held).toBeDefined();
        killed = hostHolding(cluster.hosts, held!.remotePort!, receiver.port);
        expect(killed).toBeDefined();
        const survivor = killed === A ? B : A;
        // A stream of registrations (each a user.created) from four clients while the host dies.
        const started = Date.now();
        const stream = async () => {
          while (Date.now() - started < 2_000) await register();
        };
        const streams = Promise.all([stream(), stream(), stream(), stream()]);
        await killed!.kill();
        const killedAt = Date.now();
        await streams;
        expect(survivor.running()).toBe(true);
        expect(acknowledged.length).toBeGreaterThan(5);

        // SPEC-3 §3: within 60 seconds of being due after the host that held it died, the other host makes the
        // attempt again: the same event, the same webhook-id.
        const heldId = String(held!.headers['webhook-id']);
        const again = () => receiver.at('/cluster').filter((r) => r.headers['webhook-id'] === heldId);
        while (again().length < 2 && Date.now() - killedAt < 60_000) await sleep(100);
        expect(again().length).toBeGreaterThanOrEqual(2);
        const redeliveredAfterMs = Date.now() - killedAt;
        expect(again()[1]!.json).toEqual(held!.json);

        // Every acknowledged change delivered at least once; duplicates share their webhook-id.
        const delivered = () => new Set(receiver.at('/cluster').map((r) => r.json?.data.id as string));
        for (let i = 0; i < 300 && !acknowledged.every((id) => delivered().has(id)); i++) await sleep(100);
        expect(acknowledged.filter((id) => !delivered().has(id))).toEqual([]);
        const idsByUser = new Map<string, Set<string>>();
        for (const r of receiver.at('/cluster')) {
          const set = idsByUser.get(r.json.data.id) ?? new Set<string>();
          set.add(String(r.headers['webhook-id']));
          idsByUser.set(r.json.data.id, set);
        }
        expect([...idsByUser.values()].filter((ids) => ids.size !== 1)).toEqual([]);
        figures('SIGKILL of a host holding a webhook delivery', {
          killed: killed!.name,
          acknowledged: acknowledged.length,
          received: receiver.at('/cluster').length,
          duplicates: receiver.at('/cluster').length - idsByUser.size,
          redeliveredAfterMs,
        });
      } finally {
        await receiver.close();
        if (killed && !killed.running()) await killed.start();
      }
    }, 90_000);

    describe('faults under load', () => {
      let token: string;
      /** The load of a test that failed before stopping it stops here. */
      const loads: Load[] = [];
      const load = () => {
        const started = startLoad(cluster, token, { rate: RATE, connections: CONNECTIONS });
        loads.push(started);
        return started;
      };
      beforeAll(async () => {
        const writer = await register(cluster, 'load-writer');
        await grant(cluster, writer.id, ['notes.read', 'notes.write']);
        token = await accessToken(cluster, writer);
      }, 30_000);
      afterAll(() => Promise.all(loads.map((l) => l.stop())), 30_000);

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
        expect(outcomes.filter((o) => answeredBy(o) === B.address && o.status < 300).length).toBeGreaterThan(
          0,
        );
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
  });
}
