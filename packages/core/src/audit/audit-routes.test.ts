import { describeEachDatabase, startTestApp, type LoggedInClient, type TestApp } from '../testing/index.js';
import type { ActivityLogTable, NewActivity } from './tables.js';

const U1 = '11111111-1111-4111-8111-111111111111';
const U2 = '22222222-2222-4222-8222-222222222222';
const at = (iso: string) => new Date(iso);

/** Seeded entries (ids follow this order): each filter below selects a known subset. */
const SEED: NewActivity[] = [
  {
    timestamp: at('2025-01-01T10:00:00Z'),
    userId: U1,
    username: 'Alice',
    method: 'POST',
    path: '/api/notes',
    statusCode: 201,
    durationMs: 5,
    description: 'created',
  },
  {
    timestamp: at('2025-01-02T10:00:00Z'),
    userId: U1,
    username: 'Alice',
    method: 'DELETE',
    path: '/api/notes/7',
    statusCode: 204,
    durationMs: 3,
    description: null,
  },
  {
    timestamp: at('2025-01-03T10:00:00Z'),
    userId: U2,
    username: 'bob',
    method: 'PUT',
    path: '/api/Notes/8',
    statusCode: 400,
    durationMs: 9,
    description: null,
  },
  {
    timestamp: at('2025-01-04T23:59:59.999Z'),
    userId: null,
    username: null,
    method: 'POST',
    path: '/api/auth/refresh-token',
    statusCode: 200,
    durationMs: 1,
    description: null,
  },
  {
    timestamp: at('2025-01-05T00:00:00Z'),
    userId: U2,
    username: 'bob',
    method: 'PATCH',
    path: '/api/alice_100%/x',
    statusCode: 200,
    durationMs: 2,
    description: null,
  },
];

