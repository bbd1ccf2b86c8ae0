import { Writable } from 'node:stream';
import { describeEachDatabase, startTestApp, type TestApp } from '../testing/index.js';

/** What this test uses of the native clients (better-sqlite3, postgres). */
interface SqliteNative {
  prepare(sql: string): { all(...params: unknown[]): unknown[] };
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

/**
 * The tables a refresh writes, and how each of its lookups of them is planned: `relation index` per PostgreSQL
 * plan node, SQLite's `SEARCH`/`SCAN` lines as they are.
 */
async function lookupsOf(app: TestApp, sql: string, params: unknown[]): Promise<string[]> {
  const db = app.app.runtime.authDb;
  if (db.dialect === 'sqlite') {
    const rows = (db.native as SqliteNative).prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params);
    return (rows as { detail: string }[]).map((r) => r.detail).filter((d) => /refresh_token|session/.test(d));
  }
  const [row] = await (db.native as PgNative).unsafe(`EXPLAIN (FORMAT JSON) ${sql}`, params);
  const found: string[] = [];
  const walk = (node: PgPlanNode) => {
    const relation = node['Relation Name'];
    if (relation && /refresh_token|session/.test(relation) && node['Node Type'] !== 'ModifyTable')
      found.push(`${relation} ${node['Index Name'] ?? node['Node Type']}`);
    for (const child of node.Plans ?? []) walk(child);
  };
  walk((Object.values(row as object)[0] as { Plan: PgPlanNode }[])[0]!.Plan);
  return found;
}

// SPEC-2 "Sessions": a user's sessions add up with each login, and a session leaves one refresh record per
// rotation (SPEC "Refresh token and login"). The refresh must find the record it spends and the session it
// touches, and the guard the session of an access token, by primary key, whatever else they compare: a
// lookup by the user's or the family's index reads every row of them, and the request costs more with each
// (PostgreSQL planned them so on tables without statistics).
describeEachDatabase('Session and refresh record lookups', (database) => {
  let app: TestApp;
  const lines: string[] = [];
  beforeAll(async () => {
    app = await startTestApp({
      database,
      settings: { log_format: 'json', log_level: 'DEBUG', dbdebug: true },
      logStream: new Writable({
        write(chunk, _encoding, done) {
          lines.push(...String(chunk).split('\n').filter(Boolean));
          done();
        },
      }),
    });
  });
  afterAll(() => app.close());

  /** How the statements of request `id` look sessions and refresh records up (INSERTs aside). */
  async function lookupsOfRequest(id: string): Promise<string[]> {
    // The log is written in batches: the request's access line comes after its statements.
    const records = () =>
      lines
        .map((line) => JSON.parse(line) as { message: string; request_id?: string; params?: unknown[] })
        .filter((r) => r.request_id === id);
    for (let i = 0; i < 200 && !records().some((r) => /^(GET|POST) /.test(r.message)); i += 1)
      await new Promise((resolve) => setTimeout(resolve, 20));
    const statements = records().filter((r) => /^SQL (?!\s*insert\b)/i.test(r.message));
    expect(statements.length).toBeGreaterThan(0);
    const lookups: string[] = [];
    for (const s of statements) lookups.push(...(await lookupsOf(app, s.message.slice(4), s.params ?? [])));
    expect(lookups.length).toBeGreaterThan(0);
    return lookups;
  }

  const notByPrimaryKey = (lookups: string[]) =>
    lookups.filter(
      (l) =>
        !(
          database.dialect === 'pg'
            ? /^\S+ \S+_pkey$/
            : /^SEARCH \S+ USING INDEX sqlite_autoindex_\S+_1 \((jti|id)=\?\)$/
        ).test(l),
    );

  it('spends the record and touches the session by primary key after many rotations of one session', async () => {
    const user = await app.createUser({ username: 'rosa' });
    for (let i = 0; i < 5; i += 1) await app.loginAs(user);
    let token = (await app.loginAs(user)).refreshToken;
    for (let i = 0; i < 40; i += 1) {
      const res = await app.post(
        '/api/auth/refresh-token',
        { refresh_token: token },
        { headers: { 'X-Request-ID': `rotation-${i}` } },
      );
      expect(res.status).toBe(200);
      token = res.body.refresh_token;
    }
    expect(notByPrimaryKey(await lookupsOfRequest('rotation-39'))).toEqual([]);
  });

  // A login deletes the user's expired refresh records and purges its stale sessions (SPEC-2 "Sessions"): each
  // as one range of a (user, time) index, not a filter over every record and session the user has.
  it("deletes a user's expired records and stale sessions at login by a range of (user, time)", async () => {
    const user = await app.createUser({ username: 'lena' });
    for (let i = 0; i < 40; i += 1) await app.loginAs(user);
    const res = await app.post('/api/auth/token', undefined, {
      form: { username: 'lena', password: user.password },
      headers: { 'X-Request-ID': 'housekeeping' },
    });
    expect(res.status).toBe(200);
    const lookups = await lookupsOfRequest('housekeeping');
    if (database.dialect === 'pg') {
      expect(lookups).toEqual(
        expect.arrayContaining([
          expect.stringMatching(/refresh_token \S+_user_expires_idx$/),
          expect.stringMatching(/session \S+_user_last_used_idx$/),
        ]),
      );
      expect(lookups.filter((l) => /_user_idx$|Seq Scan/.test(l))).toEqual([]);
    } else {
      expect(lookups).toEqual(
        expect.arrayContaining([
          expect.stringMatching(/_user_expires_idx \(user_id=\? AND expires_at<\?\)$/),
          expect.stringMatching(/_user_last_used_idx \(user_id=\? AND last_used_at<\?\)$/),
        ]),
      );
      expect(lookups.filter((l) => /^SCAN/.test(l))).toEqual([]);
    }
  });

  it('touches the session by primary key on a refresh without rotation, among many sessions of its user', async () => {
    app.app.runtime.settings.refresh_token_rotation = false;
    try {
      const user = await app.createUser({ username: 'nils' });
      for (let i = 0; i < 40; i += 1) await app.loginAs(user);
      const { refreshToken } = await app.loginAs(user);
      const res = await app.post(
        '/api/auth/refresh-token',
        { refresh_token: refreshToken },
        { headers: { 'X-Request-ID': 'no-rotation' } },
      );
      expect(res.status).toBe(200);
      expect(notByPrimaryKey(await lookupsOfRequest('no-rotation'))).toEqual([]);
    } finally {
      app.app.runtime.settings.refresh_token_rotation = true;
    }
  });

  it("reads an access token's session by primary key among many sessions of its user", async () => {
    const user = await app.createUser({ username: 'sven' });
    for (let i = 0; i < 40; i += 1) await app.loginAs(user);
    const client = await app.loginAs(user);
    const res = await client.get('/api/auth/user', { headers: { 'X-Request-ID': 'guard' } });
    expect(res.status).toBe(200);
    expect(notByPrimaryKey(await lookupsOfRequest('guard'))).toEqual([]);
  });
});
