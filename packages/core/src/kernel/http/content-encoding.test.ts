import { PassThrough } from 'node:stream';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { describeEachDatabase } from '../../testing/each.js';
import { startTestApp, type TestApp } from '../../testing/test-app.js';

// A request body is decoded by its Content-Encoding before it is parsed (gzip, deflate and br are accepted).
// A body that does not decode is the client's mistake: SPEC "Errors" gives every client mistake a 4xx with a
// stable code in the uniform format, never the 500 kept for the server's own faults.

function captureJsonLines() {
  const stream = new PassThrough();
  const records: Record<string, unknown>[] = [];
  stream.on('data', (chunk: Buffer) => {
    for (const line of chunk.toString().split('\n').filter(Boolean)) records.push(JSON.parse(line));
  });
  return { stream, records };
}

const FORM = 'username=alice&password=correct-horse-battery';

describeEachDatabase('request bodies with a Content-Encoding', (database) => {
  let app: TestApp;
  let token = '';
  const log = captureJsonLines();

  beforeAll(async () => {
    app = await startTestApp({
      database,
      logStream: log.stream,
      settings: { log_format: 'json', log_level: 'DEBUG' },
    });
    token = (await app.loginAs(await app.createUser({ username: 'alice' }))).accessToken;
  });
  afterAll(() => app.close());

  function send(path: string, contentType: string, encoding: string, data: string | Uint8Array) {
    return app.request('POST', path, {
      raw: { contentType, data },
      headers: { 'Content-Encoding': encoding },
    });
  }

  it.each(['gzip', 'deflate', 'br', 'GZIP'])(
    'answers a plain form body labelled %s with 400 request.invalid_encoding and logs no error',
    async (encoding) => {
      const before = log.records.length;
      const res = await send('/api/auth/token', 'application/x-www-form-urlencoded', encoding, FORM);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        detail: [
          {
            loc: ['header', 'Content-Encoding'],
            msg: expect.any(String),
            type: 'value_error',
            code: 'request.invalid_encoding',
          },
        ],
      });
      await new Promise((resolve) => setTimeout(resolve, 20));
      const lines = log.records.slice(before);
      expect(lines.filter((r) => r.level === 'ERROR' || r.level === 'CRITICAL')).toEqual([]);
      expect(lines.filter((r) => r.exc_info !== undefined)).toEqual([]);
    },
  );

  it.each(['gzip', 'deflate', 'br'])(
    'answers a plain JSON body labelled %s with 400 request.invalid_encoding',
    async (encoding) => {
      const res = await send(
        '/api/auth/refresh-token',
        'application/json',
        encoding,
        '{"refresh_token":"x"}',
      );
      expect(res.status).toBe(400);
      expect(res.body.detail[0]).toMatchObject({
        code: 'request.invalid_encoding',
        loc: ['header', 'Content-Encoding'],
      });
    },
  );

  it('answers a truncated gzip body with 400 request.invalid_encoding', async () => {
    const res = await send(
      '/api/auth/token',
      'application/x-www-form-urlencoded',
      'gzip',
      gzipSync(FORM).subarray(0, 12),
    );
    expect(res.status).toBe(400);
    expect(res.body.detail[0].code).toBe('request.invalid_encoding');
  });

  it('answers an encoding it does not know with 415 pointing at Content-Encoding', async () => {
    for (const encoding of ['x-unknown', 'compress', 'gzip, br']) {
      const res = await send('/api/auth/token', 'application/x-www-form-urlencoded', encoding, FORM);
      expect([encoding, res.status]).toEqual([encoding, 415]);
      expect(res.body.detail[0]).toMatchObject({
        code: 'request.unsupported_media_type',
        loc: ['header', 'Content-Encoding'],
      });
    }
  });

  it('still accepts bodies that are really compressed, form and JSON', async () => {
    const login = await send('/api/auth/token', 'application/x-www-form-urlencoded', 'gzip', gzipSync(FORM));
    expect(login.status).toBe(200);
    expect(login.body.access_token).toEqual(expect.any(String));
    for (const [encoding, data] of [
      ['deflate', deflateSync(JSON.stringify({ firstName: 'Deflated' }))],
      ['br', brotliCompressSync(JSON.stringify({ firstName: 'Brotli' }))],
    ] as const) {
      const res = await app.request('PATCH', '/api/auth/user', {
        token,
        raw: { contentType: 'application/json', data },
        headers: { 'Content-Encoding': encoding },
      });
      expect(res.status).toBe(200);
      expect(res.body.data.firstName).toBe(encoding === 'br' ? 'Brotli' : 'Deflated');
    }
  });

  it('applies the body limit to the decoded size (a small gzip of 5 MB answers 413)', async () => {
    const bomb = gzipSync(Buffer.alloc(5_000_000, 0x20));
    expect(bomb.length).toBeLessThan(10_000);
    const res = await send('/api/auth/refresh-token', 'application/json', 'gzip', bomb);
    expect(res.status).toBe(413);
    expect(res.body.detail[0].code).toBe('request.body_too_large');
  });
});
