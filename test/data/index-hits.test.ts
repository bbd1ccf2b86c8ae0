import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { getTableColumns, getTableName, type Table } from 'drizzle-orm';
import type { CoreTables } from '@svc/core/internal';
import {
  describeEachDatabase,
  startTestApp,
  type LoggedInClient,
  type TestApp,
  type TestClient,
  type TestDatabase,
} from '@svc/core/testing';
import { eventually, logCapture, startMailApp, stopMailApp, type TestSmtp } from '../../testing/smtp.js';
import {
  PASSKEY_TEST_ORIGIN,
  PASSKEY_TEST_SETTINGS,
  SoftAuthenticator,
  passkeyLogin,
  registerPasskey,
} from '../../testing/webauthn.js';

/**
 * Every lookup on a request path is an index hit (docs/performance.md "Large tables"), on both databases. The
 * SQL is not written here: the requests go through the real routes with `dbdebug` on, which logs every
 * statement with its parameters and the request id (the read worker of a file database included); each
 * statement is then explained on the same database, seeded with thousands of rows in every table that grows
 * with the users, and its plan must not read one of those tables whole.
 *
 * SQLite is explained as the app leaves it: without `ANALYZE` (the app never runs it, so there is no
 * `sqlite_stat1` and the planner goes by the indexes alone). PostgreSQL is analysed after seeding (autovacuum
 * does so in production) and planned with its default costs: `enable_seqscan` stays on, so a seq scan in a
 * plan is what the server would do at this size, not merely what it could avoid. Tables that do not grow with
 * the users (permission, group, group_permission) are not seeded, and a seq scan of them is the right plan.
 */

/** Users seeded; every per-user table gets one to five rows per user. */
const SEED_USERS = 2_000;
/** Rows per INSERT: under SQLite's 32,766 and PostgreSQL's 65,535 bound parameters. */
const BATCH_ROWS = 1_000;

const hex = () => createHash('sha256').update(randomBytes(16)).digest('hex');

interface Statement {
  sql: string;
  params: unknown[];
}

/** What this test uses of the native clients (better-sqlite3, postgres), not dependencies of the root. */
interface SqliteNative {
  prepare(sql: string): { all(...params: unknown[]): unknown[]; run(...params: unknown[]): unknown };
}
interface PgNative {
  unsafe(sql: string, params?: unknown[]): Promise<unknown[]>;
}

interface PgPlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  Plans?: PgPlanNode[];
}

/** A table of the running app by module and property name. */
function tableOf(app: TestApp, module: string, key: string): Table {
  const table = (app.app.runtime.tables as Record<string, Record<string, unknown> | undefined>)[module]?.[
    key
  ];
  if (!table) throw new Error(`the app has no table ${module}.${key}`);
  return table as Table;
}

/**
 * Inserts `count` rows made by `row(i)` (every row with the same properties) in batches of multi-row INSERTs,
 * the values encoded by the table's columns as drizzle encodes them; run on the native client, so that
 * `dbdebug` does not log thousands of parameters. Not drizzle's builder: it spends longer building a batch
 * of a thousand rows than the database spends storing it.
 */
async function seed(app: TestApp, table: Table, count: number, row: (i: number) => Record<string, unknown>) {
  const db = app.app.runtime.authDb;
  const columns = getTableColumns(table);
  for (let start = 0; start < count; start += BATCH_ROWS) {
    const rows = Array.from({ length: Math.min(BATCH_ROWS, count - start) }, (_, k) => row(start + k));
    const keys = Object.keys(rows[0]!);
    const params: unknown[] = [];
    const tuples = rows.map((values) => {
      const marks = keys.map((key) => {
        const value = values[key];
        params.push(value === null || value === undefined ? null : columns[key]!.mapToDriverValue(value));
        return db.dialect === 'pg' ? `$${params.length}` : '?';
      });
      return `(${marks.join(', ')})`;
    });
    const names = keys.map((key) => `"${columns[key]!.name}"`).join(', ');
    const sql = `INSERT INTO "${getTableName(table)}" (${names}) VALUES ${tuples.join(', ')}`;
    if (db.dialect === 'sqlite') (db.native as SqliteNative).prepare(sql).run(...params);
    else await (db.native as PgNative).unsafe(sql, params);
  }
}

