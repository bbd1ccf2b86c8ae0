import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import {
  createPostgresDatabase,
  createSqliteDatabase,
  reportSkipped,
  startTestApp,
  TEST_POSTGRES_URL,
  TEST_REDIS_URL,
  type TestApp,
  type TestCache,
  type TestClient,
  type TestDatabase,
} from '../testing/index.js';
import {
  closeCodeWithin,
  eventsUrl,
  openSocket,
  projectRouter,
  ticketOf,
  type Frame,
  type TestSocket,
} from '../../../../testing/events.js';

const is = (type: string) => (frame: Frame) => frame.type === type;

// SPEC "Events" with several workers and hosts: two app instances on one PostgreSQL database and one Redis
// (same cache_url and cache_prefix) stand for two processes; every event reaches every process exactly once.
describe('event fan-out across two app instances over Redis', () => {
  if (!TEST_POSTGRES_URL || !TEST_REDIS_URL) {
    reportSkipped('event fan-out', 'SVC_TEST_POSTGRES_URL and SVC_TEST_REDIS_URL are both needed');
    return;
  }
  let created: { url: string; drop(): Promise<void> };
  let a: TestApp;
  let b: TestApp;
  let adminOnA: TestClient;
  const sockets: TestSocket[] = [];
  const track = (socket: TestSocket) => (sockets.push(socket), socket);

  async function start(ticketStore: 'database' | 'cache', cache: TestCache, database: TestDatabase) {
    return startTestApp({
      database,
      cache,
      settings: { events_broadcast_enabled: true, events_ticket_store: ticketStore },
      routers: [projectRouter()],
    });
  }

  beforeAll(async () => {
    created = await createPostgresDatabase();
    const database: TestDatabase = { dialect: 'pg', label: 'postgres', url: created.url };
    const cache: TestCache = {
      kind: 'redis',
      url: TEST_REDIS_URL,
      prefix: `svctest:${randomBytes(5).toString('hex')}:`,
    };
    a = await start('cache', cache, database);
    b = await start('cache', cache, database);
    adminOnA = await a.loginAs(await a.createUser({ username: 'root', isSuperuser: true }));
  }, 60_000);
  afterEach(async () => {
    await Promise.all(sockets.splice(0).map((socket) => socket.close()));
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await created?.drop();
  }, 30_000);

  it('delivers a login on A to a superuser socket on B, and exactly once on each instance', async () => {
    const root = { username: 'root', password: 'correct-horse-battery' };
    const onB = track(await openSocket(eventsUrl(b.url, { ticket: await ticketOf(await b.loginAs(root)) })));
    const onA = track(await openSocket(eventsUrl(a.url, { ticket: await ticketOf(adminOnA) })));
    await Promise.all([onA, onB].map((s) => s.waitFor(is('snapshot'))));
    const user = await a.createUser({ username: 'walker' });
    await a.loginAs(user);
    const login = await onB.waitFor((f) => f.type === 'login' && f.data.userId === user.id);
    expect(login).toEqual({
      type: 'login',
      timestamp: expect.any(String),
      data: { userId: user.id, username: 'walker' },
    });
    // A later event as a fence: once it arrived, every copy of the login would have too.
    await adminOnA.post('/api/project/emit', { type: 'fence', data: {}, audience: { kind: 'all' } });
    await Promise.all([onA, onB].map((s) => s.waitFor(is('fence'))));
    for (const socket of [onA, onB]) {
      expect(socket.frames.filter((f) => f.type === 'login' && f.data.userId === user.id)).toHaveLength(1);
      expect(socket.frames.filter(is('fence'))).toHaveLength(1);
    }
  });

  it('redeems on B a ticket issued on A (shared cache store), once', async () => {
    const user = await a.createUser({ username: 'roamer' });
    const ticket = await ticketOf(await a.loginAs(user));
    const first = track(await openSocket(eventsUrl(b.url, { ticket })));
    await first.waitFor(is('snapshot'));
    const reuse = track(await openSocket(eventsUrl(a.url, { ticket })));
    expect(await reuse.closed).toBe(4401);
  });

  it('closes a socket on B at once when the user is deactivated through the API on A', async () => {
    const user = await a.createUser({ username: 'faraway' });
    const socket = track(
      await openSocket(eventsUrl(b.url, { ticket: await ticketOf(await b.loginAs(user)) })),
    );
    await socket.waitFor(is('snapshot'));
    const res = await adminOnA.patch(`/api/admin/user/${user.id}`, { isActive: false });
    expect(res.status).toBe(200);
    // The check interval is 30 s: a close within 3 s is the user change crossing processes.
    expect(await closeCodeWithin(socket, 3_000)).toBe(4401);
  });

  it('delivers a project event emitted on B to a permission holder on A', async () => {
    const perm = await adminOnA.post('/api/admin/permissions/permissions', { codename: 'fleet.watch' });
    expect(perm.status).toBe(201);
    const user = await a.createUser({ username: 'watcher' });
    await adminOnA.put(`/api/admin/permissions/users/${user.id}/permissions`, {
      permissionIds: [(perm.body.data ?? perm.body).id],
    });
    const socket = track(
      await openSocket(eventsUrl(a.url, { ticket: await ticketOf(await a.loginAs(user)) })),
    );
    await socket.waitFor(is('snapshot'));
    const adminOnB = await b.loginAs({ username: 'root', password: 'correct-horse-battery' });
    await adminOnB.post('/api/project/emit', {
      type: 'fleet.moved',
      data: { ship: 3 },
      audience: { kind: 'permission', codename: 'fleet.watch' },
    });
    expect(await socket.waitFor(is('fleet.moved'))).toMatchObject({ data: { ship: 3 } });
  });
});

