import { addTranslations } from '../kernel/i18n/index.js';
import type { SvcModule } from '../kernel/module.js';
import type { CoreEvents, EventSink } from '../kernel/ports.js';
import { defineRouter } from '../kernel/router.js';
import { describeEachDatabase, startTestApp, type LoggedInClient, type TestApp } from '../testing/index.js';

const BASE = '/api/admin/permissions';

/** Records every emitted event; replaces the kernel's no-op sink (modules in `options.modules` run last). */
function recordingProbe() {
  const events: { type: keyof CoreEvents; data: unknown }[] = [];
  const sink: EventSink = {
    emit(type, data) {
      events.push({ type, data });
    },
    emitCustom() {},
    userChanged() {},
  };
  const module: SvcModule = {
    name: 'probe',
    setup({ ports }) {
      ports.provide('events', sink);
      return {};
    },
  };
  return { events, module };
}

const notes = defineRouter({ prefix: '/notes', tags: ['notes'], permissions: ['notes.read'] });
notes.get('/', { summary: 'List notes' }, async () => []);
notes.post('/:noteId/archive', { permissions: ['notes.write'] }, async () => ({}));

addTranslations('en', {
  'permissions.reports.view.label': 'View reports',
  'permissions.reports.view.description': 'Open the reports page',
  'groups.auditors.label': 'Auditors',
});
addTranslations('de', { 'permissions.reports.view.label': 'Berichte ansehen' });

