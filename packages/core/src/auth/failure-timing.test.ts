import { createFailureTiming } from './failure-timing.js';

describe('failure timing', () => {
  it('holds a fast failure until the slowest recent one, and lets a slow outlier fade', async () => {
    let clock = 0;
    const timing = createFailureTiming(() => clock);
    // A slow failure (40 ms) sets the envelope without waiting.
    let started = timing.start();
    clock += 40;
    const before = performance.now();
    await timing.settle(started);
    expect(performance.now() - before).toBeLessThan(20);
    // A fast one (10 ms) now waits for the rest of the envelope (40 * 0.97 - 10 ≈ 28.8 ms).
    started = timing.start();
    clock += 10;
    const t0 = performance.now();
    await timing.settle(started);
    expect(performance.now() - t0).toBeGreaterThanOrEqual(25);
    // After many fast failures the envelope has decayed to the fast path.
    for (let i = 0; i < 200; i++) {
      started = timing.start();
      clock += 10;
      await timing.settle(started);
    }
    started = timing.start();
    clock += 10;
    const t1 = performance.now();
    await timing.settle(started);
    expect(performance.now() - t1).toBeLessThan(10);
  });
});