/** The plan of `statement` as lines, and the tables it reads whole. */
async function planOf(app: TestApp, statement: Statement): Promise<{ lines: string[]; scanned: string[] }> {
  const db = app.app.runtime.authDb;
  if (db.dialect === 'sqlite') {
    const rows = (db.native as SqliteNative)
      .prepare(`EXPLAIN QUERY PLAN ${statement.sql}`)
      .all(...statement.params) as { detail: string }[];
    const lines = rows.map((r) => r.detail);
    // `SCAN <table>`, with or without an index (walking a whole index is a scan too); `SEARCH` is a lookup.
    return { lines, scanned: lines.flatMap((line) => /^SCAN (?:TABLE )?(\S+)/.exec(line)?.[1] ?? []) };
  }
  const [row] = await (db.native as PgNative).unsafe(
    `EXPLAIN (FORMAT JSON) ${statement.sql}`,
    statement.params,
  );
  const lines: string[] = [];
  const scanned: string[] = [];
  const walk = (node: PgPlanNode, depth: number) => {
    const on = node['Relation Name'] ? ` on ${node['Relation Name']}` : '';
    const using = node['Index Name'] ? ` using ${node['Index Name']}` : '';
    lines.push(`${'  '.repeat(depth)}${node['Node Type']}${on}${using}`);
    if (node['Node Type'] === 'Seq Scan' && node['Relation Name']) scanned.push(node['Relation Name']);
    for (const child of node.Plans ?? []) walk(child, depth + 1);
  };
  walk((Object.values(row as object)[0] as { Plan: PgPlanNode }[])[0]!.Plan, 0);
  return { lines, scanned };
}

