import { setTimeout as sleep } from 'node:timers/promises';
import { describeEachDatabase, startTestApp, type TestApp, type TestResponse } from '../testing/index.js';

const login = (app: TestApp, username: string, password: string) =>
  app.post('/api/auth/token', undefined, { form: { username, password } });
const refresh = (app: TestApp, token: string) =>
  app.post('/api/auth/refresh-token', { refresh_token: token });

/** Fires `count` logins `gapMs` apart while `change` runs; the refresh tokens of those that succeeded. */
async function loginsDuring(
  app: TestApp,
  user: { username: string; password: string },
  change: () => Promise<TestResponse>,
  count = 8,
  gapMs = 15,
): Promise<{ changed: TestResponse; refreshTokens: string[] }> {
  const logins: Promise<TestResponse>[] = [];
  const changed = change();
  for (let i = 0; i < count; i += 1) {
    logins.push(login(app, user.username, user.password));
    await sleep(gapMs);
  }
  const results = await Promise.all(logins);
  return {
    changed: await changed,
    refreshTokens: results.filter((r) => r.status === 200).map((r) => r.body.refresh_token as string),
  };
}

// SPEC "Authentication" 8 and "Refresh token and login": a password change (or a deactivation) revokes the
// logins made before it. A login that verified the old password while the change ran must not keep a
// refresh token that survives the change, whatever the interleaving.
describeEachDatabase('Logins racing a password change or a deactivation', (database) => {
  let app: TestApp;
  let admin: Awaited<ReturnType<TestApp['loginAs']>>;
  beforeAll(async () => {
    app = await startTestApp({ database, settings: { login_max_attempts: 50 } });
    admin = await app.loginAs(await app.createUser({ username: 'root', isSuperuser: true }));
  });
  afterAll(() => app.close());

  it('no refresh token of a login made with the old password works after POST /auth/user/password', async () => {
    let survivors = 0;
    for (let trial = 0; trial < 6; trial += 1) {
      const user = await app.createUser({ username: `own-${trial}` });
      const client = await app.loginAs(user);
      const { changed, refreshTokens } = await loginsDuring(app, user, () =>
        client.post('/api/auth/user/password', {
          currentPassword: user.password,
          newPassword: 'a-brand-new-password-1',
        }),
      );
      expect(changed.status).toBe(204);
      for (const token of refreshTokens) if ((await refresh(app, token)).status === 200) survivors += 1;
    }
    expect(survivors).toBe(0);
  });

  it('no refresh token of a login made with the old password works after an admin password change', async () => {
    let survivors = 0;
    for (let trial = 0; trial < 6; trial += 1) {
      const user = await app.createUser({ username: `adm-${trial}` });
      const { changed, refreshTokens } = await loginsDuring(app, user, () =>
        admin.patch(`/api/admin/user/${user.id}`, { password: 'a-brand-new-password-2' }),
      );
      expect(changed.status).toBe(200);
      for (const token of refreshTokens) if ((await refresh(app, token)).status === 200) survivors += 1;
    }
    expect(survivors).toBe(0);
  });

  it('no refresh token of a login racing a deactivation works after it', async () => {
    let survivors = 0;
    for (let trial = 0; trial < 6; trial += 1) {
      const user = await app.createUser({ username: `off-${trial}` });
      const { changed, refreshTokens } = await loginsDuring(app, user, () =>
        admin.patch(`/api/admin/user/${user.id}`, { isActive: false }),
      );
      expect(changed.status).toBe(200);
      for (const token of refreshTokens) if ((await refresh(app, token)).status === 200) survivors += 1;
    }
    expect(survivors).toBe(0);
  });
});

// SPEC "Refresh token and login": rotation spends a token and issues its successor as one step, so a
// revocation (logout, reuse after the grace window) can never land between the two and leave the successor
// valid.
describeEachDatabase('Refresh rotation against concurrent revocation', (database) => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ database, settings: { refresh_reuse_grace_seconds: 0 } });
  });
  afterAll(() => app.close());

  it('a logout racing a refresh of the same login leaves no working successor (40 trials)', async () => {
    const user = await app.createUser({ username: 'lena' });
    let survivors = 0;
    for (let trial = 0; trial < 40; trial += 1) {
      const client = await app.loginAs(user);
      const [rotated, loggedOut] = await Promise.all([
        refresh(app, client.refreshToken),
        client.post('/api/auth/logout', { refresh_token: client.refreshToken }),
      ]);
      expect(loggedOut.status).toBe(204);
      if (rotated.status === 200 && (await refresh(app, rotated.body.refresh_token)).status === 200) {
        survivors += 1;
      }
    }
    expect(survivors).toBe(0);
  });

  it('with grace 0, two parallel presentations of one token revoke the login: the successor is refused (50 trials)', async () => {
    const user = await app.createUser({ username: 'milo' });
    let survivors = 0;
    for (let trial = 0; trial < 50; trial += 1) {
      const client = await app.loginAs(user);
      const results = await Promise.all([
        refresh(app, client.refreshToken),
        refresh(app, client.refreshToken),
      ]);
      const winners = results.filter((r) => r.status === 200);
      expect(winners.length).toBeLessThanOrEqual(1);
      for (const r of results.filter((x) => x.status !== 200)) {
        expect(r.body.detail[0].code).toBe('auth.refresh_token_revoked');
      }
      if (winners[0] && (await refresh(app, winners[0].body.refresh_token)).status === 200) survivors += 1;
    }
    expect(survivors).toBe(0);
  });
});
