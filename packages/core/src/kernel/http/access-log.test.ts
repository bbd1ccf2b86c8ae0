import { connect } from 'node:net';
import { PassThrough } from 'node:stream';
import { sql } from 'drizzle-orm';
import { startSmtp } from '../../../../../testing/smtp.js';
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

describeEachDatabase('access log keeps tokens in URLs out (SPEC-3 §7 rule 7)', (database) => {
  it('drops the query of every /account/ path in any case, and token, ticket and code parameters everywhere', async () => {
    const smtp = await startSmtp();
    const { stream, lines } = captureLines();
    const router = defineRouter({ prefix: '/listed', public: true });
    router.get('/', {}, async () => ({ ok: true }));
    const app = await startTestApp({
      database,
      routers: [router],
      logStream: stream,
      settings: {
        smtp_url: smtp.url,
        public_url: 'https://app.example.com',
        log_format: 'json',
        log_level: 'INFO',
      },
    });
    try {
      const secret = (n: number) => `s3cret-${n}-value`;
      const cases: [path: string, logged: string][] = [
        [`/account/reset-password?token=${secret(1)}`, '/account/reset-password'],
        [`/account/reset-password/?token=${secret(2)}`, '/account/reset-password/'],
        [`/ACCOUNT/RESET-PASSWORD?token=${secret(3)}`, '/ACCOUNT/RESET-PASSWORD'],
        [`/Account/Reset-Password/?token=${secret(4)}`, '/Account/Reset-Password/'],
        [`/account/verify-email?t=${secret(5)}&next=x`, '/account/verify-email'],
        [`/account?other=${secret(6)}`, '/account'],
        [`/%61ccount/reset-password?x=${secret(7)}`, '/%61ccount/reset-password'],
        [`/api/listed/?TOKEN=${secret(8)}&page=2`, '/api/listed/?page=2'],
        [`/api/listed/?page=3&Ticket=${secret(9)}`, '/api/listed/?page=3'],
        [`/api/listed/?cOdE=${secret(10)}`, '/api/listed/'],
        [`/api/listed/?token[]=${secret(11)}&%74oken=${secret(12)}&keep=1`, '/api/listed/?keep=1'],
        [`/static/x.txt?code=${secret(13)}`, '/static/x.txt'],
        ['/api/listed/?page=4&tokens=kept', '/api/listed/?page=4&tokens=kept'],
      ];
      for (const [path] of cases) await fetch(`${app.url}${path}`, { redirect: 'manual' });
      // One access line per request, in order, after the responses went out.
      const deadline = Date.now() + 5_000;
      const access = () =>
        lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((r) => r.logger === 'svc.access');
      while (access().length < cases.length && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 20));
      const shown = access().map((r) => String(r.message).split(' ')[1]);
      expect(shown).toEqual(cases.map(([, logged]) => logged));
      const all = lines.join('\n');
      for (let n = 1; n <= 13; n++) expect(all).not.toContain(secret(n));
    } finally {
      await app.close();
      await smtp.close();
    }
  });

  it('drops them also from a request target in absolute form (RFC 9112 §3.2.2)', async () => {
    const { stream, lines } = captureLines();
    const app = await startTestApp({
      database,
      logStream: stream,
      settings: { log_format: 'json', log_level: 'INFO' },
    });
    /** One HTTP/1.1 request as a proxy would send it: the whole URL on the request line. */
    const rawGet = (target: string) =>
      new Promise<string>((resolve, reject) => {
        const { hostname, port } = new URL(app.url);
        const socket = connect(Number(port), hostname, () =>
          socket.write(`GET ${target} HTTP/1.1\r\nHost: ${hostname}:${port}\r\nConnection: close\r\n\r\n`),
        );
        let answer = '';
        socket.on('data', (chunk: Buffer) => (answer += chunk.toString()));
        socket.on('end', () => resolve(answer));
        socket.on('error', reject);
      });
    try {
      const cases: [target: string, logged: string][] = [
        [`${app.url}/account/reset-password?t=secret-absolute-1`, `${app.url}/account/reset-password`],
        [`${app.url}/Account/?x=secret-absolute-2`, `${app.url}/Account/`],
        [`${app.url}/api/health/live?token=secret-absolute-3&page=1`, `${app.url}/api/health/live?page=1`],
      ];
      // Answered by svc (its request id), whatever the page makes of the query.
      for (const [target] of cases)
        expect(await rawGet(target)).toMatch(/^HTTP\/1\.1 \d{3} [^]*X-Request-ID/i);
      const access = () =>
        lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((r) => r.logger === 'svc.access');
      const deadline = Date.now() + 5_000;
      while (access().length < cases.length && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 20));
      expect(access().map((r) => String(r.message).split(' ')[1])).toEqual(cases.map(([, logged]) => logged));
      expect(lines.join('\n')).not.toContain('secret-absolute');
    } finally {
      await app.close();
    }
  });
});
