import { Writable } from 'node:stream';
import {
  describeEachCache,
  describeEachDatabase,
  startTestApp,
  type TestApp,
  type TestClient,
} from '../testing/index.js';
import type { EventsTables } from './tables.js';
import {
  eventsUrl,
  openSocket,
  projectRouter,
  ticketOf,
  withEvents,
  type Frame,
} from '../../../../testing/events.js';

const is = (type: string) => (frame: Frame) => frame.type === type;

describeEachCache('event tickets in the cache store', (cache) => {
  describeEachDatabase(`(${cache.kind})`, (database) => {
    let app: TestApp;
    let client: TestClient;
    let clock = Date.now();

    beforeAll(async () => {
      app = await startTestApp({
        database,
        cache,
        settings: { events_broadcast_enabled: true, events_ticket_store: 'cache' },
        coreModules: withEvents({ now: () => new Date(clock) }),
      });
      client = await app.loginAs(await app.createUser({ username: 'cachey' }));
    });
    afterAll(() => app.close());

    it('opens once per ticket, refuses reuse with 4401 and writes no database row', async () => {
      const ticket = await ticketOf(client);
      const socket = await openSocket(eventsUrl(app.url, { ticket }));
      expect(await socket.waitFor(is('snapshot'))).toEqual({ type: 'snapshot', data: [] });
      const again = await openSocket(eventsUrl(app.url, { ticket }));
      expect(await again.closed).toBe(4401);
      const table = (app.app.runtime.tables.events as unknown as EventsTables).wsTicket;
      expect(await app.app.runtime.authDb.orm.select().from(table)).toEqual([]);
      await socket.close();
    });

    it('refuses a ticket 30 seconds after it was issued (4401)', async () => {
      const ticket = await ticketOf(client);
      clock += 30_000; // SPEC "WebSocket ticket": valid 30 seconds
      const socket = await openSocket(eventsUrl(app.url, { ticket }));
      expect(await socket.closed).toBe(4401);
      clock -= 30_000;
      const fresh = await openSocket(eventsUrl(app.url, { ticket: await ticketOf(client) }));
      await fresh.waitFor(is('snapshot'));
      await fresh.close();
    });
  });
});

describeEachDatabase('event tickets with the cache unreachable', (database) => {
  let healthy: TestApp;
  let broken: TestApp;
  let token: string;
  beforeAll(async () => {
    const settings = { events_broadcast_enabled: true, events_ticket_store: 'cache' as const };
    healthy = await startTestApp({ database, settings });
    // Port 1: nothing listens there; the cache and the event bus fail, the app still starts.
    broken = await startTestApp({ database, settings: { ...settings, cache_url: 'redis://127.0.0.1:1' } });
    token = (await healthy.loginAs(await healthy.createUser({ username: 'stranded' }))).accessToken;
  }, 30_000);
  afterAll(async () => {
    await broken.close();
    await healthy.close();
  });

  it('answers the ticket route with 503 cache.unavailable in the uniform format', async () => {
    const res = await broken.as(token).post('/api/core/events/ticket');
    expect(res.status).toBe(503);
    expect(res.body.detail[0]).toMatchObject({ code: 'cache.unavailable', type: 'server_error' });
  });

  it('closes a redeem with 1011', async () => {
    const ticket = await ticketOf(healthy.as(token));
    const socket = await openSocket(eventsUrl(broken.url, { ticket }));
    expect(await socket.closed).toBe(1011);
  });
});

const missingTableWarnings: string[] = [];

describeEachDatabase('event snapshot without the activity table', (database) => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({
      database,
      settings: { events_broadcast_enabled: true, log_level: 'WARNING', log_format: 'json' },
      routers: [projectRouter()],
      logStream: new Writable({
        write(chunk, _encoding, callback) {
          const line = String(chunk);
          if (line.includes('activity log table does not exist')) missingTableWarnings.push(line);
          callback();
        },
      }),
    });
    await app.app.runtime.authDb.exec('DROP TABLE svc_activity_log');
  });
  afterAll(() => app.close());

  it('sends superusers an empty snapshot, keeps the socket open and warns once per process', async () => {
    const admin = await app.loginAs(await app.createUser({ username: 'root', isSuperuser: true }));
    for (let i = 0; i < 2; i++) {
      const socket = await openSocket(eventsUrl(app.url, { ticket: await ticketOf(admin) }));
      expect(await socket.waitFor(is('snapshot'))).toEqual({ type: 'snapshot', data: [] });
      await admin.post('/api/project/emit', { type: 'still.open', data: {} });
      await socket.waitFor(is('still.open'));
      await socket.close();
    }
    // Both database runs share this process: the warning appears once in all.
    expect(missingTableWarnings).toHaveLength(1);
  });
});

describeEachDatabase('event emission while Redis is unreachable', (database) => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({
      database,
      // The event bus cannot reach Redis; the ticket store is the database, so sockets still open.
      settings: { events_broadcast_enabled: true, cache_url: 'redis://127.0.0.1:1' },
      routers: [projectRouter()],
    });
  });
  afterAll(() => app.close());

  it('keeps emitting routes working and the sockets open (the events are lost and logged)', async () => {
    await app.createUser({ username: 'offline', isSuperuser: true });
    // Log in through the port (it emits `login`, which cannot be published): HTTP login may need the cache.
    const superuser = await app.app.runtime.ports.get('authenticator').firstSuperuser();
    const token = await app.app.runtime.ports.get('loginGuard').completeLogin(superuser!);
    expect(token.access_token).toEqual(expect.any(String));
    const client = app.as(token.access_token);
    const socket = await openSocket(eventsUrl(app.url, { ticket: await ticketOf(client) }));
    await socket.waitFor(is('snapshot'));
    const res = await client.post('/api/project/emit', { type: 'lost', data: {}, audience: { kind: 'all' } });
    expect(res.status).toBe(200);
    expect(socket.ws.readyState).toBe(socket.ws.OPEN);
    await socket.close();
  });
});
