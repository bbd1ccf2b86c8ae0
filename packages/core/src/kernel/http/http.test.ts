import { get } from 'node:http';
import { z } from 'zod';
import { SvcError } from '../errors/svc-error.js';
import { defineRouter } from '../router.js';
import { describeEachDatabase } from '../../testing/each.js';
import { startTestApp, type TestApp } from '../../testing/test-app.js';

function projectRouters() {
  const open = defineRouter({ prefix: '/open', public: true, tags: ['open'] });
  open.get('/ping', { summary: 'Ping' }, () => ({ pong: true }));
  open.post(
    '/echo/:itemId',
    {
      params: z.object({ itemId: z.coerce.number().int() }),
      query: z.object({ flag: z.enum(['a', 'b']).optional() }),
      body: z.object({ name: z.string().min(2), count: z.number().int().max(10) }),
      status: 201,
    },
    (ctx) => ({ itemId: ctx.params.itemId, name: ctx.body.name, flag: ctx.query.flag ?? null }),
  );
  open.get('/boom', {}, () => {
    throw new Error('secret internals');
  });
  open.get('/coded', {}, () => {
    throw new SvcError('auth.password_too_short', { loc: ['body', 'password'], params: { min_length: 12 } });
  });
  open.delete('/gone', { status: 204 }, () => undefined);
  open.get('/bare', { envelope: false }, () => ({ bare: true }));
  open.get('/requestid', {}, (ctx) => ({ id: ctx.requestId }));
  open.get('/text', {}, () => ({ text: 'Zoë, 漢字 🙂' }));
  const other = defineRouter({ prefix: '/other', public: true, name: 'other' });
  other.get('/x', {}, () => ({ x: 1 }));
  const closed = defineRouter({ prefix: '/closed' });
  closed.get('/', {}, () => ({ secret: true }));
  return [open, other, closed];
}

