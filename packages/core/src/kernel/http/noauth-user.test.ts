import { describeEachDatabase, startTestApp, type TestApp } from '../../testing/index.js';
import { defineRouter } from '../router.js';

/**
 * `global_noauth` (SPEC "Configuration": development only) lets requests through routes that need a user
 * without one. A project handler sees null (`ctx.caller` says so in its type); the core routes that act for
 * their user answer the uniform 401 instead of failing on the missing user with a 500.
 */
describeEachDatabase('ctx.user with global_noauth', (database) => {
  let app: TestApp;
  beforeAll(async () => {
    const closed = defineRouter({ prefix: '/closed', permissions: ['notes.read'] });
    closed.get('/who', {}, (ctx) => ({ user: (ctx.user as unknown) ?? null, caller: ctx.caller }));
    app = await startTestApp({ database, routers: [closed], settings: { global_noauth: true } });
  });
  afterAll(() => app.close());

  it('gives a project handler no user, as ctx.caller says', async () => {
    const res = await app.get('/api/closed/who');
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({ user: null, caller: null });
  });

  it('answers the core routes that act for their user with 401, not 500', async () => {
    for (const path of ['/api/auth/user', '/api/mfa/status', '/api/auth/user/settings']) {
      const res = await app.get(path);
      expect({ path, status: res.status, code: res.body.detail?.[0]?.code }).toEqual({
        path,
        status: 401,
        code: 'auth.not_authenticated',
      });
      expect(res.headers.get('www-authenticate')).toBe('Bearer');
    }
  });
});