describeEachDatabase('permissions and groups admin routes', (database) => {
  let app: TestApp;
  let admin: LoggedInClient;
  let userId: string;
  const probe = recordingProbe();
  const changed = () =>
    probe.events
      .filter((e) => e.type === 'user_permissions_changed')
      .map((e) => (e.data as { userId: string }).userId);

  beforeAll(async () => {
    app = await startTestApp({ database, routers: [notes], modules: [probe.module] });
    admin = await app.loginAs(await app.createUser({ username: 'root', isSuperuser: true }));
    userId = (await app.createUser({ username: 'bob' })).id;
  });
  afterAll(() => app.close());
  beforeEach(() => {
    probe.events.length = 0;
  });

  async function createPermission(codename: string, description = ''): Promise<number> {
    const res = await admin.post(`${BASE}/permissions`, { codename, description });
    expect(res.status).toBe(201);
    return res.body.data.id;
  }

  it('refuses a non-superuser with 403 access.superuser_required and no token with 401', async () => {
    const bob = await app.loginAs({ username: 'bob', password: 'correct-horse-battery' });
    const res = await bob.get(`${BASE}/permissions`);
    expect(res.status).toBe(403);
    expect(res.body.detail[0].code).toBe('access.superuser_required');
    const anonymous = await app.get(`${BASE}/permissions`);
    expect(anonymous.status).toBe(401);
    expect(anonymous.body.detail[0].code).toBe('auth.not_authenticated');
  });

  it('creates, lists, updates and deletes permissions', async () => {
    const created = await admin.post(`${BASE}/permissions`, { codename: 'crud.one', description: 'first' });
    expect(created.status).toBe(201);
    expect(created.body.data).toMatchObject({
      codename: 'crud.one',
      description: 'first',
      label: 'crud.one',
      localizedDescription: 'first',
    });
    expect(created.body.data.labelKey).toBeUndefined();
    const id = created.body.data.id;
    const listed = await admin.get(`${BASE}/permissions`);
    expect(listed.body.data.map((p: { codename: string }) => p.codename)).toContain('crud.one');

    const updated = await admin.put(`${BASE}/permissions/${id}`, { description: 'changed' });
    expect(updated.status).toBe(200);
    expect(updated.body.data).toMatchObject({ id, codename: 'crud.one', description: 'changed' });

    const deleted = await admin.delete(`${BASE}/permissions/${id}`);
    expect(deleted.status).toBe(204);
    expect(deleted.text).toBe('');
    const after = await admin.get(`${BASE}/permissions`);
    expect(after.body.data.map((p: { id: number }) => p.id)).not.toContain(id);
    const again = await admin.delete(`${BASE}/permissions/${id}`);
    expect(again.status).toBe(404);
    expect(again.body.detail[0]).toMatchObject({ code: 'request.not_found', loc: ['path', 'perm_id'] });
  });

  it('answers 409 db.conflict for a duplicate codename or group name, on create and update', async () => {
    await createPermission('dup.perm');
    const res = await admin.post(`${BASE}/permissions`, { codename: 'dup.perm' });
    expect(res.status).toBe(409);
    expect(res.body.detail[0].code).toBe('db.conflict');
    const other = await createPermission('dup.other');
    const renamed = await admin.put(`${BASE}/permissions/${other}`, { codename: 'dup.perm' });
    expect(renamed.status).toBe(409);
    expect(renamed.body.detail[0].code).toBe('db.conflict');

    expect((await admin.post(`${BASE}/groups`, { name: 'dup-group' })).status).toBe(201);
    const group = await admin.post(`${BASE}/groups`, { name: 'dup-group' });
    expect(group.status).toBe(409);
    expect(group.body.detail[0].code).toBe('db.conflict');
  });

  it('answers 400 db.invalid_value for dangling permission or group ids, and saves nothing', async () => {
    const kept = await createPermission('dangle.kept');
    const group = await admin.post(`${BASE}/groups`, { name: 'dangle', permissionIds: [kept, 999999] });
    expect(group.status).toBe(400);
    expect(group.body.detail[0].code).toBe('db.invalid_value');
    const groups = await admin.get(`${BASE}/groups`);
    expect(groups.body.data.map((g: { name: string }) => g.name)).not.toContain('dangle');

    await admin.put(`${BASE}/users/${userId}/permissions`, { permissionIds: [kept] });
    const direct = await admin.put(`${BASE}/users/${userId}/permissions`, { permissionIds: [999998] });
    expect(direct.status).toBe(400);
    expect(direct.body.detail[0].code).toBe('db.invalid_value');
    // Atomic: the old links survive the refused replacement.
    const still = await admin.get(`${BASE}/users/${userId}/permissions`);
    expect(still.body.data.map((p: { id: number }) => p.id)).toEqual([kept]);

    const userGroups = await admin.put(`${BASE}/users/${userId}/groups`, { groupIds: [888888] });
    expect(userGroups.status).toBe(400);
    expect(userGroups.body.detail[0].code).toBe('db.invalid_value');
    await admin.put(`${BASE}/users/${userId}/permissions`, { permissionIds: [] });
  });

  it('answers 404 user.not_found for an unknown or malformed user id', async () => {
    for (const id of ['00000000-0000-4000-8000-000000000000', 'not-a-uuid']) {
      for (const res of [
        await admin.get(`${BASE}/users/${id}/groups`),
        await admin.put(`${BASE}/users/${id}/permissions`, { permissionIds: [] }),
        await admin.get(`${BASE}/users/${id}/effective`),
      ]) {
        expect(res.status).toBe(404);
        expect(res.body.detail[0]).toMatchObject({ code: 'user.not_found', loc: ['path', 'user_id'] });
      }
    }
  });

  it('answers 422 for a malformed id or body, never 500', async () => {
    const res = await admin.put(`${BASE}/permissions/abc`, { description: 'x' });
    expect(res.status).toBe(422);
    expect(res.body.detail[0]).toMatchObject({ code: 'request.validation_error', loc: ['path', 'perm_id'] });
    const huge = await admin.put(`${BASE}/groups/99999999999`, {});
    expect(huge.status).toBe(422);
    const badIds = await admin.post(`${BASE}/groups`, { name: 'bad-ids', permissionIds: ['x'] });
    expect(badIds.status).toBe(422);
    expect(badIds.body.detail[0].loc).toEqual(['body', 'permissionIds', 0]);
  });

  it('lists every group with its own permissions, by codename, and an empty group with none', async () => {
    const [x, y, z] = [
      await createPermission('lst.z'),
      await createPermission('lst.x'),
      await createPermission('lst.y'),
    ];
    const make = async (name: string, permissionIds: number[]) =>
      (await admin.post(`${BASE}/groups`, { name, permissionIds })).body.data.id as number;
    const both = await make('lst-both', [x, y]);
    const one = await make('lst-one', [z]);
    const none = await make('lst-none', []);
    const listed = (await admin.get(`${BASE}/groups`)).body.data as {
      id: number;
      permissionIds: number[];
      permissions: { codename: string }[];
    }[];
    const of = (id: number) => listed.find((g) => g.id === id)!;
    expect(of(both).permissions.map((p) => p.codename)).toEqual(['lst.x', 'lst.z']);
    expect(of(both).permissionIds).toEqual([y, x]);
    expect(of(one).permissions.map((p) => p.codename)).toEqual(['lst.y']);
    expect(of(none)).toMatchObject({ permissionIds: [], permissions: [] });
  });

  it('creates a group with permissionIds and replaces them on PUT', async () => {
    const a = await createPermission('grp.a');
    const b = await createPermission('grp.b');
    const created = await admin.post(`${BASE}/groups`, {
      name: 'editors',
      description: 'Edit',
      permissionIds: [a, a],
    });
    expect(created.status).toBe(201);
    expect(created.body.data).toMatchObject({ name: 'editors', description: 'Edit', permissionIds: [a] });
    expect(created.body.data.permissions[0]).toMatchObject({ id: a, codename: 'grp.a' });
    const id = created.body.data.id;

    const updated = await admin.put(`${BASE}/groups/${id}`, { permissionIds: [b] });
    expect(updated.status).toBe(200);
    expect(updated.body.data).toMatchObject({ name: 'editors', description: 'Edit', permissionIds: [b] });
    const listed = await admin.get(`${BASE}/groups`);
    const group = listed.body.data.find((g: { id: number }) => g.id === id);
    expect(group.permissions.map((p: { codename: string }) => p.codename)).toEqual(['grp.b']);

    const missing = await admin.put(`${BASE}/groups/424242`, { name: 'x' });
    expect(missing.status).toBe(404);
    expect(missing.body.detail[0]).toMatchObject({ code: 'request.not_found', loc: ['path', 'group_id'] });
  });

  it('assigns groups and direct permissions and computes the effective union', async () => {
    const viaGroup = await createPermission('eff.group');
    const shared = await createPermission('eff.shared');
    const direct = await createPermission('eff.direct');
    const group = await admin.post(`${BASE}/groups`, { name: 'eff', permissionIds: [viaGroup, shared] });
    const carol = await app.createUser({ username: 'carol' });

    const groups = await admin.put(`${BASE}/users/${carol.id}/groups`, { groupIds: [group.body.data.id] });
    expect(groups.status).toBe(200);
    expect(groups.body.data.map((g: { name: string }) => g.name)).toEqual(['eff']);
    expect((await admin.get(`${BASE}/users/${carol.id}/groups`)).body.data[0].permissionIds).toEqual([
      viaGroup,
      shared,
    ]);

    const perms = await admin.put(`${BASE}/users/${carol.id}/permissions`, {
      permissionIds: [direct, shared],
    });
    expect(perms.status).toBe(200);
    expect(perms.body.data.map((p: { codename: string }) => p.codename)).toEqual([
      'eff.direct',
      'eff.shared',
    ]);
    expect((await admin.get(`${BASE}/users/${carol.id}/permissions`)).body.data).toHaveLength(2);

    const effective = await admin.get(`${BASE}/users/${carol.id}/effective`);
    expect(effective.status).toBe(200);
    expect(effective.body.data).toEqual({ permissions: ['eff.direct', 'eff.group', 'eff.shared'] });
    // The port answers the same (the guard and GET /auth/user use it).
    expect(await app.app.runtime.ports.get('permissions').effectivePermissions(carol.id)).toEqual([
      'eff.direct',
      'eff.group',
      'eff.shared',
    ]);

    // Replacing with an empty list removes every link.
    await admin.put(`${BASE}/users/${carol.id}/groups`, { groupIds: [] });
    expect((await admin.get(`${BASE}/users/${carol.id}/effective`)).body.data.permissions).toEqual([
      'eff.direct',
      'eff.shared',
    ]);
  });

  it('emits user_permissions_changed to each user concerned', async () => {
    const perm = await createPermission('evt.perm');
    const dave = await app.createUser({ username: 'dave' });
    const erin = await app.createUser({ username: 'erin' });
    const group = (await admin.post(`${BASE}/groups`, { name: 'evt' })).body.data.id;
    expect(changed()).toEqual([]); // creating an empty group concerns nobody

    await admin.put(`${BASE}/users/${dave.id}/groups`, { groupIds: [group] });
    await admin.put(`${BASE}/users/${erin.id}/groups`, { groupIds: [group] });
    expect(changed()).toEqual([dave.id, erin.id]);

    probe.events.length = 0;
    await admin.put(`${BASE}/users/${dave.id}/permissions`, { permissionIds: [perm] });
    expect(changed()).toEqual([dave.id]);

    probe.events.length = 0;
    await admin.put(`${BASE}/groups/${group}`, { description: 'only the description' });
    expect(changed().sort()).toEqual([dave.id, erin.id].sort());

    probe.events.length = 0;
    await admin.delete(`${BASE}/permissions/${perm}`);
    expect(changed()).toEqual([dave.id]);

    probe.events.length = 0;
    expect((await admin.delete(`${BASE}/groups/${group}`)).status).toBe(204);
    expect(changed().sort()).toEqual([dave.id, erin.id].sort());
    expect((await admin.get(`${BASE}/users/${dave.id}/groups`)).body.data).toEqual([]);

    probe.events.length = 0;
    await admin.put(`${BASE}/users/${dave.id}/groups`, { groupIds: [424242] });
    expect(changed()).toEqual([]); // a refused change emits nothing
  });

  it('adds labelKey and descriptionKey when the catalogs hold them, translated in the request language', async () => {
    await createPermission('reports.view', 'stored text');
    await admin.post(`${BASE}/groups`, { name: 'auditors', description: 'They audit' });
    const en = await admin.get(`${BASE}/permissions`);
    expect(en.body.data.find((p: { codename: string }) => p.codename === 'reports.view')).toMatchObject({
      label: 'View reports',
      localizedDescription: 'Open the reports page',
      labelKey: 'permissions.reports.view.label',
      descriptionKey: 'permissions.reports.view.description',
      description: 'stored text',
    });
    const group = (await admin.get(`${BASE}/groups`)).body.data.find(
      (g: { name: string }) => g.name === 'auditors',
    );
    expect(group).toMatchObject({
      label: 'Auditors',
      labelKey: 'groups.auditors.label',
      localizedDescription: 'They audit',
    });
    expect(group.descriptionKey).toBeUndefined();
  });

  it('lists the project routes at /applications, without core routes', async () => {
    const res = await admin.get(`${BASE}/applications`);
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual([
      {
        path: '/api/notes/', // as mounted and documented (the kernel keeps a route's trailing slash)
        name: 'notes.get',
        methods: ['GET'],
        summary: 'List notes',
        tags: ['notes'],
        permissions: ['notes.read'],
      },
      {
        path: '/api/notes/{noteId}/archive',
        name: 'notes.post_noteId_archive',
        methods: ['POST'],
        summary: null,
        tags: ['notes'],
        permissions: ['notes.read', 'notes.write'],
      },
    ]);
  });
});

describeEachDatabase('permission labels in German', (database) => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ database, settings: { default_locale: 'de' } });
  });
  afterAll(() => app.close());

  it('translates the label into the request language', async () => {
    const admin = await app.loginAs(await app.createUser({ username: 'root', isSuperuser: true }));
    const res = await admin.post(`${BASE}/permissions`, { codename: 'reports.view', description: 'x' });
    expect(res.status).toBe(201);
    // German label from the de catalog; the description falls back to English, then to the stored text.
    expect(res.body.data).toMatchObject({
      label: 'Berichte ansehen',
      localizedDescription: 'Open the reports page',
    });
  });
});

describeEachDatabase('permissions router disabled', (database) => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ database, settings: { disable_core_routers: ['permissions'] } });
  });
  afterAll(() => app.close());

  it('does not mount the routes but keeps the permissions port', async () => {
    const admin = await app.loginAs(await app.createUser({ username: 'root', isSuperuser: true }));
    expect((await admin.get(`${BASE}/permissions`)).status).toBe(404);
    const user = await app.createUser({ username: 'plain' });
    expect(await app.app.runtime.ports.get('permissions').effectivePermissions(user.id)).toEqual([]);
  });
});
