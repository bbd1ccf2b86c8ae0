// `pnpm bench --data --console-sizes`: the admin console's lists at the sizes of its budget (SPEC-3 §6;
// docs/admin-console.md, docs/performance.md "The console's lists at a million users"): on PostgreSQL,
// 1,000,000 users and 10,000,000 activity entries (with organizations, groups and webhook deliveries), every list
// and search call the console makes measured one administrator request at a time (p50 / p95 / max) while other
// users' GET /api/auth/user runs under autocannon (its p99 during each list).
//
// Seeding is server-side: one INSERT … SELECT over generate_series a table, into the tables the project's own
// migrations created (`svc init` writes them from this checkout's tables, so the column shapes are the app's).
// The secondary indexes of the big tables are dropped first and rebuilt from their own definitions
// (`pg_indexes.indexdef`) after the insert: one sorted build instead of ten million index insertions.
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { ADMIN, ROOT, call, createProject, login, startServe } from './project.mjs';
import { activitySelect, ACTIVITY_COLUMNS, waitForTrigramIndexes } from './data.mjs';
import { median, percentile } from './stats.mjs';

const requireCore = createRequire(join(ROOT, 'packages', 'core', 'package.json'));

/** SPEC-3 §6 (issue budget): the sizes the console's lists must stay fast at. */
export const CONSOLE_SIZES = {
  users: 1_000_000,
  activity: 10_000_000,
  organizations: 10_000,
  permissions: 200,
  groups: 1_000,
  /** Users in groups (the first ones, round robin over the groups). */
  groupMembers: 100_000,
  webhookEndpoints: 10,
  /** Events, each delivered to the first two endpoints. */
  webhookEvents: 500_000,
};

/** The console's budget (docs/admin-console.md "Budgets"). */
export const CONSOLE_BUDGET = { listP95Ms: 300, userP99Ms: 20 };

const BIG_ORG = '00000000-0000-4000-9000-000000000000';
const ENDPOINT = (i) => `00000000-0000-4000-a000-${String(i).padStart(12, '0')}`;
const USER = (i) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;

/** Tables whose secondary indexes are rebuilt after the bulk insert. */
const BULK_TABLES = [
  'svc_user',
  'svc_activity_log',
  'svc_organization_member',
  'svc_user_group',
  'svc_webhook_event',
  'svc_webhook_delivery',
];

/**
 * The console's list calls (packages/core/console/src: users.tsx, groups.tsx, activity.tsx and the
 * organization and webhook pages), each as the console sends it. `after`, `userId` and the dates are filled in
 * at run time.
 */
