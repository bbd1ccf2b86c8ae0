// `pnpm bench --data`: cost that grows with the data. Seeds 1,000,000 activity log entries and 100,000 users
// with the database's own bulk statements (one INSERT … SELECT over a recursive CTE on SQLite, over
// generate_series on PostgreSQL), then measures the admin list routes one request at a time and the stall
// figure: GET /api/auth/user under autocannon, alone and while an administrator runs the list routes in a loop.
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { ADMIN, ROOT, call, createProject, login, projectDatabaseUrl, startServe } from './project.mjs';
import { median, percentile } from './stats.mjs';

const requireCore = createRequire(join(ROOT, 'packages', 'core', 'package.json'));

export const DATA_SIZES = { activity: 1_000_000, users: 100_000, organizations: 10_000 };

/** SPEC-3 §2: the organization every seeded user is a member of (100,000 members). */
const BIG_ORG = '00000000-0000-4000-9000-000000000000';

/** The routes measured one request at a time (issue table order); `after` is filled in at run time. */
export const DATA_ROUTES = [
  ['logs', '/api/admin/audit/logs'],
  ['logs-search', '/api/admin/audit/logs?search=user4242'],
  ['logs-deep', '/api/admin/audit/logs?page=20000&pageSize=50'],
  ['logs-after', null],
  ['logs-username', '/api/admin/audit/logs?orderBy=username'],
  ['activity', '/api/admin/audit/activity?limit=500'],
  ['users-search', '/api/admin/user/?search=user9999'],
  ['users', '/api/admin/user/'],
  // SPEC-3 §2 organizations: first pages, keyed by the (organization_id, joined_at, user_id) and
  // (created_at, id) indexes.
  ['org-members', `/api/organizations/${BIG_ORG}/members`],
  ['orgs-admin', '/api/admin/organizations'],
];

export const DATA_LABELS = {
  logs: 'GET /admin/audit/logs (default filters)',
  'logs-search': 'GET /admin/audit/logs?search=user4242',
  'logs-deep': 'GET /admin/audit/logs?page=20000&pageSize=50',
  'logs-after': 'GET /admin/audit/logs?after=<id>&pageSize=50 (after page 19,000: keyset)',
  'logs-username': 'GET /admin/audit/logs?orderBy=username',
  activity: 'GET /admin/audit/activity?limit=500',
  'users-search': 'GET /admin/user?search=user9999',
  users: 'GET /admin/user (default order)',
  'org-members': 'GET /organizations/{org_id}/members (100,000 members)',
  'orgs-admin': 'GET /admin/organizations (10,000 organizations, with memberCount)',
};

/**
 * Column values of entry `i` (1-based) of `activity` entries, the same on both dialects (SQL expressions over
 * `i`; bench/lib/data-console.mjs seeds ten million with it).
 */
export function activitySelect(dialect, users, activity = DATA_SIZES.activity) {
  const text = dialect === 'pg' ? (e) => `(${e})::text` : (e) => `(${e})`;
  const uuid =
    dialect === 'pg'
      ? (e) => `('00000000-0000-4000-8000-' || lpad(${text(e)}, 12, '0'))::uuid`
      : (e) => `printf('00000000-0000-4000-8000-%012d', ${e})`;
  const ts =
    dialect === 'pg'
      ? `now() - (${activity} - i) * interval '2500 milliseconds'`
      : `(unixepoch('now') * 1000 - (${activity} - i) * 2500)`;
  // One entry in ten has no user (requests without a valid token); 2% are refresh-token calls recorded before
  // the default `activity_log_exclude_paths` applied, so the default filter has something to drop.
  return `SELECT ${ts},
    CASE WHEN i % 10 = 0 THEN NULL ELSE ${uuid(`i % ${users}`)} END,
    CASE WHEN i % 10 = 0 THEN NULL ELSE 'user' || ${text(`i % ${users}`)} END,
    CASE i % 4 WHEN 0 THEN 'POST' WHEN 1 THEN 'PATCH' WHEN 2 THEN 'DELETE' ELSE 'PUT' END,
    CASE WHEN i % 50 = 0 THEN '/api/auth/refresh-token'
         WHEN i % 7 = 0 THEN '/api/auth/token'
         ELSE '/api/notes/' || ${text('i % 5000')} || '/archive' END,
    CASE i % 9 WHEN 0 THEN 400 WHEN 1 THEN 401 WHEN 2 THEN 403 WHEN 3 THEN 404 WHEN 4 THEN 201 ELSE 200 END,
    i % 250,
    CASE WHEN i % 3 = 0 THEN 'archived note ' || ${text('i % 5000')} ELSE NULL END`;
}