describeEachDatabase('HTTP kernel', (database) => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ database, routers: projectRouters() });
  });
  afterAll(() => app.close());

  it('wraps 2xx JSON in the envelope', async () => {
    const res = await app.get('/api/open/ping');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, message: null, data: { pong: true } });
    expect(res.headers.get('content-type')).toMatch(/application\/json/);
  });

  it('validates params, query and body with zod, answering 422 items with loc, type and code', async () => {
    const ok = await app.post('/api/open/echo/7?flag=a', { name: 'ab', count: 1 });
    expect(ok.status).toBe(201);
    expect(ok.body.data).toEqual({ itemId: 7, name: 'ab', flag: 'a' });
    const bad = await app.post('/api/open/echo/x?flag=c', { count: 11 });
    expect(bad.status).toBe(422);
    const locs = bad.body.detail.map((d: { loc: unknown[] }) => d.loc.join('.'));
    expect(locs).toEqual(['path.itemId']); // params fail first
    const badBody = await app.post('/api/open/echo/1', { count: 11 });
    expect(badBody.status).toBe(422);
    expect(badBody.body.detail).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ loc: ['body', 'name'], type: 'missing', code: 'request.validation_error' }),
        expect.objectContaining({ loc: ['body', 'count'], code: 'request.validation_error' }),
      ]),
    );
    for (const item of badBody.body.detail) expect(typeof item.msg).toBe('string');
  });

  it('answers malformed JSON with 400 request.invalid_json and a huge body with 413', async () => {
    const res = await app.request('POST', '/api/open/echo/1', {
      raw: { contentType: 'application/json', data: '{"name": ' },
    });
    expect(res.status).toBe(400);
    expect(res.body.detail[0]).toMatchObject({ code: 'request.invalid_json', loc: ['body'] });
    const huge = await app.request('POST', '/api/open/echo/1', {
      raw: { contentType: 'application/json', data: JSON.stringify({ name: 'x'.repeat(2 * 1024 * 1024) }) },
    });
    expect(huge.status).toBe(413);
    expect(huge.body.detail[0].code).toBe('request.body_too_large');
  });

  it('refuses JSON nested deeper than 64 levels with 400 request.json_too_deep, strings not counted', async () => {
    const deep = '['.repeat(10_000) + ']'.repeat(10_000);
    const res = await app.request('POST', '/api/open/echo/1', {
      raw: { contentType: 'application/json', data: deep },
    });
    expect(res.status).toBe(400);
    expect(res.body.detail[0]).toMatchObject({
      code: 'request.json_too_deep',
      loc: ['body'],
      params: { max_depth: 64 },
    });
    const fine = await app.post('/api/open/echo/1', {
      name: '[[[[{{{{'.repeat(100),
      count: 1,
      extra: [[[[1]]]],
    });
    expect(fine.status).toBe(201);
    const edge = await app.request('POST', '/api/open/echo/1', {
      raw: {
        contentType: 'application/json',
        data: `{"name":"ok","count":1,"x":${'['.repeat(63)}${']'.repeat(63)}}`,
      },
    });
    expect(edge.status).toBe(201);
  });

  it('formats a thrown SvcError with its code, loc, params and translated message', async () => {
    const res = await app.get('/api/open/coded');
    expect(res.status).toBe(422);
    expect(res.body).toEqual({
      detail: [
        {
          loc: ['body', 'password'],
          msg: 'The password must be at least 12 characters long.',
          type: 'value_error',
          code: 'auth.password_too_short',
          params: { min_length: 12 },
        },
      ],
    });
  });

  it('turns unexpected errors into a uniform 500 without internals', async () => {
    const res = await app.get('/api/open/boom');
    expect(res.status).toBe(500);
    expect(res.body.detail[0]).toMatchObject({ code: 'server.error', type: 'server_error' });
    expect(res.text).not.toContain('secret internals');
  });

  it('answers unknown paths with a uniform 404', async () => {
    const res = await app.get('/api/nope');
    expect(res.status).toBe(404);
    expect(res.body.detail[0].code).toBe('request.not_found');
  });

  // server.ts `sendJson`: a route's JSON is written directly, as Express's res.json would write it; HEAD and
  // conditional requests still go through Express.
  it('answers JSON with its charset and byte length, HEAD without a body, If-None-Match * with 304', async () => {
    const plain = await fetch(`${app.url}/api/open/text`);
    const text = await plain.text();
    expect(plain.status).toBe(200);
    expect(JSON.parse(text)).toMatchObject({ data: { text: 'Zoë, 漢字 🙂' } });
    expect(plain.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(plain.headers.get('content-length')).toBe(String(Buffer.byteLength(text)));
    const head = await fetch(`${app.url}/api/open/text`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(head.headers.get('content-length')).toBe(String(Buffer.byteLength(text)));
    expect(await head.text()).toBe('');
    // node:http, not fetch: fetch adds Cache-Control: no-cache to a conditional request, which makes it stale.
    const conditional = await new Promise<{ status?: number; body: string }>((resolve, reject) => {
      get(`${app.url}/api/open/text`, { headers: { 'If-None-Match': '*' } }, (res) => {
        let body = '';
        res.on('data', (chunk: Buffer) => (body += chunk.toString()));
        res.on('end', () => resolve({ status: res.statusCode, body }));
      }).on('error', reject);
    });
    expect(conditional).toEqual({ status: 304, body: '' });
  });

  it('sends 204 without a body and bare payloads for unwrapped routes', async () => {
    const gone = await app.delete('/api/open/gone');
    expect(gone.status).toBe(204);
    expect(gone.text).toBe('');
    const bare = await app.get('/api/open/bare');
    expect(bare.body).toEqual({ bare: true });
  });

  it('keeps a valid client X-Request-ID and replaces an invalid one', async () => {
    const kept = await app.get('/api/open/requestid', { headers: { 'X-Request-ID': 'abc-123_x.y' } });
    expect(kept.headers.get('x-request-id')).toBe('abc-123_x.y');
    expect(kept.body.data.id).toBe('abc-123_x.y');
    for (const bad of ['has space', 'x'.repeat(65), 'semi;colon', 'ü']) {
      const res = await app.get('/api/open/requestid', {
        headers: { 'X-Request-ID': encodeURI(bad) === bad ? bad : 'a%20b' },
      });
      const id = res.headers.get('x-request-id');
      expect(id).toMatch(/^[A-Za-z0-9._-]{1,64}$/);
      expect(id).not.toBe(bad);
    }
    const fresh = await app.get('/api/open/ping');
    expect(fresh.headers.get('x-request-id')).toMatch(/^[A-Za-z0-9._-]{1,64}$/);
    const error = await app.get('/api/nope');
    expect(error.headers.get('x-request-id')).toBeTruthy();
  });

  it('requires authentication by default with 401 and WWW-Authenticate: Bearer', async () => {
    const res = await app.get('/api/closed/');
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe('Bearer');
    expect(res.body.detail[0]).toMatchObject({
      code: 'auth.not_authenticated',
      loc: ['header', 'Authorization'],
    });
  });

  it('exposes Retry-After to other origins and answers preflights', async () => {
    const res = await app.get('/api/open/ping', { headers: { Origin: 'https://example.com' } });
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.headers.get('access-control-expose-headers')).toContain('Retry-After');
    const pre = await app.request('OPTIONS', '/api/open/ping', {
      headers: { Origin: 'https://example.com', 'Access-Control-Request-Method': 'POST' },
    });
    expect(pre.status).toBe(204);
  });

  it('sets security headers on every response', async () => {
    const res = await app.get('/api/open/ping');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('x-powered-by')).toBeNull();
  });

  it('serves health, liveness, readiness and version', async () => {
    const health = await app.get('/api/health/');
    expect(health.status).toBe(200);
    expect(health.body.data).toMatchObject({ database: true });
    expect(Object.keys(health.body.data).sort()).toEqual(['database', 'description', 'name', 'version']);
    expect((await app.get('/api/health')).status).toBe(200);
    const live = await app.get('/api/health/live');
    expect(live.body).toEqual({ status: 'ok' });
    const ready = await app.get('/api/health/ready');
    expect(ready.status).toBe(200);
    expect(ready.body.data.database).toBe(true);
    const version = await app.get('/api/version/');
    expect(version.body.data).toEqual({ version: expect.stringMatching(/^\d+\.\d+\.\d+/) });
  });

  it('serves the interactive docs and OpenAPI 3.1 documents split into project and core', async () => {
    const project = await app.get('/openapi.json');
    expect(project.status).toBe(200);
    expect(project.body.openapi).toBe('3.1.0');
    expect(Object.keys(project.body.paths)).toEqual(expect.arrayContaining(['/api/open/echo/{itemId}']));
    expect(Object.keys(project.body.paths).some((p) => p.startsWith('/api/health'))).toBe(false);
    expect(project.body.components.securitySchemes.bearerAuth).toMatchObject({
      type: 'http',
      scheme: 'bearer',
    });
    const core = await app.get('/openapi-core.json');
    expect(Object.keys(core.body.paths)).toEqual(expect.arrayContaining(['/api/health/', '/api/version/']));
    const ui = await app.get('/docs');
    expect(ui.status).toBe(200);
    expect(ui.text).toContain('swagger');
    const coreUi = await app.get('/docs/core');
    expect(coreUi.status).toBe(200);
  });
});

