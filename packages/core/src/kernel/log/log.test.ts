import { PassThrough } from 'node:stream';
import { requestContext } from './context.js';
import { createLogger, LOG_FLUSH_BYTES } from './logger.js';

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

describe('buffered writes (docs/performance.md)', () => {
  function chunks() {
    const stream = new PassThrough();
    const writes: string[] = [];
    stream.on('data', (chunk: Buffer) => writes.push(chunk.toString()));
    return { stream, writes };
  }
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

  it('collects the lines of an interval and writes them as one chunk, in order', async () => {
    const { stream, writes } = chunks();
    const log = createLogger({ level: 'INFO', format: 'text', stream, flushIntervalMs: 40 });
    for (const n of [1, 2, 3]) log.info(`line ${n}`);
    await tick();
    expect(writes).toHaveLength(0);
    await sleep(120);
    expect(writes).toHaveLength(1);
    expect(
      writes[0]!
        .split('\n')
        .filter(Boolean)
        .map((l) => l.split(' ').pop()),
    ).toEqual(['1', '2', '3']);
  });

  it('writes at once on flush() and when a batch reaches 64 KiB', async () => {
    const { stream, writes } = chunks();
    const log = createLogger({ level: 'INFO', format: 'text', stream, flushIntervalMs: 60_000 });
    log.child('access').info('before close');
    log.flush?.();
    await tick();
    expect(writes.join('')).toContain('[svc.access] [-] before close');
    log.info('x'.repeat(LOG_FLUSH_BYTES));
    await tick();
    expect(writes).toHaveLength(2);
    expect(writes[1]!.length).toBeGreaterThan(LOG_FLUSH_BYTES);
  });

  it('writes every line of a passed stream by the next turn of the event loop by default', async () => {
    const { stream, writes } = chunks();
    const log = createLogger({ level: 'INFO', format: 'json', stream });
    for (let n = 0; n < 100; n++) log.info(`line ${n}`);
    await tick();
    expect(writes.join('').split('\n').filter(Boolean)).toHaveLength(100);
  });
});