describeEachDatabase('Index hits of request-path lookups', (database: TestDatabase) => {
  let smtp: TestSmtp;
  let app: TestApp;
  const { stream, lines } = logCapture();
  /** The seeded tables (SQL names): a plan that reads one of them whole fails. */
  const seeded = new Set<string>();
  let alice: LoggedInClient;
  const device = new SoftAuthenticator(PASSKEY_TEST_ORIGIN);

  beforeAll(async () => {
    ({ app, smtp } = await startMailApp(
      database,
      {
        ...PASSKEY_TEST_SETTINGS,
        personal_tokens_enabled: true,
        activity_log_enabled: true,
        public_url: 'https://app.example.com',
        account_mail_cooldown_seconds: 0,
        log_format: 'json',
        log_level: 'DEBUG',
        dbdebug: true,
      },
      { logStream: stream },
    ));
    const orm = app.app.runtime.authDb.orm;
    const core = app.app.runtime.tables.core as unknown as CoreTables;
    const [group] = await orm.insert(core.group).values({ name: 'seeded' }).returning();
    const [permission] = await orm.insert(core.permission).values({ codename: 'seeded.read' }).returning();
    const users = Array.from({ length: SEED_USERS }, () => randomUUID());
    const user = (i: number) => users[i % SEED_USERS];
    const now = Date.now();
    const at = (i: number) => new Date(now - i * 60_000);
    const later = new Date(now + 3_600_000);
    const tables: [Table, number, (i: number) => Record<string, unknown>][] = [
      [
        core.user,
        SEED_USERS,
        (i) => ({
          id: user(i),
          username: `seeded_${i}`,
          email: `seeded_${i}@example.com`,
          passwordHash: 'x',
          createdAt: at(i),
        }),
      ],
      [core.userGroup, SEED_USERS, (i) => ({ userId: user(i), groupId: group!.id })],
      [core.userPermission, SEED_USERS, (i) => ({ userId: user(i), permissionId: permission!.id })],
      [core.userSettings, SEED_USERS, (i) => ({ userId: user(i), data: { locale: 'en' }, updatedAt: at(i) })],
      [
        core.refreshToken,
        SEED_USERS * 2,
        (i) => ({
          jti: randomUUID(),
          family: randomUUID(),
          userId: user(i),
          expiresAt: later,
          createdAt: at(i),
        }),
      ],
      [
        tableOf(app, 'auth', 'session'),
        SEED_USERS * 2,
        (i) => ({ id: randomUUID(), userId: user(i), createdAt: at(i), lastUsedAt: at(i) }),
      ],
      [
        tableOf(app, 'mfa', 'mfaConfig'),
        SEED_USERS,
        (i) => ({ userId: user(i), method: 'totp', createdAt: at(i) }),
      ],
      [
        tableOf(app, 'accounts', 'accountToken'),
        SEED_USERS * 2,
        (i) => ({
          digest: hex(),
          purpose: i % 2 ? 'password_reset' : 'email_verify',
          userId: user(i),
          email: `seeded_${i % SEED_USERS}@example.com`,
          expiresAt: later,
          createdAt: at(i),
        }),
      ],
      [
        tableOf(app, 'personal-tokens', 'personalToken'),
        SEED_USERS * 2,
        (i) => ({
          id: randomUUID(),
          userId: user(i),
          digest: hex(),
          name: `token ${i}`,
          prefix: 'svc_pat_abcd',
          createdAt: at(i),
        }),
      ],
      [
        tableOf(app, 'passkeys', 'passkey'),
        SEED_USERS * 2,
        (i) => ({
          id: randomUUID(),
          userId: user(i),
          credentialId: randomBytes(16).toString('base64url'),
          publicKey: 'x',
          name: `key ${i}`,
          createdAt: at(i),
        }),
      ],
      [
        tableOf(app, 'audit', 'activityLog'),
        SEED_USERS * 5,
        (i) => ({
          timestamp: at(i),
          userId: user(i),
          username: `seeded_${i % SEED_USERS}`,
          method: 'GET',
          path: '/api/notes/',
          statusCode: 200,
          durationMs: 3,
        }),
      ],
    ];
    for (const [table, count, row] of tables) {
      await seed(app, table, count, row);
      seeded.add(getTableName(table));
    }
    if (database.dialect === 'pg') await app.app.runtime.authDb.exec('ANALYZE');
    const created = await app.createUser({ username: 'alice', email: 'alice@example.com' });
    alice = await app.loginAs(created);
  }, 60_000);
  afterAll(() => stopMailApp({ app, smtp }));

  const parsed: { message: string; request_id?: string; params?: unknown[] }[] = [];
  /** The log records so far (parsed once each). */
  const records = () => {
    for (const line of lines.slice(parsed.length)) parsed.push(JSON.parse(line));
    return parsed;
  };

  /** The statements the app ran for the request with this id, INSERTs aside (they look nothing up). */
  async function statementsOf(request: string): Promise<Statement[]> {
    // Log lines are written in batches: the request's access line comes after its statements. Some statements
    // end after the answer (the lastUsedAt write of a token), hence the pause.
    const accessLine = /^[A-Z]+ \S+ \d{3} /;
    await eventually(() => records().some((r) => r.request_id === request && accessLine.test(r.message)));
    await new Promise((resolve) => setTimeout(resolve, 100));
    return records()
      .filter((record) => record.request_id === request && /^SQL (?!\s*insert\b)/i.test(record.message))
      .map((record) => ({ sql: record.message.slice(4), params: record.params ?? [] }));
  }

  /** Each statement of each request that reads a seeded table whole, with its plan; none ran: a failure too. */
  async function scansOf(...requests: string[]): Promise<string[]> {
    const scans: string[] = [];
    const logged = await Promise.all(requests.map(statementsOf));
    for (const [i, request] of requests.entries()) {
      const statements = logged[i]!;
      if (statements.length === 0) scans.push(`${request}: no statement logged`);
      for (const statement of statements) {
        const { lines: plan, scanned } = await planOf(app, statement);
        if (scanned.some((table) => seeded.has(table))) {
          scans.push(`${request}: ${statement.sql}\n  ${plan.join('\n  ')}`);
        }
      }
    }
    return scans;
  }

  /** A client whose requests carry the request id `id` (the passkey helpers take one with `post`). */
  function withId(client: TestClient, id: string) {
    const headers = { 'X-Request-ID': id };
    return {
      get: (path: string) => client.get(path, { headers }),
      post: (path: string, body?: unknown) => client.post(path, body, { headers }),
      patch: (path: string, body?: unknown) => client.patch(path, body, { headers }),
      delete: (path: string) => client.delete(path, { headers }),
    };
  }

  it('authenticates a login token (user, permissions and session in one query) by index', async () => {
    expect((await withId(alice, 'ih-guard').get('/api/auth/user')).status).toBe(200);
    expect(await scansOf('ih-guard')).toEqual([]);
  });

  it('lists, refreshes and ends sessions by index', async () => {
    const other = await app.loginAs(alice.user);
    const listed = await withId(alice, 'ih-sessions').get('/api/auth/sessions');
    expect(listed.status).toBe(200);
    const refreshed = await withId(app, 'ih-refresh').post('/api/auth/refresh-token', {
      refresh_token: other.refreshToken,
    });
    expect(refreshed.status).toBe(200);
    const mine = (listed.body.data as { id: string; current: boolean }[]).find((s) => !s.current)!;
    expect((await withId(alice, 'ih-session-end').delete(`/api/auth/sessions/${mine.id}`)).status).toBe(204);
    expect(await scansOf('ih-sessions', 'ih-refresh', 'ih-session-end')).toEqual([]);
  });

  it('ends sessions by logout, revoke-others and the superuser routes by index', async () => {
    const carol = await app.createUser({ username: 'carol' });
    const first = await app.loginAs(carol);
    const second = await app.loginAs(carol);
    const out = await withId(first, 'ih-logout').post('/api/auth/logout', {
      refresh_token: first.refreshToken,
    });
    expect(out.status).toBe(204);
    expect((await withId(second, 'ih-revoke-others').post('/api/auth/sessions/revoke-others')).status).toBe(
      204,
    );
    const root = await app.loginAs(await app.createUser({ username: 'root', isSuperuser: true }));
    const listed = await withId(root, 'ih-admin-sessions').get(`/api/admin/user/${carol.id}/sessions`);
    expect(listed.status).toBe(200);
    const [session] = listed.body.data as { id: string }[];
    const ended = await withId(root, 'ih-admin-end').delete(
      `/api/admin/user/${carol.id}/sessions/${session!.id}`,
    );
    expect(ended.status).toBe(204);
    expect(await scansOf('ih-logout', 'ih-revoke-others', 'ih-admin-sessions', 'ih-admin-end')).toEqual([]);
  });

  it('creates, lists and authenticates personal access tokens by index', async () => {
    const created = await withId(alice, 'ih-pat-create').post('/api/auth/tokens', { name: 'ci' });
    expect(created.status).toBe(201);
    expect((await withId(alice, 'ih-pat-list').get('/api/auth/tokens')).status).toBe(200);
    const token = created.body.data.token as string;
    expect((await withId(app.as(token), 'ih-pat-use').get('/api/auth/user')).status).toBe(200);
    const unknown = app.as(`svc_pat_${'F'.repeat(43)}`);
    expect((await withId(unknown, 'ih-pat-unknown').get('/api/auth/user')).status).toBe(401);
    const id = created.body.data.id as string;
    expect((await withId(alice, 'ih-pat-delete').delete(`/api/auth/tokens/${id}`)).status).toBe(204);
    expect(
      await scansOf('ih-pat-create', 'ih-pat-list', 'ih-pat-use', 'ih-pat-unknown', 'ih-pat-delete'),
    ).toEqual([]);
  });

  it('issues, supersedes and redeems one-time account tokens by index', async () => {
    const bob = await app.createUser({ username: 'bob', email: 'bob@example.com' });
    const mails = () => smtp.messages.filter((m) => m.envelopeTo.includes('bob@example.com'));
    const forgot = async (id: string) => {
      const before = mails().length;
      const res = await withId(app, id).post('/api/auth/password/forgot', { email: 'BOB@example.com' });
      expect(res.status).toBe(202);
      await eventually(() => mails().length > before);
      return decodeURIComponent(/reset-password\?token=(\S+)/.exec(mails().at(-1)!.text ?? '')![1]!);
    };
    await forgot('ih-forgot-first');
    // The second link supersedes the first: the statement deleting the user's earlier and spent tokens.
    const token = await forgot('ih-forgot-second');
    const reset = await withId(app, 'ih-reset').post('/api/auth/password/reset', {
      token,
      newPassword: 'a-brand-new-passphrase',
    });
    expect(reset.status).toBe(204);
    expect(bob.id).toBeTruthy();
    expect(await scansOf('ih-forgot-first', 'ih-forgot-second', 'ih-reset')).toEqual([]);
  });

  it('registers, lists and logs in with passkeys by index', async () => {
    expect((await registerPasskey(withId(alice, 'ih-passkey-register'), device)).status).toBe(201);
    expect((await withId(alice, 'ih-passkey-list').get('/api/auth/passkeys')).status).toBe(200);
    // The options by username (the user's passkeys), then the assertion: the passkey by its credential id.
    const login = await passkeyLogin(withId(app, 'ih-passkey-login'), device, { username: 'alice' });
    expect(login.status).toBe(200);
    const [passkey] = (await alice.get('/api/auth/passkeys')).body.data as { id: string }[];
    const path = `/api/auth/passkeys/${passkey!.id}`;
    expect((await withId(alice, 'ih-passkey-rename').patch(path, { name: 'Phone' })).status).toBe(200);
    expect((await withId(alice, 'ih-passkey-remove').delete(path)).status).toBe(204);
    expect(
      await scansOf(
        'ih-passkey-register',
        'ih-passkey-list',
        'ih-passkey-login',
        'ih-passkey-rename',
        'ih-passkey-remove',
      ),
    ).toEqual([]);
  });

  it('exports the account, with the newest 1,000 activity entries, by index', async () => {
    expect((await withId(alice, 'ih-export').get('/api/auth/user/export')).status).toBe(200);
    const statements = await statementsOf('ih-export');
    expect(statements.some((s) => /activity_log/.test(s.sql) && /limit/i.test(s.sql))).toBe(true);
    expect(await scansOf('ih-export')).toEqual([]);
  });

  // docs/activity-log.md "Large logs": a deep `page` walks its OFFSET in the (timestamp, id) order of an index
  // and, on PostgreSQL, in index entries only (a deferred join reads the page's rows by primary key).
  it('walks a deep page of the activity log in its index, on PostgreSQL without reading the table', async () => {
    const activity = getTableName(tableOf(app, 'audit', 'activityLog'));
    // The visibility map autovacuum keeps in production, so that the planner may read from the index alone.
    if (database.dialect === 'pg') await app.app.runtime.authDb.exec(`VACUUM ANALYZE ${activity}`);
    const auditor = await app.loginAs(await app.createUser({ username: 'auditor', isSuperuser: true }));
    const res = await withId(auditor, 'ih-audit-deep').get('/api/admin/audit/logs?page=20&pageSize=50');
    expect(res.status).toBe(200);
    expect(res.body.data.items).toHaveLength(50);
    const [page] = (await statementsOf('ih-audit-deep')).filter(
      (s) => s.sql.includes(activity) && /offset/i.test(s.sql),
    );
    const plan = (await planOf(app, page!)).lines.join('\n');
    if (database.dialect === 'pg') {
      expect(plan).toMatch(`Index Only Scan on ${activity} using ${activity}_timestamp_id_path_idx`);
      expect(plan).toMatch(`Index Scan on ${activity} using ${activity}_pkey`);
      expect(plan).not.toMatch(`Seq Scan on ${activity}`);
    } else {
      expect(plan).toMatch(`SCAN ${activity} USING INDEX ${activity}_timestamp_idx`);
      expect(plan).not.toMatch(/TEMP B-TREE/);
    }
  });

  // docs/activity-log.md "Large logs": on the file database `search` finds the matching usernames and paths in
  // the text index (the terms), then their entries by the (username, timestamp) and (path, timestamp) indexes.
  // (PostgreSQL's pg_trgm indexes are the planner's choice: at this size it reads the table; the bench's
  // million entries show them used.)
  it('searches the activity log through its text index', async () => {
    const activity = getTableName(tableOf(app, 'audit', 'activityLog'));
    const auditor = await app.loginAs(await app.createUser({ username: 'searcher', isSuperuser: true }));
    const res = await withId(auditor, 'ih-audit-search').get(
      '/api/admin/audit/logs?search=seeded_123&pageSize=50',
    );
    expect(res.status).toBe(200);
    // seeded_123 and seeded_1230 … seeded_1239, five entries each.
    expect(res.body.data.total).toBe(55);
    if (database.dialect !== 'sqlite') return;
    const [page] = (await statementsOf('ih-audit-search')).filter(
      (s) => s.sql.includes(activity) && /limit/i.test(s.sql),
    );
    const plan = await planOf(app, page!);
    expect(plan.lines.join('\n')).toMatch(
      `SEARCH ${activity} USING INDEX ${activity}_username_timestamp_idx`,
    );
    // The FTS5 table is a virtual table: its MATCH is a lookup of its own index, whatever the plan calls it.
    expect(plan.scanned).not.toContain(activity);
  });

  // docs/performance.md "The console's lists at a million users": `pathContains` finds the matching paths first
  // (SQLite: the terms' FTS5 index; PostgreSQL: the paths table's trigram index), then reads their entries by
  // the (path, timestamp) index, for the page and for the bounded count alike: no test of every entry.
  it('filters the activity log by pathContains through the (path, timestamp) index', async () => {
    const activity = tableOf(app, 'audit', 'activityLog');
    const name = getTableName(activity);
    // A hundred more paths, three entries each, among the seeded ten thousand entries of /api/notes/.
    await seed(app, activity, 300, (i) => ({
      timestamp: new Date(Date.now() - i * 1000),
      method: i % 2 ? 'DELETE' : 'POST',
      path: `/api/orders/${i % 100}/ship`,
      statusCode: 200,
      durationMs: 3,
    }));
    if (database.dialect === 'pg') await app.app.runtime.authDb.exec(`VACUUM ANALYZE ${name}`);
    const auditor = await app.loginAs(await app.createUser({ username: 'path-auditor', isSuperuser: true }));
    const res = await withId(auditor, 'ih-audit-path').get(
      '/api/admin/audit/logs?pathContains=%2Forders%2F4&pageSize=20',
    );
    expect(res.status).toBe(200);
    // /api/orders/4/ship and /api/orders/40/ship … /api/orders/49/ship: eleven paths, three entries each.
    expect(res.body.data.total).toBe(33);
    expect(res.body.data.items).toHaveLength(20);
    const stamps = (res.body.data.items as { timestamp: string }[]).map((item) => item.timestamp);
    expect(stamps).toEqual([...stamps].sort().reverse());
    // Another order (the paths as a filter) and the keyset continuation find the same entries.
    const sorted = await auditor.get(
      '/api/admin/audit/logs?pathContains=%2Forders%2F4&orderBy=-method&pageSize=50',
    );
    expect(sorted.body.data.total).toBe(33);
    expect(new Set((sorted.body.data.items as { path: string }[]).map((item) => item.path)).size).toBe(11);
    const last = (res.body.data.items as { id: number }[]).at(-1)!.id;
    const next = await auditor.get(
      `/api/admin/audit/logs?pathContains=%2Forders%2F4&pageSize=20&after=${last}`,
    );
    expect(next.body.data.items).toHaveLength(13);
    // The substring is matched as written (case-sensitive), as before.
    const upper = await auditor.get('/api/admin/audit/logs?pathContains=%2FOrders%2F4');
    expect(upper.body.data.total).toBe(0);
    // With another filter the paths are one more condition (audit/store.ts): the same entries. The odd i are
    // the DELETEs: /api/orders/41, 43, 45, 47 and 49, three entries each.
    const deletes = await auditor.get(
      '/api/admin/audit/logs?pathContains=%2Forders%2F4&method=DELETE&statusCode=200&pageSize=10',
    );
    expect(deletes.body.data.total).toBe(15);
    expect(deletes.body.data.items).toHaveLength(10);
    expect(
      new Set(
        (deletes.body.data.items as { method: string; path: string }[]).map((i) => `${i.method} ${i.path}`),
      ),
    ).toEqual(new Set([41, 43, 45, 47, 49].map((k) => `DELETE /api/orders/${k}/ship`)));
    const statements = (await statementsOf('ih-audit-path')).filter((s) => s.sql.includes(`"${name}"`));
    expect(statements.length).toBeGreaterThan(0);
    for (const statement of statements) {
      const { lines: plan, scanned } = await planOf(app, statement);
      expect(scanned).not.toContain(name);
      if (database.dialect === 'sqlite') {
        expect(plan.join('\n')).toMatch(
          new RegExp(`SEARCH ${name} USING (COVERING )?INDEX ${name}_path_timestamp_idx`),
        );
      } else if (!/_paths"? where/.test(statement.sql)) {
        expect(plan.join('\n')).toMatch(`using ${name}_path_timestamp_idx`);
      }
    }
  });

  // docs/performance.md "The console's lists at a million users": every sort of `GET /admin/user` reads its first
  // page from an index (kernel/db/tables.ts), in both directions. SQLite's `NULLS LAST` ascending on a column
  // that may be NULL (email, last login) is the one it sorts: its indexes hold NULLs first.
  it('sorts the users list by every sortable column from an index', async () => {
    const user = getTableName((app.app.runtime.tables.core as unknown as CoreTables).user);
    const root = await app.loginAs(await app.createUser({ username: 'sorter', isSuperuser: true }));
    const columns = ['username', 'email', 'firstName', 'lastName', 'isActive', 'isStaff', 'isSuperuser'];
    const sorts = [...columns, 'lastLoginAt', 'createdAt'].flatMap((c) => [c, `-${c}`]);
    const sorted: string[] = [];
    for (const [i, orderBy] of sorts.entries()) {
      const res = await withId(root, `ih-user-sort-${i}`).get(
        `/api/admin/user/?orderBy=${orderBy}&pageSize=25`,
      );
      expect(res.status).toBe(200);
      const [page] = (await statementsOf(`ih-user-sort-${i}`)).filter((s) =>
        new RegExp(`from "${user}" order by`, 'i').test(s.sql),
      );
      const plan = (await planOf(app, page!)).lines.join('\n');
      const sqliteSorts = database.dialect === 'sqlite' && ['email', 'lastLoginAt'].includes(orderBy);
      // A sort of the ties of one value (the id after created_at: SQLite's "LAST TERM", PostgreSQL's
      // Incremental Sort) is not a sort of the table.
      if (/TEMP B-TREE FOR ORDER BY|^\s*Sort\b|Seq Scan/m.test(plan) && !sqliteSorts)
        sorted.push(`${orderBy}:\n${plan}`);
    }
    expect(sorted).toEqual([]);
  });

  // Last: it drops an index. Without it the same captured statement scans, so the checks above can fail.
  it('sees the scan of a lookup whose index is gone', async () => {
    const passkeyTable = getTableName(tableOf(app, 'passkeys', 'passkey'));
    await app.app.runtime.authDb.exec(`DROP INDEX ${passkeyTable}_user_idx`);
    if (database.dialect === 'pg') await app.app.runtime.authDb.exec(`ANALYZE ${passkeyTable}`);
    const scans = await scansOf('ih-passkey-list');
    expect(scans).toEqual([expect.stringContaining(`from "${passkeyTable}" where`)]);
  });
});

