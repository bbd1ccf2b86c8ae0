import { describeEachDatabase, startTestApp, type LoggedInClient, type TestApp } from '../testing/index.js';

// svc extension of SPEC-3 §6 (docs/organizations.md "A user's organizations"): the console's user page lists
// a user's memberships through `GET /admin/user/{user_id}/organizations`.
describeEachDatabase("A user's organizations for superusers", (database) => {
  let app: TestApp;
  let root: LoggedInClient;
  let alice: LoggedInClient;
  let aliceId: string;
  let bobId: string;
  beforeAll(async () => {
    app = await startTestApp({ database, settings: { organizations_enabled: true } });
    root = await app.loginAs(await app.createUser({ username: 'uo_root', isSuperuser: true }));
    const a = await app.createUser({ username: 'uo_alice' });
    aliceId = a.id;
    alice = await app.loginAs(a);
    bobId = (await app.createUser({ username: 'uo_bob' })).id;
  });
  afterAll(() => app.close());

  it("lists the user's memberships, oldest first, with the organization's id, slug and name", async () => {
    const first = await alice.post('/api/organizations', { name: 'Acme', slug: 'uo-acme' });
    expect(first.status).toBe(201);
    const second = await alice.post('/api/organizations', { name: 'Globex', slug: 'uo-globex' });
    const res = await root.get(`/api/admin/user/${aliceId}/organizations`);
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual([
      {
        organization: { id: first.body.data.id, slug: 'uo-acme', name: 'Acme' },
        role: 'owner',
        joinedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      },
      {
        organization: { id: second.body.data.id, slug: 'uo-globex', name: 'Globex' },
        role: 'owner',
        joinedAt: expect.any(String),
      },
    ]);
    // The joinedAt of the members list.
    const members = await root.get(`/api/organizations/${first.body.data.id}/members`);
    expect(members.body.data.items[0].joinedAt).toBe(res.body.data[0].joinedAt);
  });

  it('answers [] for a user without memberships and 404 user.not_found for an unknown user', async () => {
    const none = await root.get(`/api/admin/user/${bobId}/organizations`);
    expect(none.status).toBe(200);
    expect(none.body.data).toEqual([]);
    for (const id of ['00000000-0000-4000-8000-000000000000', 'not-a-uuid']) {
      const res = await root.get(`/api/admin/user/${id}/organizations`);
      expect(res.status).toBe(404);
      expect(res.body.detail[0]).toMatchObject({ code: 'user.not_found', loc: ['path', 'user_id'] });
    }
  });

  it('refuses users who are not superusers with 403 access.superuser_required', async () => {
    const res = await alice.get(`/api/admin/user/${bobId}/organizations`);
    expect(res.status).toBe(403);
    expect(res.body.detail[0]).toMatchObject({ code: 'access.superuser_required' });
  });
});

describeEachDatabase(
  "A user's organizations for superusers, with organizations_enabled false",
  (database) => {
    let app: TestApp;
    afterAll(() => app.close());

    it('answers 404 request.not_found: the route is not mounted', async () => {
      app = await startTestApp({ database, settings: { organizations_enabled: false } });
      const root = await app.loginAs(await app.createUser({ username: 'uo_off_root', isSuperuser: true }));
      const res = await root.get(`/api/admin/user/${root.user.id}/organizations`);
      expect(res.status).toBe(404);
      expect(res.body.detail[0]).toMatchObject({ code: 'request.not_found' });
    });
  },
);
