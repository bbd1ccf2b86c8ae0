import { describeEachCache, describeEachDatabase, startTestApp, type TestApp } from '../testing/index.js';

describeEachDatabase('Per-address rate limit', (database) => {
  describeEachCache('auth_rate_limit', (cache) => {
    // Both caches share the block's database: names carry the cache kind.
    let app: TestApp;
    beforeAll(async () => {
      app = await startTestApp({
        database,
        cache,
        settings: { auth_rate_limit: 3, auth_rate_window_seconds: 30, registration_enabled: true },
      });
    });
    afterAll(() => app.close());

    it('refuses the request after auth_rate_limit logins with 429 auth.rate_limited and Retry-After', async () => {
      const user = await app.createUser({ username: `alice-${cache.kind}` });
      for (let i = 0; i < 3; i += 1) {
        const res = await app.post('/api/auth/token', undefined, {
          form: { username: user.username, password: 'wrong-one' },
        });
        expect(res.status).toBe(401);
      }
      const refused = await app.post('/api/auth/token', undefined, {
        form: { username: user.username, password: user.password },
      });
      expect(refused.status).toBe(429);
      expect(refused.body.detail[0]).toMatchObject({ code: 'auth.rate_limited' });
      const retry = Number(refused.headers.get('retry-after'));
      expect(retry).toBeGreaterThanOrEqual(1);
      expect(retry).toBeLessThanOrEqual(30);
    });

    it('limits registration on its own counter', async () => {
      for (let i = 0; i < 3; i += 1) {
        const res = await app.post('/api/auth/register', {
          username: `reg${i}-${cache.kind}`,
          password: 'long-enough-password',
        });
        expect(res.status).toBe(201);
      }
      const refused = await app.post('/api/auth/register', {
        username: `reg9-${cache.kind}`,
        password: 'long-enough-password',
      });
      expect(refused.status).toBe(429);
      expect(refused.body.detail[0].code).toBe('auth.rate_limited');
      expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
    });

    it('is offered to other features through the rateLimiter port', async () => {
      const limiter = app.app.runtime.ports.get('rateLimiter');
      for (let i = 0; i < 3; i += 1) await limiter.hit('203.0.113.9', 'mfa');
      await expect(limiter.hit('203.0.113.9', 'mfa')).rejects.toMatchObject({
        code: 'auth.rate_limited',
        status: 429,
      });
      await expect(limiter.hit('203.0.113.10', 'mfa')).resolves.toBeUndefined();
    });
  });
});