export const ACTIVITY_COLUMNS =
  'timestamp, user_id, username, method, path, status_code, duration_ms, description';

async function seedSqlite(file, log) {
  const Database = requireCore('better-sqlite3');
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  const hash = db
    .prepare('SELECT password_hash FROM svc_user WHERE username = ?')
    .get(ADMIN.username).password_hash;
  const n = (count) => `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${count})`;
  let t = Date.now();
  db.prepare(
    `${n(DATA_SIZES.users - 1)} INSERT INTO svc_user (id, username, email, password_hash, created_at)
     SELECT printf('00000000-0000-4000-8000-%012d', i), 'user' || i, 'user' || i || '@example.com', ?,
       unixepoch('now') * 1000 - i * 1000 FROM n`,
  ).run(hash);
  // user0 too (entries reference i % users)
  db.prepare(
    `INSERT INTO svc_user (id, username, email, password_hash, created_at)
     VALUES ('00000000-0000-4000-8000-000000000000', 'user0', 'user0@example.com', ?, unixepoch('now') * 1000)`,
  ).run(hash);
  log(`seeded ${DATA_SIZES.users} users in ${Date.now() - t} ms`);
  t = Date.now();
  // SPEC-3 §2: 10,000 organizations (the first one the newest), every seeded user a member of the first.
  db.exec(
    `${n(DATA_SIZES.organizations)} INSERT INTO svc_organization (id, slug, name, created_at)
     SELECT printf('00000000-0000-4000-9000-%012d', i - 1), 'org-' || (i - 1), 'Organization ' || (i - 1),
       unixepoch('now') * 1000 - i * 1000 FROM n`,
  );
  db.exec(
    `INSERT INTO svc_organization_member (organization_id, user_id, role, joined_at)
     SELECT '${BIG_ORG}', id, CASE WHEN username = 'user0' THEN 'owner' ELSE 'member' END, created_at
     FROM svc_user WHERE username LIKE 'user%'`,
  );
  log(`seeded ${DATA_SIZES.organizations} organizations in ${Date.now() - t} ms`);
  t = Date.now();
  db.exec(
    `${n(DATA_SIZES.activity)} INSERT INTO svc_activity_log (${ACTIVITY_COLUMNS}) ${activitySelect('sqlite', DATA_SIZES.users)} FROM n`,
  );
  db.exec('ANALYZE');
  log(`seeded ${DATA_SIZES.activity} activity entries in ${Date.now() - t} ms`);
  db.close();
}