function consoleRoutes(sizes, { after, userId, day }) {
  const someone = `user${Math.floor(sizes.users * 0.4242)}`;
  return [
    // Users (SPEC-3 §6 users list: search, sort, paging; 25 a page, newest first by default)
    ['users', 'users list (newest first)', '/api/admin/user/?page=1&pageSize=25'],
    ['users-page-2', 'users list, page 2', '/api/admin/user/?page=2&pageSize=25'],
    ['users-page-400', 'users list, page 400 (OFFSET 9,975)', '/api/admin/user/?page=400&pageSize=25'],
    ['users-by-username', 'users sorted by username', '/api/admin/user/?orderBy=username'],
    ['users-by-email-desc', 'users sorted by email, descending', '/api/admin/user/?orderBy=-email'],
    ['users-by-last-login', 'users sorted by last login', '/api/admin/user/?orderBy=-lastLoginAt'],
    ['users-by-last-name', 'users sorted by last name', '/api/admin/user/?orderBy=lastName'],
    ['users-by-staff', 'users sorted by staff flag', '/api/admin/user/?orderBy=-isStaff'],
    ['users-search-one', `users search "${someone}"`, `/api/admin/user/?search=${someone}`],
    ['users-search-many', 'users search "family42" (last names: many)', '/api/admin/user/?search=family42'],
    [
      'users-search-email',
      'users search "@example.org" (half of them)',
      '/api/admin/user/?search=%40example.org',
    ],
    [
      'users-search-sorted',
      'users search "family42" sorted by username',
      '/api/admin/user/?search=family42&orderBy=username',
    ],
    // Groups and permissions (not paged: every group and permission)
    ['groups', 'groups', '/api/admin/permissions/groups'],
    ['permissions', 'permissions', '/api/admin/permissions/permissions'],
    // Organizations (SPEC-3 §2)
    ['orgs', 'organizations (newest first, memberCount)', '/api/admin/organizations'],
    ['orgs-search', 'organizations search "org-42"', '/api/admin/organizations?search=org-42'],
    ['orgs-page-100', 'organizations, page 100', '/api/admin/organizations?page=100'],
    [
      'org-members',
      `members of an organization of ${sizes.users.toLocaleString('en-US')}`,
      `/api/organizations/${BIG_ORG}/members`,
    ],
    // The activity log: each filter of the console's form, and keyset paging (50 a page)
    ['logs', 'activity log (default filters)', '/api/admin/audit/logs?pageSize=50'],
    [
      'logs-search',
      `activity log search "${someone}"`,
      `/api/admin/audit/logs?search=${someone}&pageSize=50`,
    ],
    ['logs-user', 'activity log of one user (userId)', `/api/admin/audit/logs?userId=${userId}&pageSize=50`],
    ['logs-method', 'activity log, method DELETE', '/api/admin/audit/logs?method=DELETE&pageSize=50'],
    ['logs-status', 'activity log, status 404', '/api/admin/audit/logs?statusCode=404&pageSize=50'],
    [
      'logs-path',
      'activity log, path contains "/api/notes/4242/"',
      '/api/admin/audit/logs?pathContains=%2Fapi%2Fnotes%2F4242%2F&pageSize=50',
    ],
    [
      'logs-dates',
      `activity log, one day (${day})`,
      `/api/admin/audit/logs?dateFrom=${day}&dateTo=${day}&pageSize=50`,
    ],
    [
      'logs-combined',
      'activity log, DELETE + 404 + path contains "token"',
      '/api/admin/audit/logs?method=DELETE&statusCode=404&pathContains=token&pageSize=50',
    ],
    ['logs-rare', 'activity log, status 599 (no match)', '/api/admin/audit/logs?statusCode=599&pageSize=50'],
    ['logs-200', 'activity log, 200 a page', '/api/admin/audit/logs?pageSize=200'],
    ...(after
      ? [
          [
            'logs-after',
            'activity log, next page by keyset (after, deep in the log)',
            `/api/admin/audit/logs?after=${after}&pageSize=50`,
          ],
        ]
      : []),
    // Webhooks: endpoints, an endpoint's deliveries (newest first), by status, page 2
    ['webhooks', 'webhook endpoints', '/api/admin/webhooks/'],
    ['deliveries', 'deliveries of an endpoint', `/api/admin/webhooks/${ENDPOINT(0)}/deliveries`],
    [
      'deliveries-failed',
      'deliveries of an endpoint, failed',
      `/api/admin/webhooks/${ENDPOINT(0)}/deliveries?status=failed`,
    ],
    [
      'deliveries-page-2',
      'deliveries of an endpoint, page 2',
      `/api/admin/webhooks/${ENDPOINT(0)}/deliveries?page=2`,
    ],
  ];
}

/** `[indexname, indexdef]` of the secondary indexes of `tables` (not those behind a primary key or unique constraint). */
async function secondaryIndexes(sql, tables) {
  const rows = await sql`
    select i.indexname, i.indexdef from pg_indexes i
    where i.schemaname = current_schema() and i.tablename = any(${tables})
      and not exists (select 1 from pg_constraint c where c.conname = i.indexname)
    order by i.tablename, i.indexname`;
  return rows.map((r) => [r.indexname, r.indexdef]);
}

