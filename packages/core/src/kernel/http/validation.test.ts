import { z } from 'zod';
import { defineRouter } from '../router.js';
import { describeEachDatabase } from '../../testing/each.js';
import { startTestApp, type TestApp } from '../../testing/test-app.js';

// SPEC "Errors", uniform format: a value outside its bounds carries the bound in `params`, so a client can
// say "at least 3 characters" in its own words (docs/errors.md "Validation errors").
function boundedRouter() {
  const router = defineRouter({ prefix: '/bounded', public: true });
  router.post(
    '/',
    {
      body: z.object({
        title: z.string().min(3).max(10),
        count: z.number().int().min(1).max(5),
        ratio: z.number().gt(0).lt(1),
        tags: z.array(z.string()).max(2),
      }),
    },
    (ctx) => ctx.body,
  );
  router.get(
    '/page',
    { query: z.object({ size: z.coerce.number().int().min(10).max(100) }) },
    (ctx) => ctx.query,
  );
  return router;
}

describeEachDatabase('validation errors carry their bounds', (database) => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ database, routers: [boundedRouter()] });
  });
  afterAll(() => app.close());

  it('gives params.min and params.max of strings, numbers and lists', async () => {
    const res = await app.post('/api/bounded/', { title: 'ab', count: 9, ratio: 0.5, tags: ['a', 'b', 'c'] });
    expect(res.status).toBe(422);
    expect(res.body.detail).toEqual([
      expect.objectContaining({
        loc: ['body', 'title'],
        type: 'too_small',
        code: 'request.validation_error',
        params: { min: 3 },
      }),
      expect.objectContaining({ loc: ['body', 'count'], type: 'too_big', params: { max: 5 } }),
      expect.objectContaining({ loc: ['body', 'tags'], type: 'too_big', params: { max: 2 } }),
    ]);
    const long = await app.post('/api/bounded/', { title: 'x'.repeat(11), count: 0, ratio: 0.5, tags: [] });
    expect(long.body.detail).toEqual([
      expect.objectContaining({ loc: ['body', 'title'], params: { max: 10 } }),
      expect.objectContaining({ loc: ['body', 'count'], params: { min: 1 } }),
    ]);
  });

  it('says when a bound is exclusive', async () => {
    const res = await app.post('/api/bounded/', { title: 'abc', count: 1, ratio: 1, tags: [] });
    expect(res.status).toBe(422);
    expect(res.body.detail).toEqual([
      expect.objectContaining({
        loc: ['body', 'ratio'],
        type: 'too_big',
        params: { max: 1, inclusive: false },
      }),
    ]);
  });

  it('bounds query values too, and keeps other validation errors without params', async () => {
    const res = await app.get('/api/bounded/page?size=5');
    expect(res.status).toBe(422);
    expect(res.body.detail).toEqual([
      expect.objectContaining({ loc: ['query', 'size'], type: 'too_small', params: { min: 10 } }),
    ]);
    const missing = await app.get('/api/bounded/page');
    expect(missing.body.detail[0]).toMatchObject({ loc: ['query', 'size'] });
    expect(missing.body.detail[0]).not.toHaveProperty('params');
  });
});