async function seedPostgres(url, log) {
  const postgres = requireCore('postgres');
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    const [{ password_hash: hash }] =
      await sql`SELECT password_hash FROM svc_user WHERE username = ${ADMIN.username}`;
    let t = Date.now();
    await sql`INSERT INTO svc_user (id, username, email, password_hash, created_at)
      SELECT ('00000000-0000-4000-8000-' || lpad(i::text, 12, '0'))::uuid, 'user' || i, 'user' || i || '@example.com',
        ${hash}, now() - i * interval '1 second' FROM generate_series(0, ${DATA_SIZES.users - 1}) AS i`;
    log(`seeded ${DATA_SIZES.users} users in ${Date.now() - t} ms`);
    t = Date.now();
    // SPEC-3 §2: 10,000 organizations (the first one the newest), every seeded user a member of the first.
    await sql`INSERT INTO svc_organization (id, slug, name, created_at)
      SELECT ('00000000-0000-4000-9000-' || lpad(i::text, 12, '0'))::uuid, 'org-' || i, 'Organization ' || i,
        now() - (i + 1) * interval '1 second' FROM generate_series(0, ${DATA_SIZES.organizations - 1}) AS i`;
    await sql`INSERT INTO svc_organization_member (organization_id, user_id, role, joined_at)
      SELECT ${BIG_ORG}::uuid, id, CASE WHEN username = 'user0' THEN 'owner' ELSE 'member' END, created_at
      FROM svc_user WHERE username LIKE 'user%'`;
    await sql`VACUUM ANALYZE svc_organization`;
    await sql`VACUUM ANALYZE svc_organization_member`;
    log(`seeded ${DATA_SIZES.organizations} organizations in ${Date.now() - t} ms`);
    t = Date.now();
    await sql.unsafe(
      `INSERT INTO svc_activity_log (${ACTIVITY_COLUMNS}) ${activitySelect('pg', DATA_SIZES.users)}
       FROM generate_series(1, ${DATA_SIZES.activity}) AS i`,
    );
    await sql`VACUUM ANALYZE svc_activity_log`;
    await sql`VACUUM ANALYZE svc_user`;
    log(`seeded ${DATA_SIZES.activity} activity entries in ${Date.now() - t} ms`);
  } finally {
    await sql.end();
  }
}

/** Waits until the server's background build of the pg_trgm indexes is done; ms waited (null: none came). */
export async function waitForTrigramIndexes(url, log, { timeoutMs = 600_000 } = {}) {
  const postgres = requireCore('postgres');
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  const started = Date.now();
  try {
    for (;;) {
      const [{ building, valid }] = await sql`
        select count(*) filter (where not i.indisvalid)::int as building, count(*) filter (where i.indisvalid)::int as valid
        from pg_index i join pg_class c on c.oid = i.indexrelid where c.relname like '%\_trgm\_idx'`;
      const active = await sql`select 1 from pg_stat_activity where query ilike 'create index concurrently%'`;
      // Two of the activity log, four of the user table (a server without them: none comes within 20 s).
      if (
        building === 0 &&
        active.length === 0 &&
        (valid >= 6 || (valid === 0 && Date.now() - started > 20_000))
      )
        break;
      if (Date.now() - started > timeoutMs)
        throw new Error(`text indexes not built within ${timeoutMs / 60_000} minutes`);
      await new Promise((r) => setTimeout(r, 500));
    }
  } finally {
    await sql.end();
  }
  const ms = Date.now() - started;
  log(`pg_trgm indexes ready after ${ms} ms`);
  return ms;
}