describeEachDatabase('Audit routes', (database) => {
  let app: TestApp;
  let admin: LoggedInClient;
  let alice: LoggedInClient;

  const paths = (items: { path: string }[]) => items.map((i) => i.path);
  async function logs(query: string) {
    const res = await admin.get(`/api/admin/audit/logs?${query}`);
    expect(res.status).toBe(200);
    return res.body.data;
  }

  beforeAll(async () => {
    app = await startTestApp({ database, settings: { activity_log_enabled: true } });
    admin = await app.loginAs(await app.createUser({ username: 'root', isSuperuser: true }));
    alice = await app.loginAs(await app.createUser({ username: 'alice' }));
    await app.app.runtime.ports.get('activity').recent(1); // flushes the two logins' entries first
    const { activityLog } = app.app.runtime.tables.audit as { activityLog: ActivityLogTable };
    await app.app.runtime.authDb.orm.delete(activityLog);
    await app.app.runtime.authDb.orm.insert(activityLog).values(SEED);
  });
  afterAll(() => app.close());

  it('answers 401 without a token and 403 access.superuser_required for other users', async () => {
    expect((await app.get('/api/admin/audit/logs')).status).toBe(401);
    const res = await alice.get('/api/admin/audit/activity');
    expect(res.status).toBe(403);
    expect(res.body.detail[0]).toMatchObject({ code: 'access.superuser_required' });
  });

  it('pages newest first, excluding activity_log_exclude_paths by default, in camelCase', async () => {
    const page = await logs('pageSize=2');
    expect(page).toMatchObject({ total: 4, page: 1, pageSize: 2, pages: 2 });
    expect(paths(page.items)).toEqual(['/api/alice_100%/x', '/api/Notes/8']);
    expect(page.items[1]).toEqual({
      id: expect.any(Number),
      timestamp: '2025-01-03T10:00:00.000Z',
      userId: U2,
      username: 'bob',
      method: 'PUT',
      path: '/api/Notes/8',
      statusCode: 400,
      durationMs: 9,
      description: null,
      impersonatorId: null,
    });
    expect(paths((await logs('pageSize=2&page=2')).items)).toEqual(['/api/notes/7', '/api/notes']);
  });

  it('applies each filter exactly', async () => {
    const cases: [string, string[]][] = [
      [
        'excludePaths=',
        ['/api/alice_100%/x', '/api/auth/refresh-token', '/api/Notes/8', '/api/notes/7', '/api/notes'],
      ],
      ['excludePaths=notes,%25', ['/api/auth/refresh-token', '/api/Notes/8']],
      ['orderBy=timestamp', ['/api/notes', '/api/notes/7', '/api/Notes/8', '/api/alice_100%/x']],
      ['orderBy=-status_code', ['/api/Notes/8', '/api/notes/7', '/api/notes', '/api/alice_100%/x']],
      ['search=ALICE', ['/api/alice_100%/x', '/api/notes/7', '/api/notes']],
      ['search=100%25', ['/api/alice_100%/x']],
      ['search=i_e', []], // `_` is literal (unescaped it would match "ice")
      [`userId=${U1}`, ['/api/notes/7', '/api/notes']],
      ['method=post&excludePaths=', ['/api/auth/refresh-token', '/api/notes']],
      ['statusCode=200&excludePaths=', ['/api/alice_100%/x', '/api/auth/refresh-token']],
      ['dateFrom=2025-01-02T10:00:00Z&dateTo=2025-01-03T10:00:00Z', ['/api/Notes/8', '/api/notes/7']],
      [
        'dateTo=2025-01-04&excludePaths=',
        ['/api/auth/refresh-token', '/api/Notes/8', '/api/notes/7', '/api/notes'],
      ],
      ['dateFrom=2025-01-05', ['/api/alice_100%/x']],
      ['pathContains=notes', ['/api/notes/7', '/api/notes']],
      ['pathContains=notes&method=DELETE', ['/api/notes/7']],
    ];
    for (const [query, expected] of cases) {
      const page = await logs(query);
      expect({ query, paths: paths(page.items) }).toEqual({ query, paths: expected });
      expect(page.total).toBe(expected.length);
    }
  });

  it('returns the most recent entries as a plain list on /activity, with the same filters', async () => {
    const res = await admin.get('/api/admin/audit/activity?limit=2');
    expect(res.status).toBe(200);
    expect(paths(res.body.data)).toEqual(['/api/alice_100%/x', '/api/Notes/8']);
    const all = await admin.get('/api/admin/audit/activity');
    expect(all.body.data).toHaveLength(4);
    const bob = await admin.get(`/api/admin/audit/activity?userId=${U2}&orderBy=timestamp`);
    expect(paths(bob.body.data)).toEqual(['/api/Notes/8', '/api/alice_100%/x']);
  });

  it('answers 422 for bad parameters, never 500', async () => {
    const bad: [string, string][] = [
      ['/logs?orderBy=password', 'orderBy'],
      ['/logs?pageSize=201', 'pageSize'],
      ['/logs?userId=not-a-uuid', 'userId'],
      ['/logs?statusCode=abc', 'statusCode'],
      ['/logs?dateFrom=yesterday', 'dateFrom'],
      ['/activity?limit=0', 'limit'],
      ['/activity?limit=501', 'limit'],
    ];
    for (const [query, field] of bad) {
      const res = await admin.get(`/api/admin/audit${query}`);
      expect({ query, status: res.status }).toEqual({ query, status: 422 });
      expect(res.body.detail[0]).toMatchObject({ code: 'request.validation_error', loc: ['query', field] });
    }
  });

  it('serves the events snapshot through the activity port: oldest first, snake_case', async () => {
    const snapshot = await app.app.runtime.ports.get('activity').recent(2);
    expect(snapshot).toEqual([
      expect.objectContaining({ path: '/api/auth/refresh-token', user_id: null, status_code: 200 }),
      {
        id: expect.any(Number),
        timestamp: '2025-01-05T00:00:00.000Z',
        user_id: U2,
        username: 'bob',
        method: 'PATCH',
        path: '/api/alice_100%/x',
        status_code: 200,
        duration_ms: 2,
        description: null,
        impersonator_id: null,
      },
    ]);
  });

  it('gives the snapshot null when the activity log table does not exist', async () => {
    const { authDb } = app.app.runtime;
    const name = database.dialect === 'pg' ? '"svc_activity_log"' : '`svc_activity_log`';
    await authDb.exec(`ALTER TABLE ${name} RENAME TO svc_activity_log_away`);
    try {
      expect(await app.app.runtime.ports.get('activity').recent(20)).toBeNull();
    } finally {
      await authDb.exec(`ALTER TABLE svc_activity_log_away RENAME TO ${name}`);
    }
  });
});
