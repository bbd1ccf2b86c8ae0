import { eq } from 'drizzle-orm';
import {
  closeCodeWithin,
  eventsUrl,
  openSocket,
  ticketOf,
  type TestSocket,
} from '../../../../testing/events.js';
import type { CoreTables } from '../kernel/db/tables.js';
import { describeEachDatabase } from '../testing/each.js';
import { startTestApp, type LoggedInClient, type TestApp, type TestUser } from '../testing/test-app.js';

// A user id is a UUID (SPEC "User"): `6F1C…` and `6f1c…` name the same user. PostgreSQL's uuid type compares
// them equal while SQLite stores the text, so each route must see one canonical (lower-case) id, or the
// delete-self guard and the event sockets compare a different string than the database does.
describeEachDatabase('User ids in any letter case', (database) => {
  let app: TestApp;
  let root: TestUser;
  let admin: LoggedInClient;
  let tables: CoreTables;
  const sockets: TestSocket[] = [];

  const userRow = async (id: string) => {
    const orm = app.app.runtime.authDb.orm;
    const [row] = await orm.select().from(tables.user).where(eq(tables.user.id, id));
    return row;
  };

  beforeAll(async () => {
    app = await startTestApp({
      database,
      settings: { events_broadcast_enabled: true, activity_log_enabled: true },
    });
    tables = app.app.runtime.tables.core as unknown as CoreTables;
    root = await app.createUser({ username: 'root', isSuperuser: true });
    admin = await app.loginAs(root);
  });
  afterEach(async () => {
    await Promise.all(sockets.splice(0).map((socket) => socket.close()));
  });
  afterAll(() => app.close());

  it('refuses to delete oneself by the upper-cased own id (400 user.cannot_delete_self)', async () => {
    const res = await admin.delete(`/api/admin/user/${root.id.toUpperCase()}`);
    expect(res.status).toBe(400);
    expect(res.body.detail[0]).toMatchObject({ code: 'user.cannot_delete_self', loc: ['path', 'user_id'] });
    expect(await userRow(root.id)).toBeDefined();
  });

  it('refuses to demote or deactivate oneself by the upper-cased own id (400 user.cannot_demote_self)', async () => {
    for (const body of [{ isSuperuser: false }, { isActive: false }]) {
      const res = await admin.patch(`/api/admin/user/${root.id.toUpperCase()}`, body);
      expect(res.status).toBe(400);
      expect(res.body.detail[0]).toMatchObject({ code: 'user.cannot_demote_self' });
    }
    expect(await userRow(root.id)).toMatchObject({ isSuperuser: true, isActive: true });
  });

  it('reads, changes and deletes another user by the upper-cased id and closes their socket at once', async () => {
    const victim = await app.createUser({ username: 'upper_victim' });
    const upper = victim.id.toUpperCase();
    const got = await admin.get(`/api/admin/user/${upper}`);
    expect(got.status).toBe(200);
    expect(got.body.data.id).toBe(victim.id);
    const patched = await admin.patch(`/api/admin/user/${upper}`, { firstName: 'Upper' });
    expect(patched.status).toBe(200);
    expect(patched.body.data).toMatchObject({ id: victim.id, firstName: 'Upper' });

    const client = await app.loginAs(victim);
    const socket = await openSocket(eventsUrl(app.url, { ticket: await ticketOf(client) }));
    sockets.push(socket);
    await socket.waitFor((frame) => frame.type === 'snapshot');
    const res = await admin.delete(`/api/admin/user/${upper}`);
    expect(res.status).toBe(204);
    expect(await userRow(victim.id)).toBeUndefined();
    // SPEC "WebSocket connection": a deletion through the API closes at once, not at the 30-second check.
    expect(await closeCodeWithin(socket, 3_000)).toBe(4401);
  });

  it('serves the permission routes of a user by the upper-cased id, telling the user under the stored id', async () => {
    const member = await app.createUser({ username: 'upper_member' });
    const upper = member.id.toUpperCase();
    const group = await admin.post('/api/admin/permissions/groups', { name: 'upper-case-group' });
    expect(group.status).toBe(201);
    const client = await app.loginAs(member);
    const socket = await openSocket(eventsUrl(app.url, { ticket: await ticketOf(client) }));
    sockets.push(socket);
    await socket.waitFor((frame) => frame.type === 'snapshot');

    const set = await admin.put(`/api/admin/permissions/users/${upper}/groups`, {
      groupIds: [group.body.data.id],
    });
    expect(set.status).toBe(200);
    expect(set.body.data.map((g: { name: string }) => g.name)).toEqual(['upper-case-group']);
    // SPEC "Event types and audience": the affected user receives user_permissions_changed with their id.
    const frame = await socket.waitFor((f) => f.type === 'user_permissions_changed');
    expect(frame.data).toEqual({ userId: member.id });
    for (const path of ['groups', 'permissions', 'effective']) {
      const res = await admin.get(`/api/admin/permissions/users/${upper}/${path}`);
      expect(res.status).toBe(200);
    }
    expect((await admin.get(`/api/admin/permissions/users/${upper}/groups`)).body.data).toHaveLength(1);
  });

  it('filters the activity log by an upper-cased user id like by the stored one', async () => {
    const writer = await app.createUser({ username: 'upper_writer' });
    const client = await app.loginAs(writer);
    await client.patch('/api/auth/user', { firstName: 'Writes' });
    const lower = await admin.get(`/api/admin/audit/logs?userId=${writer.id}`);
    const upper = await admin.get(`/api/admin/audit/logs?userId=${writer.id.toUpperCase()}`);
    expect(lower.status).toBe(200);
    expect(lower.body.data.total).toBeGreaterThan(0);
    expect(upper.status).toBe(200);
    expect(upper.body.data.items).toEqual(lower.body.data.items);
  });

  it('still answers 404 user.not_found for an id that is not a UUID', async () => {
    for (const id of ['not-a-uuid', `${root.id.toUpperCase()}0`, 'G'.repeat(36)]) {
      const res = await admin.get(`/api/admin/user/${id}`);
      expect(res.status).toBe(404);
      expect(res.body.detail[0]).toMatchObject({ code: 'user.not_found', loc: ['path', 'user_id'] });
      const perms = await admin.get(`/api/admin/permissions/users/${id}/groups`);
      expect(perms.status).toBe(404);
    }
  });
});