describeEachDatabase('HTTP kernel settings', (database) => {
  it('turns the envelope off, adds the database name, translates to German', async () => {
    const app = await startTestApp({
      database,
      routers: projectRouters(),
      settings: { envelope_enabled: false, default_locale: 'de' },
    });
    try {
      expect((await app.get('/api/open/ping')).body).toEqual({ pong: true });
      const res = await app.get('/api/closed/');
      expect(res.body.detail[0].msg).toBe('Nicht angemeldet.');
    } finally {
      await app.close();
    }
    const exposed = await startTestApp({
      database,
      routers: projectRouters(),
      settings: { expose_response_database: true, use_accept_language: true },
    });
    try {
      const res = await exposed.get('/api/open/ping');
      expect(typeof res.body.database).toBe('string');
      const de = await exposed.get('/api/closed/', {
        headers: { 'Accept-Language': 'fr;q=0.9, de-CH;q=0.8' },
      });
      expect(de.body.detail[0].msg).toBe('Nicht angemeldet.');
      const en = await exposed.get('/api/closed/', { headers: { 'Accept-Language': 'fr' } });
      expect(en.body.detail[0].msg).toBe('Not authenticated.');
    } finally {
      await exposed.close();
    }
  });

  it('removes disabled routers and routes entirely (404, never 403) and honours api_v1_prefix', async () => {
    const app = await startTestApp({
      database,
      routers: projectRouters(),
      settings: {
        api_v1_prefix: '/v1',
        disable_routers: 'other',
        disable_routes: ['GET /open/bare', '/closed'],
        disable_core_routes: 'GET /health/ready',
        disable_core_routers: ['version'],
        docs_enabled: false,
      },
    });
    try {
      expect((await app.get('/api/v1/open/ping')).status).toBe(200);
      expect((await app.get('/api/open/ping')).status).toBe(404);
      expect((await app.get('/api/v1/other/x')).status).toBe(404);
      expect((await app.get('/api/v1/open/bare')).status).toBe(404);
      expect((await app.get('/api/v1/closed/')).status).toBe(404);
      expect((await app.get('/api/v1/health/ready')).status).toBe(404);
      expect((await app.get('/api/v1/health/live')).status).toBe(200);
      expect((await app.get('/api/v1/version/')).status).toBe(404);
      for (const path of ['/docs', '/docs/core', '/openapi.json', '/openapi-core.json']) {
        expect((await app.get(path)).status).toBe(404);
      }
    } finally {
      await app.close();
    }
  });

  it('shows the traceback of an unexpected error only with debug', async () => {
    const app = await startTestApp({ database, routers: projectRouters(), settings: { debug: true } });
    try {
      const res = await app.get('/api/open/boom');
      expect(res.status).toBe(500);
      expect(res.body.detail[0].params.traceback).toContain('secret internals');
    } finally {
      await app.close();
    }
  });

  it('lets global_noauth through routes that need a user', async () => {
    const app = await startTestApp({
      database,
      routers: projectRouters(),
      settings: { global_noauth: true },
    });
    try {
      expect((await app.get('/api/closed/')).body.data).toEqual({ secret: true });
    } finally {
      await app.close();
    }
  });
});

