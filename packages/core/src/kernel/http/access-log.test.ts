import { PassThrough } from 'node:stream';
import { sql } from 'drizzle-orm';
import { defineRouter } from '../router.js';
import { describeEachDatabase } from '../../testing/each.js';
import { startTestApp } from '../../testing/test-app.js';

function captureLines() {
  const stream = new PassThrough();
  const lines: string[] = [];
  stream.on('data', (chunk: Buffer) => lines.push(...chunk.toString().split('\n').filter(Boolean)));
  return { stream, lines };
}

describeEachDatabase('access log and request ids in log lines', (database) => {
  it('writes one JSON access line per request carrying the request id, and SQL with dbdebug', async () => {
    const { stream, lines } = captureLines();
    const router = defineRouter({ prefix: '/logged', public: true });
    router.get('/', {}, async (ctx) => {
      ctx.log.info('inside the handler');
      await ctx.db.all(sql`select 1 as one`);
      return { ok: true };
    });
    const app = await startTestApp({
      database,
      routers: [router],
      logStream: stream,
      settings: { log_format: 'json', log_level: 'DEBUG', dbdebug: true },
    });
    try {
      await app.get('/api/logged/', { headers: { 'X-Request-ID': 'trace-42' } });
      await app.get('/api/health/');
      await new Promise((r) => setTimeout(r, 50));
      const records = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
      const forRequest = records.filter((r) => r.request_id === 'trace-42');
      expect(forRequest.map((r) => r.message)).toEqual(
        expect.arrayContaining(['inside the handler', expect.stringMatching(/^GET \/api\/logged\/ 200 /)]),
      );
      const access = records.filter((r) => r.logger === 'svc.access');
      expect(access).toHaveLength(2);
      for (const r of records)
        expect(Object.keys(r)).toEqual(
          expect.arrayContaining(['time', 'level', 'logger', 'message', 'request_id']),
        );
      expect(
        records.some((r) => String(r.message).startsWith('SQL ') && String(r.message).includes('select')),
      ).toBe(true);
    } finally {
      await app.close();
    }
  });
});