/**
 * The delivery worker's claim (SPEC-3 §3) reads the due index, which holds the pending deliveries only
 * (webhooks/tables.ts), not the deliveries table: after 30 days of deliveries the table holds every delivery
 * made, and a claim runs every half second on every host.
 */
describeEachDatabase('Index hit of the webhook delivery claim', (database: TestDatabase) => {
  let app: TestApp;
  const { stream, lines } = logCapture();
  const DELIVERIES = 4_000;
  const endpointId = randomUUID();

  beforeAll(async () => {
    app = await startTestApp({
      database,
      settings: { webhooks_enabled: true, log_format: 'json', log_level: 'DEBUG', dbdebug: true },
      logStream: stream,
    });
    const endpoint = tableOf(app, 'webhooks', 'webhookEndpoint');
    const event = tableOf(app, 'webhooks', 'webhookEvent');
    const delivery = tableOf(app, 'webhooks', 'webhookDelivery');
    const now = Date.now();
    await seed(app, endpoint, 1, () => ({
      id: endpointId,
      url: 'https://receiver.example.com/hook',
      events: '["webhook.test"]',
      secret: 'whsec_seeded',
      createdAt: new Date(now),
    }));
    const events = Array.from({ length: DELIVERIES }, () => randomUUID());
    await seed(app, event, DELIVERIES, (i) => ({
      id: events[i],
      type: 'webhook.test',
      data: '{}',
      createdAt: new Date(now - i * 1000),
    }));
    // Delivered ones, one in twenty failed, and a few pending that are not due yet (the worker claims none).
    await seed(app, delivery, DELIVERIES, (i) => ({
      eventId: events[i],
      endpointId,
      status: i % 100 === 0 ? 'pending' : i % 20 === 5 ? 'failed' : 'succeeded',
      attempts: 1,
      nextAttemptAt: i % 100 === 0 ? new Date(now + 3_600_000) : null,
      createdAt: new Date(now - i * 1000),
      deliveredAt: i % 100 === 0 ? null : new Date(now - i * 1000),
    }));
    if (database.dialect === 'pg') await app.app.runtime.authDb.exec('ANALYZE');
  }, 60_000);
  afterAll(() => app.close());

  it('claims due deliveries through the due index, without reading the deliveries table', async () => {
    const delivery = getTableName(tableOf(app, 'webhooks', 'webhookDelivery'));
    const event = getTableName(tableOf(app, 'webhooks', 'webhookEvent'));
    const claims = () =>
      lines
        .map((line) => JSON.parse(line) as { message: string; params?: unknown[] })
        .filter(
          (r) =>
            r.message.startsWith('SQL ') && /leased_by"? = /i.test(r.message) && /limit/i.test(r.message),
        );
    // The worker polls every half second: the claims after seeding see the seeded rows.
    const seen = claims().length;
    await eventually(() => claims().length > seen, 5_000);
    const claim = claims().at(-1)!;
    const { lines: plan, scanned } = await planOf(app, {
      sql: claim.message.slice(4),
      params: claim.params ?? [],
    });
    // The endpoints (one row here, a handful in use) may be read whole; the deliveries and events may not.
    const grown = scanned.filter((table) => table === delivery || table === event);
    expect({ grown, plan }).toEqual({
      grown: [],
      plan: expect.arrayContaining([expect.stringContaining(`${delivery}_due_idx`)]),
    });
  });

  // docs/performance.md "An endpoint's failed deliveries": the console's failed view of an endpoint, its page and
  // its bounded count, reads the failed index (the failures only), not every delivery of the endpoint.
  it("lists an endpoint's failed deliveries through the failed index, page and count", async () => {
    const delivery = getTableName(tableOf(app, 'webhooks', 'webhookDelivery'));
    const admin = await app.loginAs(
      await app.createUser({ username: 'deliveries-admin', isSuperuser: true }),
    );
    const res = await admin.get(`/api/admin/webhooks/${endpointId}/deliveries?status=failed&pageSize=25`, {
      headers: { 'X-Request-ID': 'ih-failed-deliveries' },
    });
    expect(res.status).toBe(200);
    expect(res.body.data.total).toBe(DELIVERIES / 20);
    expect(res.body.data.items.map((d: { status: string }) => d.status)).toEqual(Array(25).fill('failed'));
    const records = () =>
      lines.map((line) => JSON.parse(line) as { message: string; params?: unknown[]; request_id?: string });
    await eventually(() =>
      records().some((r) => r.request_id === 'ih-failed-deliveries' && /^GET /.test(r.message)),
    );
    const reads = records().filter(
      (r) =>
        r.request_id === 'ih-failed-deliveries' &&
        r.message.startsWith('SQL ') &&
        r.message.includes(delivery),
    );
    expect(reads).toHaveLength(2);
    for (const read of reads) {
      const { lines: plan, scanned } = await planOf(app, {
        sql: read.message.slice(4),
        params: read.params ?? [],
      });
      expect({ scanned, plan }).toEqual({
        scanned: expect.not.arrayContaining([delivery]),
        plan: expect.arrayContaining([expect.stringContaining(`${delivery}_failed_idx`)]),
      });
    }
  });
});