describeEachDatabase('OpenAPI security schemes', (database) => {
  type Doc = {
    components: { securitySchemes: Record<string, Record<string, unknown>> };
    paths: Record<string, Record<string, { security?: Record<string, string[]>[] }>>;
  };
  const oauth2 = (tokenUrl: string) => ({
    type: 'oauth2',
    flows: { password: { tokenUrl, scopes: {} } },
  });
  const bothSchemes = [{ oauth2Password: [] }, { bearerAuth: [] }];

  it('offers the OAuth2 password flow at the token route in /docs and /docs/core, on every protected operation', async () => {
    const app = await startTestApp({ database, routers: projectRouters() });
    try {
      const project = (await app.get('/openapi.json')).body as Doc;
      const core = (await app.get('/openapi-core.json')).body as Doc;
      for (const doc of [project, core]) {
        expect(doc.components.securitySchemes.oauth2Password).toMatchObject(oauth2('/api/auth/token'));
        expect(doc.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
        // Swagger UI's Authorize dialog lists the schemes in this order: the password form comes first.
        expect(Object.keys(doc.components.securitySchemes)).toEqual(['oauth2Password', 'bearerAuth']);
      }
      expect(project.paths['/api/closed/']!.get!.security).toEqual(bothSchemes);
      expect(project.paths['/api/open/ping']!.get!.security).toBeUndefined();
      expect(core.paths['/api/auth/user']!.get!.security).toEqual(bothSchemes);
      expect(core.paths['/api/auth/token']!.post!.security).toBeUndefined();
      // The flow posts a form to the token route and reads the bare OAuth2 answer.
      const token = core.paths['/api/auth/token']!.post! as { requestBody?: { content: object } };
      expect(Object.keys(token.requestBody!.content)).toEqual(['application/x-www-form-urlencoded']);
      await app.createUser({ username: 'swagger' });
      const login = await app.post('/api/auth/token', undefined, {
        form: { grant_type: 'password', username: 'swagger', password: 'correct-horse-battery', scope: '' },
      });
      expect(login.status).toBe(200);
      expect(login.body).toMatchObject({ token_type: 'bearer', access_token: expect.any(String) });
    } finally {
      await app.close();
    }
  });

  it('follows api_v1_prefix, and drops the flow when the token route is disabled', async () => {
    const prefixed = await startTestApp({
      database,
      routers: projectRouters(),
      settings: { api_v1_prefix: '/v1' },
    });
    try {
      for (const path of ['/openapi.json', '/openapi-core.json']) {
        const doc = (await prefixed.get(path)).body as Doc;
        expect(doc.components.securitySchemes.oauth2Password).toMatchObject(oauth2('/api/v1/auth/token'));
      }
    } finally {
      await prefixed.close();
    }
    const noLogin = await startTestApp({
      database,
      routers: projectRouters(),
      settings: { disable_core_routes: 'POST /auth/token' },
    });
    try {
      const doc = (await noLogin.get('/openapi.json')).body as Doc;
      expect(Object.keys(doc.components.securitySchemes)).toEqual(['bearerAuth']);
      expect(doc.paths['/api/closed/']!.get!.security).toEqual([{ bearerAuth: [] }]);
    } finally {
      await noLogin.close();
    }
  });
});
