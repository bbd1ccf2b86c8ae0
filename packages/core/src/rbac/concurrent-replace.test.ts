import { describeEachDatabase, startTestApp, type LoggedInClient, type TestApp } from '../testing/index.js';

const BASE = '/api/admin/permissions';

// SPEC "Permissions and groups": the three PUT routes replace a set (a group's permissions, a user's groups,
// a user's direct permissions). Two replacements at once are two administrators (or two hosts) saving: each
// answers 200 and the set ends as one of them, never a 409 `db.conflict` from rows the other inserted meanwhile.
describeEachDatabase('replacing a set concurrently', (database) => {
  let app: TestApp;
  let admin: LoggedInClient;
  let userId: string;
  let groups: number[];
  let permissions: number[];

  beforeAll(async () => {
    app = await startTestApp({ database });
    admin = await app.loginAs(await app.createUser({ username: 'root', isSuperuser: true }));
    userId = (await app.createUser({ username: 'member' })).id;
    permissions = [];
    for (const codename of ['replace_a', 'replace_b']) {
      const res = await admin.post(`${BASE}/permissions`, { codename, description: codename });
      expect(res.status).toBe(201);
      permissions.push(res.body.data.id as number);
    }
    groups = [];
    for (const name of ['replace-a', 'replace-b']) {
      const res = await admin.post(`${BASE}/groups`, { name });
      expect(res.status).toBe(201);
      groups.push(res.body.data.id as number);
    }
  });
  afterAll(() => app.close());

  /** 20 rounds of 8 parallel replacements alternating between two one-element sets. */
  async function race(
    path: string,
    body: (i: number) => unknown,
    read: () => Promise<number[]>,
    sets: number[][],
  ) {
    for (let round = 0; round < 20; round++) {
      const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => admin.put(path, body(i))));
      expect(
        answers.map((res) => `${res.status} ${res.status === 200 ? '' : JSON.stringify(res.body)}`),
      ).toEqual(answers.map(() => '200 '));
      expect(sets).toContainEqual(await read());
    }
  }

  it("PUT /groups/{id}: the group's permissions", async () => {
    const group = groups[0]!;
    await race(
      `${BASE}/groups/${group}`,
      (i) => ({ permissionIds: [permissions[i % 2]] }),
      async () =>
        (await admin.get(`${BASE}/groups`)).body.data.find((g: { id: number }) => g.id === group)
          .permissionIds,
      permissions.map((id) => [id]),
    );
  });

  it("PUT /users/{id}/groups: the user's groups", async () => {
    await race(
      `${BASE}/users/${userId}/groups`,
      (i) => ({ groupIds: [groups[i % 2]] }),
      async () =>
        (await admin.get(`${BASE}/users/${userId}/groups`)).body.data.map((g: { id: number }) => g.id),
      groups.map((id) => [id]),
    );
  });

  it("PUT /users/{id}/permissions: the user's direct permissions", async () => {
    await race(
      `${BASE}/users/${userId}/permissions`,
      (i) => ({ permissionIds: [permissions[i % 2]] }),
      async () =>
        (await admin.get(`${BASE}/users/${userId}/permissions`)).body.data.map((p: { id: number }) => p.id),
      permissions.map((id) => [id]),
    );
  });
});
