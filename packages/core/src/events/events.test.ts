import { createHash } from 'node:crypto';
import { eq } from 'drizzle-orm';
import type { CoreTables } from '../kernel/db/tables.js';
import type { Audience } from '../kernel/ports.js';
import {
  describeEachDatabase,
  startTestApp,
  type TestApp,
  type TestClient,
  type TestUser,
} from '../testing/index.js';
import type { EventsTables } from './tables.js';
import {
  closeCodeWithin,
  eventsUrl,
  handshakeStatus,
  openSocket,
  projectRouter,
  ticketOf,
  withEvents,
  type Frame,
  type TestSocket,
} from '../../../../testing/events.js';

const is = (type: string) => (frame: Frame) => frame.type === type;

describeEachDatabase('event stream', (database) => {
  let app: TestApp;
  let admin: TestUser;
  let adminClient: TestClient;
  const sockets: TestSocket[] = [];
  const track = (socket: TestSocket) => (sockets.push(socket), socket);
  const connect = async (client: TestClient) =>
    track(await openSocket(eventsUrl(app.url, { ticket: await ticketOf(client) })));
  const rt = () => app.app.runtime;
  const usersTable = () => (rt().tables.core as unknown as CoreTables).user;
  const ticketTable = () => (rt().tables.events as unknown as EventsTables).wsTicket;

  beforeAll(async () => {
    app = await startTestApp({
      database,
      settings: {
        events_broadcast_enabled: true,
        events_allow_query_token: true,
        events_public_types: ['logout'],
        activity_log_enabled: true,
      },
      routers: [projectRouter()],
    });
    admin = await app.createUser({ username: 'root', isSuperuser: true });
    adminClient = await app.loginAs(admin);
  });
  afterEach(async () => {
    await Promise.all(sockets.splice(0).map((socket) => socket.close()));
  });
  afterAll(() => app.close());

  describe('tickets', () => {
    it('issues a 30-second ticket, not enveloped, and stores only its SHA-256 digest', async () => {
      const alice = await app.loginAs(await app.createUser({ username: 'alice' }));
      const res = await alice.post('/api/core/events/ticket');
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ ticket: expect.any(String), expires_in: 30 });
      expect(Buffer.from(res.body.ticket, 'base64url')).toHaveLength(32);
      const digest = createHash('sha256').update(res.body.ticket).digest('hex');
      const rows = await rt()
        .authDb.orm.select()
        .from(ticketTable())
        .where(eq(ticketTable().userId, alice.user.id));
      expect(rows.map((row) => row.digest)).toContain(digest);
      expect(rows.some((row) => row.digest === res.body.ticket)).toBe(false);
      const row = rows.find((r) => r.digest === digest)!;
      expect(row.expiresAt.getTime() - row.createdAt.getTime()).toBe(30_000);
    });

    it('answers 401 auth.not_authenticated without a bearer token', async () => {
      const res = await app.post('/api/core/events/ticket');
      expect(res.status).toBe(401);
      expect(res.body.detail[0]).toMatchObject({
        code: 'auth.not_authenticated',
        loc: ['header', 'Authorization'],
      });
    });

    it('opens once per ticket; reuse closes 4401 and the row is consumed', async () => {
      const bob = await app.loginAs(await app.createUser({ username: 'bob' }));
      const ticket = await ticketOf(bob);
      const first = track(await openSocket(eventsUrl(app.url, { ticket })));
      expect(await first.waitFor(is('snapshot'))).toEqual({ type: 'snapshot', data: [] });
      const again = track(await openSocket(eventsUrl(app.url, { ticket })));
      expect(await again.closed).toBe(4401);
      const digest = createHash('sha256').update(ticket).digest('hex');
      expect(
        await rt().authDb.orm.select().from(ticketTable()).where(eq(ticketTable().digest, digest)),
      ).toEqual([]);
      expect(first.ws.readyState).toBe(first.ws.OPEN);
    });

    it('lets exactly one of two parallel redeems of one ticket win', async () => {
      const carol = await app.loginAs(await app.createUser({ username: 'carol' }));
      const ticket = await ticketOf(carol);
      const pair = await Promise.all([0, 1].map(() => openSocket(eventsUrl(app.url, { ticket }))));
      pair.forEach(track);
      const outcomes = await Promise.all(
        pair.map((socket) =>
          Promise.race([
            socket.closed.then((code) => `closed ${code}`),
            socket.waitFor(is('snapshot')).then(() => 'open'),
          ]),
        ),
      );
      expect(outcomes.sort()).toEqual(['closed 4401', 'open']);
    });

    it('refuses an expired ticket with 4401 and purges expired rows when a new ticket is issued', async () => {
      const dave = await app.loginAs(await app.createUser({ username: 'dave' }));
      const ticket = await ticketOf(dave);
      const table = ticketTable();
      // SPEC "WebSocket ticket": valid 30 seconds. Move the stored expiry into the past instead of waiting.
      await rt()
        .authDb.orm.update(table)
        .set({ expiresAt: new Date(Date.now() - 1_000) })
        .where(eq(table.userId, dave.user.id))
        .returning();
      const socket = track(await openSocket(eventsUrl(app.url, { ticket })));
      expect(await socket.closed).toBe(4401);

      const stale = await ticketOf(dave);
      await rt()
        .authDb.orm.update(table)
        .set({ expiresAt: new Date(Date.now() - 1_000) })
        .where(eq(table.digest, createHash('sha256').update(stale).digest('hex')))
        .returning();
      await ticketOf(dave);
      const rows = await rt().authDb.orm.select().from(table).where(eq(table.userId, dave.user.id));
      expect(rows).toHaveLength(1);
      expect(rows[0]!.expiresAt.getTime()).toBeGreaterThan(Date.now());
    });

    it('closes 4401 for a missing or unknown ticket', async () => {
      const none = track(await openSocket(eventsUrl(app.url)));
      const unknown = track(await openSocket(eventsUrl(app.url, { ticket: 'not-a-ticket' })));
      expect(await none.closed).toBe(4401);
      expect(await unknown.closed).toBe(4401);
    });

    it('refuses a ticket issued before a password change (4401)', async () => {
      const erin = await app.createUser({ username: 'erin' });
      const client = await app.loginAs(erin);
      const ticket = await ticketOf(client);
      await rt()
        .authDb.orm.update(usersTable())
        .set({ passwordChangedAt: new Date(Date.now() + 1_000) })
        .where(eq(usersTable().id, erin.id))
        .returning();
      const socket = track(await openSocket(eventsUrl(app.url, { ticket })));
      expect(await socket.closed).toBe(4401);
    });
  });

  describe('legacy ?token=', () => {
    it('accepts an access token, refuses a refresh token with 4401, and prefers the ticket when both are sent', async () => {
      const frank = await app.loginAs(await app.createUser({ username: 'frank' }));
      const byToken = track(await openSocket(eventsUrl(app.url, { token: frank.accessToken })));
      expect(await byToken.waitFor(is('snapshot'))).toEqual({ type: 'snapshot', data: [] });
      const byRefresh = track(await openSocket(eventsUrl(app.url, { token: frank.refreshToken })));
      expect(await byRefresh.closed).toBe(4401);
      const badTicketGoodToken = track(
        await openSocket(eventsUrl(app.url, { ticket: 'used-or-unknown', token: frank.accessToken })),
      );
      expect(await badTicketGoodToken.closed).toBe(4401);
      const goodTicketBadToken = track(
        await openSocket(eventsUrl(app.url, { ticket: await ticketOf(frank), token: 'garbage' })),
      );
      await goodTicketBadToken.waitFor(is('snapshot'));
    });

    it("closes 4401 for a deactivated user's token", async () => {
      const gina = await app.createUser({ username: 'gina' });
      const client = await app.loginAs(gina);
      await rt()
        .authDb.orm.update(usersTable())
        .set({ isActive: false })
        .where(eq(usersTable().id, gina.id))
        .returning();
      const socket = track(await openSocket(eventsUrl(app.url, { token: client.accessToken })));
      expect(await socket.closed).toBe(4401);
    });
  });

  describe('snapshot', () => {
    it('sends superusers the last activity entries oldest first with snake_case fields, others an empty list', async () => {
      await adminClient.post('/api/core/events/ticket'); // a recorded write request
      const superSocket = await connect(adminClient);
      const snapshot = await superSocket.waitFor(is('snapshot'));
      expect(snapshot).not.toHaveProperty('timestamp');
      expect(snapshot.data.length).toBeGreaterThan(0);
      expect(snapshot.data.length).toBeLessThanOrEqual(20);
      expect(snapshot.data[0]).toMatchObject({
        method: 'POST',
        status_code: expect.any(Number),
        user_id: null,
      });
      const times = snapshot.data.map((entry: { timestamp: string }) => Date.parse(entry.timestamp));
      expect([...times].sort((a, b) => a - b)).toEqual(times);
      expect(snapshot.data.some((e: { path: string }) => e.path === '/api/core/events/ticket')).toBe(true);

      const henry = await app.loginAs(await app.createUser({ username: 'henry' }));
      const plain = await connect(henry);
      expect(await plain.waitFor(is('snapshot'))).toEqual({ type: 'snapshot', data: [] });
      expect(plain.frames[0]).toEqual({ type: 'snapshot', data: [] });
    });
  });

  describe('closing on user changes through the API', () => {
    const cases: [string, (id: string) => Promise<number>, number][] = [
      [
        'deactivation (PATCH isActive false)',
        (id) => adminClient.patch(`/api/admin/user/${id}`, { isActive: false }).then((r) => r.status),
        4401,
      ],
      [
        'superuser status (PATCH isSuperuser)',
        (id) => adminClient.patch(`/api/admin/user/${id}`, { isSuperuser: true }).then((r) => r.status),
        4403,
      ],
      [
        'password change (PATCH password)',
        (id) =>
          adminClient
            .patch(`/api/admin/user/${id}`, { password: 'another-long-password-1' })
            .then((r) => r.status),
        4401,
      ],
      ['deletion (DELETE)', (id) => adminClient.delete(`/api/admin/user/${id}`).then((r) => r.status), 4401],
    ];
    it.each(cases)('closes the user’s sockets at once on %s', async (_name, change, code) => {
      const user = await app.createUser({ username: `victim${sockets.length}${Date.now() % 100000}` });
      const client = await app.loginAs(user);
      const [one, two] = [await connect(client), await connect(client)];
      await Promise.all([one.waitFor(is('snapshot')), two.waitFor(is('snapshot'))]);
      const bystander = await connect(adminClient);
      await bystander.waitFor(is('snapshot'));
      expect(await change(user.id)).toBeLessThan(300);
      // The default check interval is 30 s: a close within 3 s comes from the API change itself.
      expect(await closeCodeWithin(one, 3_000)).toBe(code);
      expect(await closeCodeWithin(two, 3_000)).toBe(code);
      expect(bystander.ws.readyState).toBe(bystander.ws.OPEN);
    });

    it('closes 4401 when the user changes their own password', async () => {
      const ivy = await app.createUser({ username: 'ivy' });
      const client = await app.loginAs(ivy);
      const socket = await connect(client);
      await socket.waitFor(is('snapshot'));
      const res = await client.post('/api/auth/user/password', {
        currentPassword: ivy.password,
        newPassword: 'a-brand-new-password',
      });
      expect(res.status).toBeLessThan(300);
      expect(await closeCodeWithin(socket, 3_000)).toBe(4401);
    });
  });

  describe('audiences', () => {
    it('sends login to superusers only, logout (events_public_types) to everyone, with timestamps', async () => {
      const jack = await app.createUser({ username: 'jack' });
      const jackClient = await app.loginAs(jack);
      const superSocket = await connect(adminClient);
      const plainSocket = await connect(jackClient);
      await Promise.all([superSocket.waitFor(is('snapshot')), plainSocket.waitFor(is('snapshot'))]);

      const relogged = await app.loginAs(jack);
      const login = await superSocket.waitFor((f) => f.type === 'login' && f.data.userId === jack.id);
      expect(login).toEqual({
        type: 'login',
        timestamp: expect.any(String),
        data: { userId: jack.id, username: 'jack' },
      });
      expect(new Date(login.timestamp!).toISOString()).toBe(login.timestamp);

      const logout = await relogged.post('/api/auth/logout', { refresh_token: relogged.refreshToken });
      expect(logout.status).toBeLessThan(300);
      const seen = await plainSocket.waitFor((f) => f.type === 'logout');
      expect(seen.data).toEqual({ userId: jack.id, username: 'jack' });
      await superSocket.waitFor((f) => f.type === 'logout');
      // Frames reach a socket in emission order: the logout came after the login, which jack never got.
      expect(plainSocket.frames.filter((f) => f.type === 'login' || f.type === 'activity')).toEqual([]);
    });

    it('sends user_permissions_changed to superusers and the affected user only', async () => {
      const kim = await app.createUser({ username: 'kim' });
      const lee = await app.createUser({ username: 'lee' });
      const kimSocket = await connect(await app.loginAs(kim));
      const leeSocket = await connect(await app.loginAs(lee));
      const superSocket = await connect(adminClient);
      await Promise.all([kimSocket, leeSocket, superSocket].map((s) => s.waitFor(is('snapshot'))));
      const perm = await adminClient.post('/api/admin/permissions/permissions', { codename: 'notes.read' });
      expect(perm.status).toBe(201);
      const permId = (perm.body.data ?? perm.body).id;
      const res = await adminClient.put(`/api/admin/permissions/users/${kim.id}/permissions`, {
        permissionIds: [permId],
      });
      expect(res.status).toBe(200);
      const expected = {
        type: 'user_permissions_changed',
        timestamp: expect.any(String),
        data: { userId: kim.id },
      };
      expect(await kimSocket.waitFor(is('user_permissions_changed'))).toEqual(expected);
      expect(await superSocket.waitFor(is('user_permissions_changed'))).toEqual(expected);
      await adminClient.post('/api/project/emit', {
        type: 'marker',
        data: {},
        audience: { kind: 'users', userIds: [lee.id] },
      });
      await leeSocket.waitFor(is('marker'));
      expect(leeSocket.frames.map((f) => f.type)).toEqual(['snapshot', 'marker']);
    });

    it('delivers project events from ctx.emit to their audience (users, permission, superusers, all)', async () => {
      const perm = await adminClient.post('/api/admin/permissions/permissions', { codename: 'reports.view' });
      const permId = (perm.body.data ?? perm.body).id;
      const holder = await app.createUser({ username: 'holder' });
      await adminClient.put(`/api/admin/permissions/users/${holder.id}/permissions`, {
        permissionIds: [permId],
      });
      const other = await app.createUser({ username: 'other' });
      const holderSocket = await connect(await app.loginAs(holder));
      const otherSocket = await connect(await app.loginAs(other));
      const superSocket = await connect(adminClient);
      await Promise.all([holderSocket, otherSocket, superSocket].map((s) => s.waitFor(is('snapshot'))));

      const emit = (type: string, audience?: Audience) =>
        adminClient.post('/api/project/emit', { type, data: { noteId: 7 }, audience });
      expect((await emit('note.for_users', { kind: 'users', userIds: [other.id] })).status).toBe(200);
      await emit('note.for_holders', { kind: 'permission', codename: 'reports.view' });
      await emit('note.default'); // ctx.emit without audience: superusers
      await emit('note.for_all', { kind: 'all' });
      await Promise.all([holderSocket, otherSocket, superSocket].map((s) => s.waitFor(is('note.for_all'))));

      const notes = (s: TestSocket) => s.frames.filter((f) => f.type.startsWith('note.')).map((f) => f.type);
      expect(notes(otherSocket)).toEqual(['note.for_users', 'note.for_all']);
      expect(notes(holderSocket)).toEqual(['note.for_holders', 'note.for_all']);
      expect(notes(superSocket)).toEqual(['note.for_holders', 'note.default', 'note.for_all']);
      expect(await otherSocket.waitFor(is('note.for_users'))).toEqual({
        type: 'note.for_users',
        timestamp: expect.any(String),
        data: { noteId: 7 },
      });
    });

    it('a permission removed or granted through the API changes the permission audience of open sockets at once', async () => {
      const perm = await adminClient.post('/api/admin/permissions/permissions', {
        codename: 'reports.audit',
      });
      const permId = (perm.body.data ?? perm.body).id;
      const losing = await app.createUser({ username: 'losing' });
      const gaining = await app.createUser({ username: 'gaining' });
      await adminClient.put(`/api/admin/permissions/users/${losing.id}/permissions`, {
        permissionIds: [permId],
      });
      const losingSocket = await connect(await app.loginAs(losing));
      const gainingSocket = await connect(await app.loginAs(gaining));
      await Promise.all([losingSocket, gainingSocket].map((s) => s.waitFor(is('snapshot'))));
      await adminClient.put(`/api/admin/permissions/users/${losing.id}/permissions`, { permissionIds: [] });
      await adminClient.put(`/api/admin/permissions/users/${gaining.id}/permissions`, {
        permissionIds: [permId],
      });
      await losingSocket.waitFor(is('user_permissions_changed'));
      await gainingSocket.waitFor(is('user_permissions_changed'));
      await adminClient.post('/api/project/emit', {
        type: 'audit.for_holders',
        data: {},
        audience: { kind: 'permission', codename: 'reports.audit' },
      });
      await adminClient.post('/api/project/emit', {
        type: 'audit.marker',
        data: {},
        audience: { kind: 'all' },
      });
      await Promise.all([losingSocket, gainingSocket].map((s) => s.waitFor(is('audit.marker'))));
      expect(losingSocket.frames.filter(is('audit.for_holders'))).toHaveLength(0);
      expect(gainingSocket.frames.filter(is('audit.for_holders'))).toHaveLength(1);
    });

    // The socket's permissions are re-read after the `user_permissions_changed` frame has gone out; an event
    // sent as soon as the client sees that frame must wait for the read, not meet the old permissions. The
    // read is slowed here (the real one, 300 ms later) so that the event surely arrives during it.
    it('holds the events that arrive while a changed permission audience is read, and matches them against it', async () => {
      const perm = await adminClient.post('/api/admin/permissions/permissions', { codename: 'reports.slow' });
      const permId = (perm.body.data ?? perm.body).id;
      const gaining = await app.createUser({ username: 'gaining-slowly' });
      const socket = await connect(await app.loginAs(gaining));
      await socket.waitFor(is('snapshot'));
      const port = rt().ports.get('permissions') as { effectivePermissions(id: string): Promise<string[]> };
      const read = port.effectivePermissions;
      port.effectivePermissions = async (id) => {
        if (id === gaining.id) await new Promise((resolve) => setTimeout(resolve, 300));
        return read.call(port, id);
      };
      try {
        await adminClient.put(`/api/admin/permissions/users/${gaining.id}/permissions`, {
          permissionIds: [permId],
        });
        await socket.waitFor(is('user_permissions_changed'));
        await adminClient.post('/api/project/emit', {
          type: 'slow.for_holders',
          data: {},
          audience: { kind: 'permission', codename: 'reports.slow' },
        });
        await adminClient.post('/api/project/emit', {
          type: 'slow.marker',
          data: {},
          audience: { kind: 'all' },
        });
        await socket.waitFor(is('slow.marker'));
      } finally {
        port.effectivePermissions = read;
      }
      // In the order sent: the held frames go out in order once the read ends.
      expect(socket.frames.map((frame) => frame.type).filter((type) => type.startsWith('slow.'))).toEqual([
        'slow.for_holders',
        'slow.marker',
      ]);
    });

    it('delivers one broadcast to each of 1,000 connected sockets', async () => {
      const crowd = await app.loginAs(await app.createUser({ username: 'crowd' }));
      const url = eventsUrl(app.url, { token: crowd.accessToken });
      const many: TestSocket[] = [];
      for (let batch = 0; batch < 10; batch++) {
        const opened = await Promise.all(Array.from({ length: 100 }, () => openSocket(url)));
        await Promise.all(opened.map((s) => s.waitFor(is('snapshot'), 15_000)));
        many.push(...opened.map(track));
      }
      await adminClient.post('/api/project/emit', {
        type: 'broadcast',
        data: { n: 1 },
        audience: { kind: 'all' },
      });
      await Promise.all(many.map((s) => s.waitFor(is('broadcast'), 15_000)));
      expect(many.map((s) => s.frames.filter(is('broadcast')).length)).toEqual(Array(1000).fill(1));
    }, 120_000);
  });
});