async function seedConsolePostgres(url, sizes, log) {
  const postgres = requireCore('postgres');
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  const timings = {};
  const step = async (name, fn) => {
    const t = Date.now();
    await fn();
    timings[name] = Date.now() - t;
    log(`${name}: ${timings[name]} ms`);
  };
  try {
    // A bulk load: no WAL flush per statement, room to sort index builds, and no foreign-key trigger per row
    // (the rows reference what the statements before them inserted).
    await sql`set synchronous_commit = off`;
    await sql`set maintenance_work_mem = '512MB'`;
    await sql`set session_replication_role = replica`;
    // The server's own index builds (the pg_trgm GIN indexes it makes in the background at its first start) get
    // the same room: a database setting of this run's database, as a deployment with big tables would set it.
    const [{ db: database }] = await sql`select current_database() as db`;
    await sql.unsafe(`ALTER DATABASE "${database}" SET maintenance_work_mem = '512MB'`);
    const [{ password_hash: hash }] =
      await sql`SELECT password_hash FROM svc_user WHERE username = ${ADMIN.username}`;
    const indexes = await secondaryIndexes(sql, BULK_TABLES);
    await step('drop secondary indexes', async () => {
      for (const [name] of indexes) await sql.unsafe(`DROP INDEX "${name}"`);
    });
    await step(`users (${sizes.users})`, () =>
      sql.unsafe(
        `INSERT INTO svc_user (id, username, email, first_name, last_name, password_hash, is_staff,
          last_login_at, created_at)
        SELECT ('00000000-0000-4000-8000-' || lpad(i::text, 12, '0'))::uuid, 'user' || i,
          'user' || i || CASE WHEN i % 2 = 0 THEN '@example.com' ELSE '@example.org' END,
          (ARRAY['Ada','Grace','Alan','Edsger','Barbara','Donald','Frances','Ken','Margaret','John'])[1 + i % 10],
          'Family' || (i % 5000), $1, i % 100 = 0,
          CASE WHEN i % 3 = 0 THEN NULL ELSE now() - (i % 100000) * interval '1 minute' END,
          now() - i * interval '1 second'
        FROM generate_series(0, ${sizes.users - 1}) AS i`,
        [hash],
      ),
    );
    await step(`organizations (${sizes.organizations}) and ${sizes.users} members of one`, async () => {
      await sql.unsafe(`INSERT INTO svc_organization (id, slug, name, created_at)
        SELECT ('00000000-0000-4000-9000-' || lpad(i::text, 12, '0'))::uuid, 'org-' || i, 'Organization ' || i,
          now() - (i + 1) * interval '1 second' FROM generate_series(0, ${sizes.organizations - 1}) AS i`);
      await sql.unsafe(`INSERT INTO svc_organization_member (organization_id, user_id, role, joined_at)
        SELECT '${BIG_ORG}'::uuid, ('00000000-0000-4000-8000-' || lpad(i::text, 12, '0'))::uuid,
          CASE WHEN i = 0 THEN 'owner' ELSE 'member' END, now() - i * interval '1 second'
        FROM generate_series(0, ${sizes.users - 1}) AS i`);
      // Ten members in each of the other organizations (their memberCount is not always 0).
      await sql.unsafe(`INSERT INTO svc_organization_member (organization_id, user_id, role, joined_at)
        SELECT ('00000000-0000-4000-9000-' || lpad(o::text, 12, '0'))::uuid,
          ('00000000-0000-4000-8000-' || lpad(((o * 10 + m) % ${sizes.users})::text, 12, '0'))::uuid,
          CASE WHEN m = 0 THEN 'owner' ELSE 'member' END, now()
        FROM generate_series(1, ${sizes.organizations - 1}) AS o, generate_series(0, 9) AS m`);
    });
    await step(
      `permissions (${sizes.permissions}), groups (${sizes.groups}), ${sizes.groupMembers} members`,
      async () => {
        await sql.unsafe(`INSERT INTO svc_permission (codename, description)
        SELECT 'feature' || (i / 4) || '.' || (ARRAY['read','write','export','admin'])[1 + i % 4], 'Permission ' || i
        FROM generate_series(0, ${sizes.permissions - 1}) AS i`);
        await sql.unsafe(`INSERT INTO svc_group (name, description)
        SELECT 'group-' || i, 'Group number ' || i FROM generate_series(0, ${sizes.groups - 1}) AS i`);
        await sql.unsafe(`INSERT INTO svc_group_permission (group_id, permission_id)
        SELECT g.id, p.id FROM svc_group g JOIN svc_permission p ON p.id % 40 = g.id % 40`);
        await sql.unsafe(`INSERT INTO svc_user_group (user_id, group_id)
        SELECT ('00000000-0000-4000-8000-' || lpad(i::text, 12, '0'))::uuid, g.id
        FROM generate_series(1, ${sizes.groupMembers}) AS i
        JOIN svc_group g ON g.name = 'group-' || (i % ${sizes.groups})`);
      },
    );
    await step(`activity entries (${sizes.activity})`, () =>
      sql.unsafe(
        `INSERT INTO svc_activity_log (${ACTIVITY_COLUMNS}) ${activitySelect('pg', sizes.users, sizes.activity)}
         FROM generate_series(1, ${sizes.activity}) AS i`,
      ),
    );
    await step(
      `webhooks (${sizes.webhookEndpoints} endpoints, ${sizes.webhookEvents} events x 2 deliveries)`,
      async () => {
        for (let i = 0; i < sizes.webhookEndpoints; i++) {
          await sql`INSERT INTO svc_webhook_endpoint (id, url, events, description, enabled, secret, created_at)
          VALUES (${ENDPOINT(i)}, ${`http://127.0.0.1:9/hooks/${i}`}, '["*"]', ${`endpoint ${i}`}, false,
            ${`whsec_${'x'.repeat(32)}${i}`}, now() - ${i} * interval '1 day')`;
        }
        await sql.unsafe(`INSERT INTO svc_webhook_event (id, type, data, created_at)
        SELECT ('00000000-0000-4000-b000-' || lpad(i::text, 12, '0'))::uuid,
          (ARRAY['user.created','user.updated','user.deleted','session.revoked'])[1 + i % 4],
          '{"userId":"' || ('00000000-0000-4000-8000-' || lpad((i % ${sizes.users})::text, 12, '0')) || '"}',
          now() - (${sizes.webhookEvents} - i) * interval '5 seconds'
        FROM generate_series(1, ${sizes.webhookEvents}) AS i`);
        // Finished deliveries (none due, so the worker sends nothing), ids in time order: 2% failed after 8 attempts.
        const failed = '(i + ep.n) % 50 = 0';
        const at = `now() - (${sizes.webhookEvents} - i) * interval '5 seconds'`;
        await sql.unsafe(`INSERT INTO svc_webhook_delivery (event_id, endpoint_id, status, attempts, last_status_code,
          last_error, next_attempt_at, created_at, delivered_at)
        SELECT ('00000000-0000-4000-b000-' || lpad(i::text, 12, '0'))::uuid, ep.id,
          CASE WHEN ${failed} THEN 'failed' ELSE 'succeeded' END, CASE WHEN ${failed} THEN 8 ELSE 1 END,
          CASE WHEN ${failed} THEN 503 ELSE 200 END, CASE WHEN ${failed} THEN 'HTTP 503' ELSE NULL END,
          NULL, ${at}, ${at} + interval '1 second'
        FROM generate_series(1, ${sizes.webhookEvents}) AS i
        CROSS JOIN (VALUES ('${ENDPOINT(0)}'::uuid, 0), ('${ENDPOINT(1)}'::uuid, 1)) AS ep(id, n)
        ORDER BY i, ep.n`);
      },
    );
    await step(`rebuild ${indexes.length} secondary indexes`, async () => {
      for (const [, definition] of indexes) await sql.unsafe(definition);
    });
    await sql`set session_replication_role = origin`;
    await step('vacuum analyze', async () => {
      for (const table of [
        ...BULK_TABLES,
        'svc_organization',
        'svc_group',
        'svc_permission',
        'svc_group_permission',
        'svc_webhook_endpoint',
      ])
        await sql.unsafe(`VACUUM ANALYZE "${table}"`);
    });
  } finally {
    await sql.end();
  }
  return timings;
}

/**
 * The admin's requests of `path`, one at a time, for as long as `during` runs (at least `count` after `warmup`):
 * p50, p95 and max in ms.
 */
async function adminLoop(base, token, path, { warmup, count }, during) {
  const times = [];
  let status = 0;
  let done = false;
  const finished = during.then((figures) => {
    done = true;
    return figures;
  });
  // Under the load for its whole window, and at least `count` samples (a slow route may outlast the load).
  for (let i = 0; i < warmup || times.length < count || !done; i++) {
    const t = process.hrtime.bigint();
    const res = await fetch(`${base}${path}`, { headers: { authorization: `Bearer ${token}` } });
    await res.arrayBuffer();
    status = res.status;
    if (i >= warmup) times.push(Number(process.hrtime.bigint() - t) / 1e6);
    if (times.length >= count * 10) break; // a fast route: enough samples, the load ends on its own
  }
  const users = await finished;
  return {
    p50: median(times),
    p95: percentile(times, 95),
    max: Math.max(...times),
    samples: times.length,
    status,
    userP50: users.p50,
    userP99: users.p99,
    userRps: users.rps,
    userErrors: users.errors + users.non2xx,
  };
}

/** The click-through: the pause between an answer and the next click, and how long the other users' load runs. */
const CLICK_PAUSE_MS = 250;
const CLICK_SECONDS = 20;
/** Walks of every list, at least (the load's window decides: the walk goes on until it ends). */
const CLICK_WALKS = 1;

/**
 * Visits every console route in turn, each one request, `CLICK_PAUSE_MS` after the answer before: at least
 * `walks` walks, and until `during` (the other users' load) ends. Without `during`: `walks` walks, unmeasured.
 */
async function clickThrough(base, token, routes, walks, during) {
  const times = [];
  let done = false;
  const finished = during?.then((figures) => {
    done = true;
    return figures;
  });
  for (let walk = 0; walk < walks || (finished && !done); walk++) {
    for (const [, , path] of routes) {
      const t = process.hrtime.bigint();
      const res = await fetch(`${base}${path}`, { headers: { authorization: `Bearer ${token}` } });
      await res.arrayBuffer();
      times.push(Number(process.hrtime.bigint() - t) / 1e6);
      if (finished && done && walk + 1 >= walks) break;
      await new Promise((resolve) => setTimeout(resolve, CLICK_PAUSE_MS));
    }
  }
  if (!finished) return undefined;
  const users = await finished;
  return {
    pages: times.length,
    pauseMs: CLICK_PAUSE_MS,
    p50: median(times),
    max: Math.max(...times),
    userP50: users.p50,
    userP99: users.p99,
    userRps: users.rps,
    userErrors: users.errors + users.non2xx,
  };
}

/**
 * Seeds a fresh PostgreSQL project at `sizes`, starts `svc serve` (activity log, organizations and webhooks on)
 * and measures each console list call under other users' load. `ask(job)` runs one autocannon job.
 */
export async function runConsoleData(
  name,
  databaseUrl,
  { plan, ask, sizes = CONSOLE_SIZES, keep = false, reuse },
) {
  const log = (m) => console.error(`[bench --data --console-sizes ${name}] ${m}`);
  // `reuse`: the folder of a project an earlier run kept (`keep`), its database seeded at these sizes.
  const project = reuse ? { dir: reuse, remove() {} } : await createProject({ databaseUrl });
  const out = { sizes, budget: CONSOLE_BUDGET, rows: {}, labels: {}, stall: {}, reused: Boolean(reuse) };
  const stops = [];
  try {
    log(`project ${project.dir}`);
    if (!reuse) {
      const seedStarted = Date.now();
      out.seed = await seedConsolePostgres(databaseUrl, sizes, log);
      out.seedMs = Date.now() - seedStarted;
    }
    const server = await startServe(
      project.dir,
      { activity_log_enabled: true, organizations_enabled: true, webhooks_enabled: true },
      { deadlineMs: 600_000 },
    );
    stops.push(server.stop);
    out.firstStartMs = server.coldStartMs;
    // The server builds the pg_trgm indexes of the user and activity tables in the background: waited for.
    out.textIndexMs = await waitForTrigramIndexes(databaseUrl, log, { timeoutMs: 60 * 60_000 });
    const admin = (await login(server.base, ADMIN)).access_token;
    // Other users (not superusers) for the load: the seeded ones share the administrator's password hash.
    const others = [];
    for (let i = 1; i <= 20; i++)
      others.push(
        (await login(server.base, { username: `user${i * 7}`, password: ADMIN.password })).access_token,
      );

    // Keyset continuation deep in the log: the console's "next" after a page far back in time (an entry's id).
    const deep = Math.floor(sizes.activity * 0.05);
    const userId = USER(4242 % sizes.users);
    const day = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
    const probe = await call(server.base, 'GET', `/api/admin/audit/logs?pageSize=1&dateTo=${day}`, {
      token: admin,
    });
    const after = probe.body.items?.[0]?.id ? Math.max(1, probe.body.items[0].id - deep) : undefined;

    const job = {
      url: `${server.base}/api/auth/user`,
      method: 'GET',
      connections: plan.connections,
      seconds: plan.stallSeconds,
      tokens: others,
    };
    out.stall.alone = await ask(job);
    log(
      `GET /api/auth/user alone: p50 ${out.stall.alone.p50} / p99 ${out.stall.alone.p99} ms, ${Math.round(out.stall.alone.rps)} req/s`,
    );
    // Two loads of other users: a busy server's (half of what it answers alone, as a fixed arrival rate at even
    // intervals, bench/lib/load.mjs `paced`: the operating point a server is sized for, docs/performance.md), and a saturating one (10 connections, each
    // sending its next request as soon as the last is answered), where every request also waits behind the
    // others in the queue.
    out.rate = Math.max(1, Math.round(out.stall.alone.rps / 2));
    out.stall.aloneAtRate = await ask({ ...job, rate: out.rate });
    log(
      `GET /api/auth/user alone at ${out.rate} req/s: p50 ${out.stall.aloneAtRate.p50} / p99 ${out.stall.aloneAtRate.p99} ms`,
    );
    const routes = consoleRoutes(sizes, { after, userId, day });
    // The issue's reading of the budget: an administrator clicking through the console's lists, one page
    // after another at a quick human pace (CLICK_PAUSE_MS between an answer and the next click), while the
    // other users keep the busy load; their p99 over the whole walk. A walk first to warm up, not measured.
    await clickThrough(server.base, admin, routes, 1);
    out.clicks = await clickThrough(
      server.base,
      admin,
      routes,
      CLICK_WALKS,
      ask({ ...job, rate: out.rate, seconds: CLICK_SECONDS }),
    );
    log(
      `clicking through ${out.clicks.pages} pages (${CLICK_PAUSE_MS} ms apart) at ${out.rate} req/s: GET /api/auth/user ` +
        `p50 ${out.clicks.userP50} / p99 ${out.clicks.userP99} ms; the pages p50 ${out.clicks.p50.toFixed(1)} / max ${out.clicks.max.toFixed(1)} ms`,
    );
    const pass = async (rows, extra, tag) => {
      for (const [key, label, path] of routes) {
        out.labels[key] = label;
        rows[key] = await adminLoop(
          server.base,
          admin,
          path,
          plan,
          ask({ ...job, seconds: plan.routeSeconds, ...extra }),
        );
        const r = rows[key];
        log(
          `${tag} ${key}: p50 ${r.p50.toFixed(1)} / p95 ${r.p95.toFixed(1)} / max ${r.max.toFixed(1)} ms (${r.samples}, ${r.status}); ` +
            `GET /api/auth/user p99 ${r.userP99} ms (${Math.round(r.userRps)} req/s)`,
        );
      }
      const all = Object.values(rows);
      return {
        slowestP95: Math.max(...all.map((r) => r.p95)),
        overBudget: Object.entries(rows)
          .filter(([, r]) => r.p95 >= CONSOLE_BUDGET.listP95Ms || r.status !== 200)
          .map(([k]) => k),
        userP99Max: Math.max(...all.map((r) => r.userP99)),
      };
    };
    out.summary = await pass(out.rows, { rate: out.rate }, `at ${out.rate} req/s`);
    out.rowsSaturated = {};
    out.summarySaturated = await pass(out.rowsSaturated, {}, 'saturated');
  } finally {
    for (const stop of stops.reverse()) await stop().catch(() => {});
    if (keep) log(`kept the project ${project.dir} (--reuse-project)`);
    else project.remove();
  }
  return out;
}
