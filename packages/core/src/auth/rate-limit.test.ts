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

// SPEC "Limits": the rate limit is per client address. X-Forwarded-For from a trusted proxy (loopback by
// default, SPEC "Command-line interface" --forwarded-allow-ips) names it, but only a valid IP address does:
// anything else falls back to the peer's address, so a forged header is no way around the limit.
describeEachDatabase('Client address of the rate limit', (database) => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ database, settings: { auth_rate_limit: 3, auth_rate_window_seconds: 30 } });
  });
  afterAll(() => app.close());
  const loginFrom = (forwardedFor: string) =>
    app.post('/api/auth/token', undefined, {
      form: { username: 'nobody', password: 'wrong-password' },
      headers: { 'X-Forwarded-For': forwardedFor },
    });

  it('an X-Forwarded-For that is not an IP address counts on the peer address', async () => {
    const forged = ['not-an-ip', 'evil.example.com', 'x'.repeat(4000), '999.1.1.1'];
    const statuses: number[] = [];
    for (const value of forged) statuses.push((await loginFrom(value)).status);
    expect(statuses).toEqual([401, 401, 401, 429]);
  });

  it('valid addresses from a trusted proxy are counted apart, one client each', async () => {
    for (const ip of ['203.0.113.1', '203.0.113.2', '2001:db8::1']) {
      for (let i = 0; i < 3; i += 1) expect((await loginFrom(ip)).status).toBe(401);
      expect((await loginFrom(ip)).status).toBe(429);
    }
  });
});
