// docs/performance.md "Webhooks": SPEC-3 §3 delivery lag and what webhooks cost a request.
//
//   node bench/run.mjs --webhooks [--quick] [--out <file>]     (needs SVC_TEST_POSTGRES_URL and SVC_TEST_REDIS_URL)
//
// 1. Lag: two `svc serve` hosts on one fresh PostgreSQL database and Redis, webhooks on, one endpoint (`*`) at a
//    fast loopback receiver that answers 204 at once. `PATCH /api/admin/user/{id}` (each a `user.updated`) is sent
//    at RATE a second, alternating hosts, for SECONDS; the lag of an event is its arrival at the receiver minus
//    its `timestamp` (the change's time). Target: p99 < 2 s at 500 events/s.
// 2. Ratios: the logged write (`POST /api/notes/:id/archive`, activity log on) and the admin user write
//    (`PATCH /api/admin/user/{id}`, which records `user.updated` when on) against one server with webhooks on
//    (one endpoint subscribed to every event) and one with them off, rounds interleaved (each pair's order
//    alternating), a pair's ratio the median of its rounds' ratios.
//    Target: on >= 90% of off. (The issue names `POST /api/admin/user`, which svc does not have: the admin route
//    that creates a user, `POST /api/admin/user/invite` with its `user.created`, is measured, and the PATCH,
//    the cheapest admin write with an event, beside it.)
import { fork } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from './lib/pg.mjs';
import { startFastReceiver } from './lib/receiver.mjs';
import { ADMIN, call, createProject, login, seedReader, startServe } from './lib/project.mjs';
import { fmtInt, fmtMs, fmtPct, median, percentile, sleep, table } from './lib/stats.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));

