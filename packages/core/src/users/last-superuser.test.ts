import { and, eq } from 'drizzle-orm';
import type { CoreTables } from '../kernel/db/tables.js';
import { describeEachDatabase } from '../testing/each.js';
import { startTestApp, type LoggedInClient, type TestApp, type TestResponse } from '../testing/test-app.js';
import { createUserManager, UserManagementError } from './manage.js';

const TRIALS = 20;

// SPEC "User administration": a superuser cannot demote, deactivate or delete themselves, so the service always
// keeps one active superuser. Two superusers acting on each other at the same time must not both win: each one's
// guard saw the other still a superuser, and without one serialised check the pair leaves none.
describeEachDatabase('The last active superuser', (database) => {
  let app: TestApp;
  let tables: CoreTables;
  let orm: any;

  const activeSuperusers = async (): Promise<number> =>
    (
      await orm
        .select({ id: tables.user.id })
        .from(tables.user)
        .where(and(eq(tables.user.isSuperuser, true), eq(tables.user.isActive, true)))
    ).length;

  /** Two fresh superusers, logged in, and no other active superuser (earlier survivors are demoted directly). */
  async function pairOfSuperusers(label: string): Promise<[LoggedInClient, LoggedInClient]> {
    await orm.update(tables.user).set({ isSuperuser: false });
    const a = await app.createUser({ username: `${label}_a`, isSuperuser: true });
    const b = await app.createUser({ username: `${label}_b`, isSuperuser: true });
    return [await app.loginAs(a), await app.loginAs(b)];
  }

  beforeAll(async () => {
    app = await startTestApp({ database });
    tables = app.app.runtime.tables.core as unknown as CoreTables;
    orm = app.app.runtime.authDb.orm;
  });
  afterAll(() => app.close());

  // The loser of a race answers one of these: refused by the rule, or (when it came second) by the guard,
  // which by then sees its caller demoted, deactivated or deleted.
  const REFUSALS = [
    'user.last_superuser',
    'access.superuser_required',
    'user.disabled',
    'user.not_found',
  ] as const;

  const cases: [string, (actor: LoggedInClient, targetId: string) => Promise<TestResponse>][] = [
    ['demote', (actor, id) => actor.patch(`/api/admin/user/${id}`, { isSuperuser: false })],
    ['deactivate', (actor, id) => actor.patch(`/api/admin/user/${id}`, { isActive: false })],
    ['delete', (actor, id) => actor.delete(`/api/admin/user/${id}`)],
  ];

  it.each(cases)(
    `two superusers who %s each other at the same time leave one active superuser (${TRIALS} trials)`,
    async (name, act) => {
      for (let trial = 0; trial < TRIALS; trial++) {
        const [a, b] = await pairOfSuperusers(`${name}${trial}`);
        const answers = await Promise.all([act(a, b.user.id), act(b, a.user.id)]);
        expect(await activeSuperusers()).toBe(1);
        const won = answers.filter((res) => res.status < 300);
        expect(won).toHaveLength(1);
        const lost = answers.find((res) => res.status >= 300)!;
        expect(REFUSALS).toContain(lost.body.detail[0].code);
      }
    },
    60_000,
  );

  it('refuses to remove the one active superuser with 400 user.last_superuser when no caller is a superuser', async () => {
    // With global_noauth the routes act without a user; the last active superuser still stays.
    const open = await startTestApp({ database, settings: { global_noauth: true } });
    try {
      await orm.update(tables.user).set({ isSuperuser: false });
      const only = await open.createUser({ username: 'only_super', isSuperuser: true });
      const plain = await open.createUser({ username: 'plain_user' });
      for (const [body, field] of [
        [{ isSuperuser: false }, 'isSuperuser'],
        [{ isActive: false }, 'isActive'],
      ] as const) {
        const res = await open.patch(`/api/admin/user/${only.id}`, body);
        expect(res.status).toBe(400);
        expect(res.body.detail[0]).toMatchObject({ code: 'user.last_superuser', loc: ['body', field] });
      }
      const gone = await open.delete(`/api/admin/user/${only.id}`);
      expect(gone.status).toBe(400);
      expect(gone.body.detail[0]).toMatchObject({ code: 'user.last_superuser', loc: ['path', 'user_id'] });
      expect(await activeSuperusers()).toBe(1);
      // Other changes to the last superuser, and any change to other users, go through.
      expect((await open.patch(`/api/admin/user/${only.id}`, { firstName: 'Still' })).status).toBe(200);
      expect((await open.patch(`/api/admin/user/${plain.id}`, { isActive: false })).status).toBe(200);
      // With a second active superuser, the first may go.
      expect(
        (await open.patch(`/api/admin/user/${plain.id}`, { isActive: true, isSuperuser: true })).status,
      ).toBe(200);
      expect((await open.patch(`/api/admin/user/${only.id}`, { isSuperuser: false })).status).toBe(200);
      expect(await activeSuperusers()).toBe(1);
    } finally {
      await open.close();
    }
  });

  it('svc users update and delete refuse to remove the last active superuser, also when run in parallel', async () => {
    const manager = () =>
      createUserManager({
        db: app.app.runtime.authDb,
        tables,
        hashPassword: async (password) => `not-a-hash:${password}`,
        now: () => new Date(),
      });
    await orm.update(tables.user).set({ isSuperuser: false });
    await app.createUser({ username: 'cli_one', isSuperuser: true });
    await app.createUser({ username: 'cli_two', isSuperuser: true });
    // Two shells, one command each: at most one of the two superusers may lose the flag.
    const results = await Promise.allSettled([
      manager().update('cli_one', { isSuperuser: false }),
      manager().update('cli_two', { isActive: false }),
    ]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    const refused = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
    expect(refused.reason).toBeInstanceOf(UserManagementError);
    expect(refused.reason.reason).toBe('last_superuser');
    expect(await activeSuperusers()).toBe(1);

    const [survivor] = await orm
      .select({ username: tables.user.username })
      .from(tables.user)
      .where(and(eq(tables.user.isSuperuser, true), eq(tables.user.isActive, true)));
    await expect(manager().remove(survivor.username)).rejects.toMatchObject({ reason: 'last_superuser' });
    await expect(manager().update(survivor.username, { isSuperuser: false })).rejects.toMatchObject({
      reason: 'last_superuser',
    });
    expect(await activeSuperusers()).toBe(1);
  });
});
