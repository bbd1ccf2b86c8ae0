import { eq } from 'drizzle-orm';
import type { CoreTables } from '../kernel/db/tables.js';
import {
  describeEachCache,
  describeEachDatabase,
  startTestApp,
  type TestApp,
  type TestResponse,
} from '../testing/index.js';

const login = (app: TestApp, username: string, password: string) =>
  app.post('/api/auth/token', undefined, { form: { username, password } });

const statuses = (results: TestResponse[]) =>
  results.reduce<Record<number, number>>((acc, r) => ({ ...acc, [r.status]: (acc[r.status] ?? 0) + 1 }), {});

// SPEC "Account login lock": attempts are counted atomically before the password check, so parallel guesses
// never exceed login_max_attempts. An attempt that finds every slot taken by attempts still in flight waits
// for them instead of being answered as a wrong password (docs/security.md "Concurrent logins").
describeEachDatabase('Concurrent logins', (database) => {
  describeEachCache('with each cache', (cache) => {
    let app: TestApp;
    let t: CoreTables;
    const row = async (id: string) =>
      (await app.app.runtime.authDb.orm.select().from(t.user).where(eq(t.user.id, id)))[0]!;
    beforeAll(async () => {
      app = await startTestApp({
        database,
        cache,
        settings: { login_max_attempts: 5, login_lockout_minutes: 1 },
      });
      t = app.app.runtime.tables.core as unknown as CoreTables;
    });
    afterAll(() => app.close());

    it('20 parallel logins with the right password all succeed', async () => {
      const svc = await app.createUser({ username: `service-account-${cache.kind}` });
      const results = await Promise.all(
        Array.from({ length: 20 }, () => login(app, svc.username, svc.password)),
      );
      expect(statuses(results)).toEqual({ 200: 20 });
      const stored = await row(svc.id);
      expect(stored.failedLoginCount).toBe(0);
      expect(stored.lockedUntil).toBeNull();
    });

    it('with four failures counted, 20 parallel right logins pass one slot at a time and all succeed', async () => {
      const una = await app.createUser({ username: `una-${cache.kind}` });
      for (let i = 0; i < 4; i += 1)
        expect((await login(app, `una-${cache.kind}`, 'wrong-password')).status).toBe(401);
      expect((await row(una.id)).failedLoginCount).toBe(4);
      const results = await Promise.all(
        Array.from({ length: 20 }, () => login(app, `una-${cache.kind}`, una.password)),
      );
      expect(statuses(results)).toEqual({ 200: 20 });
      expect((await row(una.id)).failedLoginCount).toBe(0);
      expect((await row(una.id)).lockedUntil).toBeNull();
    });

    it('20 parallel wrong guesses lock the account; no attempt is counted after the lock', async () => {
      const vic = await app.createUser({ username: `vic-${cache.kind}` });
      const results = await Promise.all(
        Array.from({ length: 20 }, () => login(app, `vic-${cache.kind}`, 'wrong-password')),
      );
      expect(statuses(results)).toEqual({ 401: 20 });
      const stored = await row(vic.id);
      expect(stored.lockedUntil!.getTime()).toBeGreaterThan(Date.now() + 30_000);
      // The lock resets the counter; a further attempt while locked is not admitted, so nothing is counted.
      expect(stored.failedLoginCount).toBe(0);
      expect((await login(app, `vic-${cache.kind}`, vic.password)).status).toBe(401);
      expect((await row(vic.id)).failedLoginCount).toBe(0);
    });

    it('five wrong passwords lock; right passwords in flight afterwards are refused and not counted', async () => {
      const wes = await app.createUser({ username: `wes-${cache.kind}` });
      await Promise.all(Array.from({ length: 5 }, () => login(app, `wes-${cache.kind}`, 'wrong-password')));
      const lockedUntil = (await row(wes.id)).lockedUntil!;
      expect(lockedUntil.getTime()).toBeGreaterThan(Date.now());
      const results = await Promise.all(
        Array.from({ length: 10 }, () => login(app, `wes-${cache.kind}`, wes.password)),
      );
      expect(statuses(results)).toEqual({ 401: 10 });
      const stored = await row(wes.id);
      expect(stored.failedLoginCount).toBe(0);
      expect(stored.lockedUntil!.getTime()).toBe(lockedUntil.getTime());
    });

    it('right and wrong passwords in flight together: every right one is answered 200 unless the account was locked by five wrong ones', async () => {
      const xia = await app.createUser({ username: `xia-${cache.kind}` });
      const attempts = [
        ...Array.from({ length: 2 }, () => 'wrong-password'),
        ...Array.from({ length: 12 }, () => xia.password),
      ];
      const results = await Promise.all(attempts.map((p) => login(app, `xia-${cache.kind}`, p)));
      // Two wrong ones can never reach the limit of five: no lock, so every right password succeeds.
      expect(results.filter((r, i) => attempts[i] === xia.password && r.status === 200)).toHaveLength(12);
      expect(results.filter((r, i) => attempts[i] !== xia.password && r.status === 401)).toHaveLength(2);
      expect((await row(xia.id)).lockedUntil).toBeNull();
    });
  });
});
