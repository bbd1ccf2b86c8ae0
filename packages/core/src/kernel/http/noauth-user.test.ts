import { describeEachDatabase, startTestApp, type TestApp } from '../../testing/index.js';
import { defineRouter } from '../router.js';

/**
 * `global_noauth` (SPEC "Configuration": development only) lets requests through routes that need a user
 * without one. The route's types promise `ctx.user` there, so reading it answers the uniform 401 instead of
 * a TypeError turned 500; `ctx.caller` is the user or null on any route.
 */
describeEachDatabase('ctx.user with global_noauth', (database) => {
  let app: TestApp;
  beforeAll(async () => {
    const closed = defineRouter({ prefix: '/closed', permissions: ['notes.read'] });
    closed.get('/who', {}, (ctx) => ({ username: ctx.user.username }));
    closed.get('/caller', {}, (ctx) => ({ caller: ctx.caller }));
    closed.get('/open', {}, () => ({ open: true }));
    app = await startTestApp({ database, routers: [closed], settings: { global_noauth: true } });
  });
  afterAll(() => app.close());

  it('answers 401 auth.not_authenticated when a handler reads ctx.user', async () => {
    const res = await app.get('/api/closed/who');
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe('Bearer');
    expect(res.body.detail[0]).toMatchObject({
      code: 'auth.not_authenticated',
      loc: ['header', 'Authorization'],
    });
  });

  it('gives ctx.caller as null and lets routes that do not read the user through', async () => {
    expect((await app.get('/api/closed/caller')).body.data).toEqual({ caller: null });
    expect((await app.get('/api/closed/open')).body.data).toEqual({ open: true });
  });

  it('answers the core routes that need a user with 401, not 500', async () => {
    for (const path of ['/api/auth/user', '/api/mfa/status', '/api/auth/user/settings']) {
      const res = await app.get(path);
      expect({ path, status: res.status, code: res.body.detail?.[0]?.code }).toEqual({
        path,
        status: 401,
        code: 'auth.not_authenticated',
      });
    }
  });
});