/** `count` sequential requests after `warmup` ones: p50 and max, ms. */
async function timeRoute(base, token, path, { count, warmup }) {
  const times = [];
  let status = 0;
  for (let i = 0; i < warmup + count; i++) {
    const t = process.hrtime.bigint();
    const res = await fetch(`${base}${path}`, { headers: { authorization: `Bearer ${token}` } });
    await res.arrayBuffer();
    status = res.status;
    if (i >= warmup) times.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  return { p50: median(times), max: Math.max(...times), samples: times.length, status };
}

/**
 * Seeds the project at `databaseUrl` (file database when undefined), starts `svc serve` and measures.
 * `ask(job)` runs one autocannon job in the load process and resolves with its figures.
 */
export async function runData(name, databaseUrl, { plan, ask }) {
  const log = (m) => console.error(`[bench --data ${name}] ${m}`);
  const project = await createProject({ databaseUrl });
  const out = { rows: {}, stall: {} };
  const stops = [];
  try {
    log(`project ${project.dir}`);
    if (databaseUrl) await seedPostgres(databaseUrl, log);
    else await seedSqlite(projectDatabaseUrl(project.dir), log);
    // The first start builds what is missing of the text indexes: on the file database before it answers (the
    // FTS5 tables filled from a million rows), on PostgreSQL in the background (waited for below).
    const server = await startServe(project.dir, { activity_log_enabled: true }, { deadlineMs: 600_000 });
    stops.push(server.stop);
    // The first start builds what is missing of the text indexes (FTS5 filled from the table, GIN indexes).
    out.firstStartMs = server.coldStartMs;
    log(`first start (text indexes built) ${Math.round(server.coldStartMs)} ms`);
    if (databaseUrl) out.textIndexMs = await waitForTrigramIndexes(databaseUrl, log);
    const admin = (await login(server.base, ADMIN)).access_token;

    // Keyset continuation deep in the log: after the last entry of page 19,000 of 50 (the default filter leaves
    // out 2% of the entries, so page 20,000 is past the end). A server without `after` ignores it and answers
    // the first page: the row is then left out.
    let afterPath = null;
    const probe = await call(server.base, 'GET', '/api/admin/audit/logs?page=19000&pageSize=50', {
      token: admin,
    });
    const last = probe.body.items?.at(-1);
    if (last) {
      const path = `/api/admin/audit/logs?after=${last.id}&pageSize=50`;
      const first = (await call(server.base, 'GET', path, { token: admin })).body.items?.[0];
      if (first && first.id < last.id) afterPath = path;
      else log('`after` not supported: keyset row left out');
    }

    for (const [key, fixed] of DATA_ROUTES) {
      const path = key === 'logs-after' ? afterPath : fixed;
      if (!path) continue;
      out.rows[key] = await timeRoute(server.base, admin, path, plan);
      log(
        `${key}: p50 ${out.rows[key].p50.toFixed(1)} ms, max ${out.rows[key].max.toFixed(1)} ms (${out.rows[key].status})`,
      );
    }

    // The stall figure: GET /api/auth/user under load, alone, then while an admin loops over the list routes.
    const job = {
      url: `${server.base}/api/auth/user`,
      method: 'GET',
      connections: plan.connections,
      seconds: plan.stallSeconds,
      tokens: [admin],
    };
    out.stall.alone = await ask(job);
    /** GET /api/auth/user under load while one administrator requests `paths` in a loop, one at a time. */
    const withAdminLoop = async (paths) => {
      let looping = true;
      const times = [];
      const loop = (async () => {
        for (let i = 0; looping; i++) {
          const t = process.hrtime.bigint();
          const res = await fetch(`${server.base}${paths[i % paths.length]}`, {
            headers: { authorization: `Bearer ${admin}` },
          });
          await res.arrayBuffer();
          times.push(Number(process.hrtime.bigint() - t) / 1e6);
        }
      })();
      const figures = await ask(job);
      looping = false;
      await loop;
      return {
        ...figures,
        adminRequests: times.length,
        adminP50: median(times),
        adminP99: percentile(times, 99),
      };
    };
    // The organization rows (SPEC-3 §2) stay out of the loop, so the stall figure compares with earlier runs.
    const paths = DATA_ROUTES.filter(([k]) => !k.startsWith('org'))
      .map(([k, p]) => (k === 'logs-after' ? afterPath : p))
      .filter(Boolean);
    out.stall.withAdmin = await withAdminLoop(paths);
    // The same without the OFFSET walk of page 20,000 (300 to 800 ms of one core each time): deep pages by
    // `after`, as docs/activity-log.md advises.
    out.stall.withAdminKeyset = await withAdminLoop(paths.filter((p) => !p.includes('page=20000')));
    const f = (r) => `p50 ${r.p50} / p99 ${r.p99} / max ${r.max} ms (${r.adminRequests} admin requests)`;
    log(
      `stall: alone p50 ${out.stall.alone.p50} / p99 ${out.stall.alone.p99} ms; with admin loop ` +
        `${f(out.stall.withAdmin)}; without the OFFSET page ${f(out.stall.withAdminKeyset)}`,
    );
  } finally {
    for (const stop of stops.reverse()) await stop().catch(() => {});
    project.remove();
  }
  return out;
}