describeEachDatabase('event stream periodic check, back-pressure and shutdown', (database) => {
  let app: TestApp;
  let adminClient: TestClient;
  const rt = () => app.app.runtime;
  const usersTable = () => (rt().tables.core as unknown as CoreTables).user;
  const INTERVAL_MS = 300;

  beforeAll(async () => {
    app = await startTestApp({
      database,
      settings: { events_broadcast_enabled: true },
      routers: [projectRouter()],
      coreModules: withEvents({ pingIntervalMs: INTERVAL_MS, maxBufferedBytes: 64 * 1024 }),
    });
    adminClient = await app.loginAs(await app.createUser({ username: 'root', isSuperuser: true }));
  });
  afterAll(() => app.close());

  const connect = async (client: TestClient) => {
    const socket = await openSocket(eventsUrl(app.url, { ticket: await ticketOf(client) }));
    await socket.waitFor(is('snapshot'));
    return socket;
  };

  it('pings on the interval and closes 4401 once the user is deactivated outside the API', async () => {
    const user = await app.createUser({ username: 'outside1' });
    const socket = await connect(await app.loginAs(user));
    const ping = await socket.waitFor(is('ping'), 3_000);
    expect(ping).toEqual({ type: 'ping' });
    await rt()
      .authDb.orm.update(usersTable())
      .set({ isActive: false })
      .where(eq(usersTable().id, user.id))
      .returning();
    expect(await closeCodeWithin(socket, 3_000)).toBe(4401);
  });

  it('closes 4403 at the next check when the superuser flag is flipped in the database', async () => {
    const user = await app.createUser({ username: 'outside2' });
    const socket = await connect(await app.loginAs(user));
    await rt()
      .authDb.orm.update(usersTable())
      .set({ isSuperuser: true })
      .where(eq(usersTable().id, user.id))
      .returning();
    expect(await closeCodeWithin(socket, 3_000)).toBe(4403);
  });

  it('closes 4401 at the next check when the password changed or the user was deleted in the database', async () => {
    const changed = await app.createUser({ username: 'outside3' });
    const deleted = await app.createUser({ username: 'outside4' });
    const a = await connect(await app.loginAs(changed));
    const b = await connect(await app.loginAs(deleted));
    await rt()
      .authDb.orm.update(usersTable())
      .set({ passwordChangedAt: new Date() })
      .where(eq(usersTable().id, changed.id))
      .returning();
    await rt().authDb.orm.delete(usersTable()).where(eq(usersTable().id, deleted.id)).returning();
    expect(await closeCodeWithin(a, 3_000)).toBe(4401);
    expect(await closeCodeWithin(b, 3_000)).toBe(4401);
  });

  it('keeps an unchanged user open across several checks', async () => {
    const socket = await connect(await app.loginAs(await app.createUser({ username: 'steady' })));
    await socket.waitFor(() => socket.frames.filter(is('ping')).length >= 3, 5_000);
    expect(socket.ws.readyState).toBe(socket.ws.OPEN);
    await socket.close();
  });

  it('closes a client that does not read (back-pressure, 1013) and keeps serving the others', async () => {
    const slowUser = await app.createUser({ username: 'slowpoke' });
    const slow = await connect(await app.loginAs(slowUser));
    const fast = await connect(adminClient);
    slow.ws.pause(); // stops reading from the TCP socket: the server's buffer for it grows
    const payload = 'x'.repeat(16 * 1024);
    for (let round = 0; round < 40 && slow.ws.readyState === slow.ws.OPEN; round++) {
      const res = await adminClient.post('/api/project/emit', {
        type: 'bulk',
        data: { payload },
        audience: { kind: 'all' },
        repeat: 50,
      });
      expect(res.status).toBe(200);
      await fast.waitFor(() => fast.frames.filter(is('bulk')).length === (round + 1) * 50, 10_000);
      if (round >= 5) {
        slow.ws.resume();
        break;
      }
    }
    expect(await closeCodeWithin(slow, 10_000)).toBe(1013);
    expect(slow.frames.filter(is('bulk')).length).toBeLessThan(fast.frames.filter(is('bulk')).length);
    expect(fast.ws.readyState).toBe(fast.ws.OPEN);
    await fast.close();
  }, 60_000);

  it('closes every socket with 1001 on shutdown', async () => {
    const second = await startTestApp({
      database,
      settings: { events_broadcast_enabled: true },
      coreModules: withEvents({ pingIntervalMs: INTERVAL_MS }),
    });
    const client = await second.loginAs(await second.createUser({ username: 'leaving' }));
    const socket = await openSocket(eventsUrl(second.url, { ticket: await ticketOf(client) }));
    await socket.waitFor(is('snapshot'));
    const started = Date.now();
    await second.close();
    expect(await socket.closed).toBe(1001);
    expect(Date.now() - started).toBeLessThan(5_000);
  });
});

describeEachDatabase('event routes while events are disabled', (database) => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ database });
  });
  afterAll(() => app.close());

  it('answers a handshake with HTTP 403 and has no ticket route', async () => {
    expect(await handshakeStatus(eventsUrl(app.url))).toBe(403);
    const client = await app.loginAs(await app.createUser({ username: 'nobody' }));
    const res = await client.post('/api/core/events/ticket');
    expect(res.status).toBe(404);
    expect(res.body.detail[0]).toMatchObject({ code: 'request.not_found' });
  });

  it('answers an upgrade on another path with 404', async () => {
    expect(await handshakeStatus(eventsUrl(app.url, {}, '/api/core/events/elsewhere'))).toBe(404);
  });
});
