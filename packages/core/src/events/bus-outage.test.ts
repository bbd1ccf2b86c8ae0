// The event bus while Redis is down (docs/deployment.md "Redis"): events published meanwhile are lost, which the
// log says once per outage and once when Redis answers again, not once per event with a stack trace each (under
// a load of logged writes, every one emitting `activity`, that was a stack trace per request).
import { startPrivateRedis, type PrivateRedis } from '../../../../test/hardening/helpers.js';
import { logCapture } from '../../../../testing/smtp.js';
import { createLogger } from '../kernel/log/logger.js';
import { createRedisBus, type BusMessage, type EventBus } from './bus.js';

const LOST = 50;

describe('event bus while Redis is down [private redis]', () => {
  let redis: PrivateRedis;
  let bus: EventBus;
  const capture = logCapture();
  const delivered: BusMessage[] = [];
  const event = (n: number): BusMessage => ({ kind: 'event', target: { all: true }, frame: `{"n":${n}}` });

  beforeAll(async () => {
    redis = await startPrivateRedis();
    bus = await createRedisBus({
      url: redis.url,
      channel: 'svc:events',
      log: createLogger({ level: 'INFO', format: 'text', stream: capture.stream }),
      deliver: (message) => delivered.push(message),
    });
  }, 30_000);
  afterAll(async () => {
    await bus?.close();
    await redis?.destroy();
  });

  it(`logs ${LOST} events lost during an outage in two lines, and delivers again afterwards`, async () => {
    await redis.kill();
    for (let n = 0; n < LOST; n++) bus.publish(event(n));
    await redis.start();
    // Published until one gets through (the client reconnects with its back-off), then delivered.
    while (!delivered.some((m) => m.kind === 'event' && m.frame === `{"n":${LOST}}`)) {
      bus.publish(event(LOST));
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const failed = capture.lines.filter((line) => line.includes('event publish failed'));
    expect(failed).toHaveLength(1);
    const stacks = capture.lines.filter((line) => /^\s+at /.test(line));
    expect(stacks.length).toBeLessThan(40); // one stack trace (the first failure), not one per event
    const counted = capture.lines.find((line) => /events were lost while Redis did not answer/.test(line));
    expect(Number(/(\d+) events were lost/.exec(counted ?? '')?.[1])).toBeGreaterThanOrEqual(LOST);
  }, 30_000);
});