describe('event fan-out when Redis starts after the apps', () => {
  const redisServer = ['/usr/bin/redis-server', '/usr/local/bin/redis-server'].find((path) =>
    existsSync(path),
  );
  if (!redisServer) {
    reportSkipped('late Redis fan-out', 'no redis-server binary to start');
    return;
  }
  let created: { url: string; drop(): Promise<void> };
  let redis: ChildProcess | undefined;
  let a: TestApp;
  let b: TestApp;

  afterAll(async () => {
    await a?.close();
    await b?.close();
    redis?.kill('SIGKILL');
    await created?.drop();
  }, 30_000);

  it('subscribes once Redis is up and then delivers across the two apps', async () => {
    created = createSqliteDatabase();
    const port = await freePort();
    const database: TestDatabase = { dialect: 'sqlite', label: 'sqlite', url: created.url };
    const cache: TestCache = { kind: 'redis', url: `redis://127.0.0.1:${port}`, prefix: 'late:' };
    const settings = { events_broadcast_enabled: true };
    a = await startTestApp({ database, cache, settings, routers: [projectRouter()] });
    b = await startTestApp({ database, cache, settings });
    await a.createUser({ username: 'root', isSuperuser: true });
    // HTTP login counts attempts in the cache, which is down: log in through the port.
    const superuser = await a.app.runtime.ports.get('authenticator').firstSuperuser();
    const { access_token: token } = await a.app.runtime.ports.get('loginGuard').completeLogin(superuser!);
    const socket = await openSocket(eventsUrl(b.url, { ticket: await ticketOf(b.as(token)) }));
    await socket.waitFor(is('snapshot'));

    redis = spawn(redisServer, ['--port', String(port), '--save', '', '--appendonly', 'no'], {
      stdio: 'ignore',
    });
    const deadline = Date.now() + 15_000;
    while (!socket.frames.some(is('late')) && Date.now() < deadline) {
      const res = await a
        .as(token)
        .post('/api/project/emit', { type: 'late', data: {}, audience: { kind: 'all' } });
      expect(res.status).toBe(200);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    expect(socket.frames.some(is('late'))).toBe(true);
    await socket.close();
  }, 30_000);
});

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}
