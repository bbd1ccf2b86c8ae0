import { PassThrough } from 'node:stream';
import { requestContext } from './context.js';
import { createLogger } from './logger.js';

function capture() {
  const stream = new PassThrough();
  const lines: string[] = [];
  stream.on('data', (chunk: Buffer) => lines.push(...chunk.toString().split('\n').filter(Boolean)));
  return { stream, lines };
}

const tick = () => new Promise((r) => setImmediate(r));

describe('logging', () => {
  it('writes one JSON object per line with time, level, logger, message and request_id', async () => {
    const { stream, lines } = capture();
    const log = createLogger({ level: 'INFO', format: 'json', stream }, 'svc');
    log.info('outside');
    requestContext.run({ requestId: 'req-1' }, () => log.child('auth').warn('inside'));
    log.debug('hidden at INFO');
    await tick();
    expect(lines).toHaveLength(2);
    const [a, b] = lines.map((l) => JSON.parse(l));
    expect(a).toMatchObject({ level: 'INFO', logger: 'svc', message: 'outside', request_id: '-' });
    expect(typeof a.time).toBe('string');
    expect(b).toMatchObject({ level: 'WARNING', logger: 'svc.auth', message: 'inside', request_id: 'req-1' });
  });

  it('adds exc_info with the stack for exceptions', async () => {
    const { stream, lines } = capture();
    const log = createLogger({ level: 'DEBUG', format: 'json', stream });
    log.error('boom', { exc: new Error('kaput') });
    await tick();
    const record = JSON.parse(lines[0]!);
    expect(record.level).toBe('ERROR');
    expect(record.exc_info).toContain('Error: kaput');
  });

  it('writes text lines with level, logger and request id', async () => {
    const { stream, lines } = capture();
    const log = createLogger({ level: 'debug', format: 'text', stream });
    requestContext.run({ requestId: 'abc' }, () => log.debug('hello'));
    await tick();
    expect(lines[0]).toMatch(/ DEBUG \[svc\] \[abc\] hello$/);
  });

  it('filters by level', async () => {
    const { stream, lines } = capture();
    const log = createLogger({ level: 'ERROR', format: 'text', stream });
    log.warn('no');
    log.error('yes');
    await tick();
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('yes');
  });
});