export async function runWebhooks(argv) {
  const quick = argv.includes('--quick');
  const outIndex = argv.indexOf('--out');
  const outFile = outIndex > 0 ? argv[outIndex + 1] : join(HERE, 'results-webhooks.json');
  const RATE = 500;
  const SECONDS = quick ? 2 : 10;
  const MAX_IN_FLIGHT = 64;
  const PLAN = quick
    ? { rounds: 1, duration: 1, connections: 10 }
    : { rounds: 8, duration: 3, connections: 10 };
  const pgUrl = process.env.SVC_TEST_POSTGRES_URL,
    redisUrl = process.env.SVC_TEST_REDIS_URL;
  if (!pgUrl || !redisUrl)
    throw new Error('the webhook bench needs SVC_TEST_POSTGRES_URL and SVC_TEST_REDIS_URL');
  const log = (m) => console.error(`[bench webhooks] ${m}`);

  // The receiver (bench/lib/receiver.mjs, a fast 204 responder): arrival time per event id (first arrival)
  // while the lag is measured; afterwards only a count, so that the ratios' rounds pay as little as possible for
  // a receiver that would be another machine.
  const arrivals = new Map();
  /** The fan-out scenario's endpoint (`/fanout`): its own arrivals. */
  const fanoutArrivals = new Map();
  let timing = true;
  let received = 0;
  const receiver = await startFastReceiver((path, body) => {
    received++;
    if (!timing) return;
    const at = Date.now();
    const event = JSON.parse(body.toString('utf8'));
    const seen = path === '/fanout' ? fanoutArrivals : arrivals;
    if (!seen.has(event.id)) seen.set(event.id, at - Date.parse(event.timestamp));
  });
  const receiverUrl = `http://127.0.0.1:${receiver.port}/hook`;

  const database = await pg.create(pgUrl);
  const project = await createProject({ databaseUrl: database.url });
  const stops = [];
  const loader = fork(join(HERE, 'lib', 'load.mjs'), [], { stdio: 'inherit' });
  const out = {};
  try {
    const common = {
      webhooks_enabled: true,
      webhooks_allow_private_targets: true,
      cache_url: redisUrl,
      cache_prefix: `svcbenchwh:${Date.now()}:`,
      auth_rate_limit: 0,
    };
    // ---------------------------------------------------------------- lag, two hosts
    const hosts = [await startServe(project.dir, common), await startServe(project.dir, common)];
    stops.push(...hosts.map((h) => h.stop));
    const admin = (await login(hosts[0].base, ADMIN)).access_token;
    await call(hosts[0].base, 'POST', '/api/admin/webhooks', {
      token: admin,
      json: { url: receiverUrl, events: ['user.updated'] },
    });
    const users = [];
    for (let i = 0; i < 20; i++) {
      const u = { username: `bench-wh-${i}`, password: 'bench-webhook-password-1' };
      users.push((await call(hosts[0].base, 'POST', '/api/auth/register', { json: u })).body.id);
    }
    log(`lag: ${RATE} events/s for ${SECONDS} s on two hosts`);
    const sent = [];
    const t0 = Date.now();
    let n = 0;
    let failed = 0;
    const inFlight = new Set();
    while (Date.now() - t0 < SECONDS * 1000) {
      const due = Math.floor(((Date.now() - t0) / 1000) * RATE);
      // At most MAX_IN_FLIGHT requests at once: an open loop without a cap opened hundreds of connections on a
      // slower host until connecting timed out; behind schedule, the achieved rate below says so.
      while (n < due && inFlight.size < MAX_IN_FLIGHT) {
        const host = hosts[n % 2];
        const p = fetch(`${host.base}/api/admin/user/${users[n % users.length]}`, {
          method: 'PATCH',
          headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
          body: JSON.stringify({ firstName: `n${n}` }),
        })
          .then(async (res) => {
            await res.arrayBuffer();
            if (res.status === 200) sent.push(n);
            else failed++;
          })
          .catch(() => failed++);
        inFlight.add(p);
        p.finally(() => inFlight.delete(p));
        n++;
      }
      await sleep(2);
    }
    await Promise.allSettled([...inFlight]);
    const achieved = sent.length / SECONDS;
    for (let i = 0; i < 300 && arrivals.size < sent.length; i++) await sleep(100);
    const lags = [...arrivals.values()];
    out.lag = {
      sent: sent.length,
      ratePerSecond: achieved,
      failed,
      delivered: arrivals.size,
      p50: percentile(lags, 50),
      p99: percentile(lags, 99),
      max: Math.max(...lags),
    };

    // ---------------------------------------------------------------- lag at 500 events/s by fan-out
    // This host's two servers reach about 150 PATCHes a second above, so the 500 events/s of the target are
    // made the way a real burst is: one `PUT /admin/permissions/groups/{id}` that swaps the permission of a
    // group of FANOUT members records `permissions.changed` for each member in its transaction (SPEC-3 §3,
    // `recordEach`), so RATE / FANOUT requests a second give RATE events a second. What is measured is the
    // delivery: both hosts' workers claiming and POSTing 500 events a second.
    const FANOUT = 10;
    const GROUPS = 4;
    // Four groups of ten members each, so that changes of different groups run in parallel (those of one group
    // wait on its row).
    const groups = [];
    for (let g = 0; g < GROUPS; g++) {
      const group = (
        await call(hosts[0].base, 'POST', '/api/admin/permissions/groups', {
          token: admin,
          json: { name: `bench-webhooks-fanout-${g}` },
        })
      ).body;
      groups.push(group.id);
      for (let m = 0; m < FANOUT; m++) {
        const member = { username: `bench-wh-fan-${g}-${m}`, password: 'bench-webhook-password-1' };
        const id = (await call(hosts[0].base, 'POST', '/api/auth/register', { json: member })).body.id;
        await call(hosts[0].base, 'PUT', `/api/admin/permissions/users/${id}/groups`, {
          token: admin,
          json: { groupIds: [group.id] },
        });
      }
    }
    const ids = [];
    for (const codename of ['bench_fanout_a', 'bench_fanout_b'])
      ids.push(
        (
          await call(hosts[0].base, 'POST', '/api/admin/permissions/permissions', {
            token: admin,
            json: { codename, description: 'webhook bench' },
          })
        ).body.id,
      );
    await call(hosts[0].base, 'POST', '/api/admin/webhooks', {
      token: admin,
      json: { url: receiverUrl.replace(/\/hook$/, '/fanout'), events: ['permissions.changed'] },
    });
    const fanoutRate = RATE / FANOUT;
    log(`lag: ${RATE} events/s for ${SECONDS} s on two hosts (${fanoutRate} group changes/s of ${FANOUT})`);
    let changes = 0;
    let changed = 0;
    let changeFailures = 0;
    const t1 = Date.now();
    // Two changers per group, one on each host.
    const changers = Array.from({ length: GROUPS * 2 }, async (_, w) => {
      const host = hosts[w % 2];
      const group = { id: groups[Math.floor(w / 2)] };
      while (Date.now() - t1 < SECONDS * 1000) {
        const due = Math.floor(((Date.now() - t1) / 1000) * fanoutRate);
        if (changes >= due) {
          await sleep(2);
          continue;
        }
        const k = changes++;
        const res = await fetch(`${host.base}/api/admin/permissions/groups/${group.id}`, {
          method: 'PUT',
          headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
          body: JSON.stringify({ permissionIds: [ids[(k + 1) % 2]] }),
        }).catch(() => null);
        const answer = await res?.text();
        if (res?.status === 200) changed++;
        else if (changeFailures++ === 0) log(`a group change failed: ${res?.status} ${answer}`);
      }
    });
    await Promise.all(changers);
    const expected = changed * FANOUT;
    for (let i = 0; i < 300 && fanoutArrivals.size < expected; i++) await sleep(100);
    const fanoutLags = [...fanoutArrivals.values()];
    out.lagFanout = {
      changes: changed,
      failed: changeFailures,
      eventsPerSecond: expected / SECONDS,
      expected,
      delivered: fanoutArrivals.size,
      p50: percentile(fanoutLags, 50),
      p99: percentile(fanoutLags, 99),
      max: Math.max(...fanoutLags),
    };
    for (const h of hosts) await h.stop();
    stops.length = 0;

    // ---------------------------------------------------------------- ratios, on and off
    timing = false;
    const on = await startServe(project.dir, { ...common, activity_log_enabled: true });
    const off = await startServe(project.dir, {
      ...common,
      webhooks_enabled: false,
      activity_log_enabled: true,
    });
    stops.push(on.stop, off.stop);
    const { noteId } = await seedReader(on.base);
    const reader = (await login(on.base, { username: 'bench-reader', password: 'bench-reader-password-1' }))
      .access_token;
    const target = users[0];
    const spread = users.map((id) => `/api/admin/user/${id}`);
    const ask = (job) =>
      new Promise((resolve, reject) => {
        loader.once('message', (m) => (m?.error ? reject(new Error(m.error)) : resolve(m)));
        loader.send(job);
      });
    const jobs = {
      'write-webhooks-on': {
        port: on.port,
        path: `/api/notes/${noteId}/archive`,
        method: 'POST',
        tokens: [reader],
      },
      'write-webhooks-off': {
        port: off.port,
        path: `/api/notes/${noteId}/archive`,
        method: 'POST',
        tokens: [reader],
      },
      'admin-user-webhooks-on': { port: on.port, path: `/api/admin/user/${target}`, method: 'PATCH' },
      'admin-user-webhooks-off': { port: off.port, path: `/api/admin/user/${target}`, method: 'PATCH' },
      // The same writes spread over the 20 users: with one user, every PATCH waits on that user's row lock, held
      // for the transaction that also writes the outbox (docs/performance.md "Webhooks"), so the one-row rows
      // measure the lock's queue as much as the webhook's cost.
      'admin-users-webhooks-on': { port: on.port, paths: spread, method: 'PATCH' },
      'admin-users-webhooks-off': { port: off.port, paths: spread, method: 'PATCH' },
    };
    // The admin write that creates a user, `POST /api/admin/user/invite` (SPEC-2; the POST under
    // `/api/admin/user`): each records a `user.created` when on, delivered to an endpoint of its own. Its bodies
    // are single-use (each invites a new address), so each round gets its own.
    await call(on.base, 'POST', '/api/admin/webhooks', {
      token: admin,
      json: { url: receiverUrl.replace(/\/hook$/, '/created'), events: ['user.created'] },
    });
    const INVITES = 6000;
    for (const side of ['on', 'off'])
      jobs[`admin-invite-webhooks-${side}`] = {
        port: side === 'on' ? on.port : off.port,
        path: '/api/admin/user/invite',
        method: 'POST',
        invites: (round) =>
          Array.from({ length: INVITES }, (_, i) =>
            JSON.stringify({ email: `bench-invite-${side}-${round}-${i}@example.org` }),
          ),
      };
    const samples = Object.fromEntries(Object.keys(jobs).map((k) => [k, []]));
    for (let round = 0; round < PLAN.rounds; round++) {
      // Each pair's order alternates between rounds (on then off, off then on): both servers write the same
      // database, whose tables and indexes grow through the rounds, so a fixed order would favour one side.
      const order = Object.keys(jobs).map((name, i, names) => (round % 2 === 1 ? names[i ^ 1] : name));
      for (const name of order) {
        const j = jobs[name];
        const r = await ask({
          url: `http://127.0.0.1:${j.port}${j.path ?? j.paths[0]}`,
          ...(j.paths ? { paths: j.paths } : {}),
          method: j.method,
          connections: PLAN.connections,
          seconds: PLAN.duration,
          ...(j.tokens
            ? { tokens: j.tokens }
            : j.invites
              ? {
                  headers: { authorization: `Bearer ${admin}` },
                  contentType: 'application/json',
                  bodies: j.invites(round),
                  amount: INVITES,
                }
              : {
                  // Alternating names: each PATCH changes the user, so each records a `user.updated` when on.
                  headers: { authorization: `Bearer ${admin}` },
                  contentType: 'application/json',
                  // Three names (a number prime to the 20 users of the spread rows): each PATCH changes its user.
                  bodies: ['{"firstName":"bench-a"}', '{"firstName":"bench-b"}', '{"firstName":"bench-c"}'],
                }),
        });
        samples[name].push(r.rps);
        // A refused write is cheaper than a done one: a rate with refusals in it would not be the route's.
        if (r.non2xx || r.errors) throw new Error(`${name}: ${r.non2xx} non-2xx answers, ${r.errors} errors`);
        // The events of a round are delivered before the next round starts (its deliveries would otherwise
        // run during the next round, on the same cores): until nothing arrives for 300 ms.
        for (let last = -1, i = 0; last !== received && i < 50; i++) {
          last = received;
          await sleep(300);
        }
      }
    }
    out.rows = Object.fromEntries(
      Object.entries(samples).map(([k, v]) => [k, { rps: median(v), samples: v }]),
    );
  } finally {
    loader.kill();
    for (const stop of stops) await stop().catch(() => undefined);
    await receiver.close();
    project.remove();
    await database.drop().catch(() => undefined);
  }
  // The ratio of a pair: the median of its rounds' ratios, each of an on and an off figure measured one after
  // the other. Rounds of 3 s drift by ±15% with what the machine does meanwhile (the logged write, which
  // emits no event, measured 89% as a ratio of the two medians and 100% as this median in one run), and the
  // two figures of a round share that drift. The ratio of the medians is kept beside it (`ratioOfMedians`).
  const ratio = (a, b) => median(out.rows[a].samples.map((rps, i) => rps / out.rows[b].samples[i]));
  out.ratios = Object.fromEntries(
    Object.keys(out.rows)
      .filter((k) => k.endsWith('-on'))
      .map((on) => {
        const off = on.replace(/-on$/, '-off');
        return [
          on.replace(/-webhooks-on$/, ''),
          { paired: ratio(on, off), ratioOfMedians: out.rows[on].rps / out.rows[off].rps },
        ];
      }),
  );
  const targets = [
    {
      text: `delivery lag p99 < 2 s, PATCHes at ${fmtInt(out.lag.ratePerSecond)} events/s (PostgreSQL + Redis, two hosts)`,
      value: fmtMs(out.lag.p99),
      ok: out.lag.p99 < 2000,
    },
    {
      text: `delivery lag p99 < 2 s at 500 events/s, reached ${fmtInt(out.lagFanout.eventsPerSecond)} (group changes of 10)`,
      value: fmtMs(out.lagFanout.p99),
      ok:
        out.lagFanout.p99 < 2000 &&
        out.lagFanout.eventsPerSecond >= 475 &&
        out.lagFanout.delivered === out.lagFanout.expected,
    },
    {
      text: 'logged write, webhooks on >= 90% of off',
      value: fmtPct(ratio('write-webhooks-on', 'write-webhooks-off')),
      ok: ratio('write-webhooks-on', 'write-webhooks-off') >= 0.9,
    },
    {
      text: 'PATCH /api/admin/user/{id}, webhooks on >= 90% of off',
      value: fmtPct(ratio('admin-user-webhooks-on', 'admin-user-webhooks-off')),
      ok: ratio('admin-user-webhooks-on', 'admin-user-webhooks-off') >= 0.9,
    },
    {
      text: 'PATCH /api/admin/user/{id} over 20 users, webhooks on >= 90% of off',
      value: fmtPct(ratio('admin-users-webhooks-on', 'admin-users-webhooks-off')),
      ok: ratio('admin-users-webhooks-on', 'admin-users-webhooks-off') >= 0.9,
    },
    {
      text: 'POST /api/admin/user/invite, webhooks on >= 90% of off',
      value: fmtPct(ratio('admin-invite-webhooks-on', 'admin-invite-webhooks-off')),
      ok: ratio('admin-invite-webhooks-on', 'admin-invite-webhooks-off') >= 0.9,
    },
  ];
  console.log(
    table([
      ['scenario', 'figure'],
      ['events sent / s (achieved)', fmtInt(out.lag.ratePerSecond)],
      ['events delivered / sent', `${fmtInt(out.lag.delivered)} / ${fmtInt(out.lag.sent)}`],
      ['delivery lag p50', fmtMs(out.lag.p50)],
      ['delivery lag p99', fmtMs(out.lag.p99)],
      ['fan-out: events / s (group changes of 10)', fmtInt(out.lagFanout.eventsPerSecond)],
      [
        'fan-out: events delivered / recorded',
        `${fmtInt(out.lagFanout.delivered)} / ${fmtInt(out.lagFanout.expected)}`,
      ],
      ['fan-out: delivery lag p50', fmtMs(out.lagFanout.p50)],
      ['fan-out: delivery lag p99', fmtMs(out.lagFanout.p99)],
      ...Object.entries(out.rows).map(([k, v]) => [k, `${fmtInt(v.rps)} req/s`]),
      ...Object.entries(out.ratios).map(([k, v]) => [
        `${k}: on / off, median of the rounds' ratios (ratio of the medians)`,
        `${fmtPct(v.paired)} (${fmtPct(v.ratioOfMedians)})`,
      ]),
      ...targets.map((t) => [`${t.ok ? 'met' : 'MISSED'}: ${t.text}`, t.value]),
    ]),
  );
  writeFileSync(outFile, JSON.stringify({ ...out, targets, quick }, null, 2) + '\n');
}
