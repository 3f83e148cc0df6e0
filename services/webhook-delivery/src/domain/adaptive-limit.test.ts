import { AdaptiveLimit } from './adaptive-limit.js';
import { answerSignal, breakerFailure } from './answer-signal.js';

const T0 = Date.parse('2026-11-25T10:00:00.000Z');

describe('answerSignal', () => {
  it('reads capacity from the outcome', () => {
    expect(answerSignal({ kind: 'success', status: 200 })).toBe('ok');
    expect(answerSignal({ kind: 'retryable', error: 'HTTP 429', status: 429 })).toBe('throttled');
    expect(answerSignal({ kind: 'retryable', error: 'HTTP 503', status: 503 })).toBe('failed');
    expect(answerSignal({ kind: 'retryable', error: 'timeout: no complete response within 5000 ms' })).toBe('overloaded');
    expect(answerSignal({ kind: 'retryable', error: 'HTTP 500', status: 500 })).toBe('failed');
    expect(answerSignal({ kind: 'retryable', error: 'connection_refused: ECONNREFUSED' })).toBe('failed');
    expect(answerSignal({ kind: 'permanent', error: 'HTTP 404', status: 404 })).toBe('other');
  });

  it('counts 5xx (503 included), timeouts and errors against the breaker, never 429 or a 4xx', () => {
    expect(breakerFailure('failed')).toBe(true);
    expect(breakerFailure('throttled')).toBe(false);
    expect(breakerFailure('overloaded')).toBe(true);
    expect(breakerFailure('other')).toBe(false);
    expect(breakerFailure('ok')).toBe(false);
  });
});

describe('AdaptiveLimit', () => {
  const caps = { maxConcurrency: 64, maxRate: Number.POSITIVE_INFINITY };

  it('starts at the destination’s maximums: no rate in force', () => {
    const limit = new AdaptiveLimit(caps);
    expect(limit.concurrency).toBe(64);
    expect(limit.rate).toBe(Number.POSITIVE_INFINITY);
  });

  it('a 429 among mostly 2xx moves nothing: it delays its own call only', () => {
    const limit = new AdaptiveLimit(caps);
    for (let i = 0; i < 100; i++) limit.observe('ok', T0 + i * 10);
    limit.observe('throttled', T0 + 1000);
    limit.observe('throttled', T0 + 1100);
    expect([limit.concurrency, limit.rate]).toEqual([64, Number.POSITIVE_INFINITY]);
  });

  it('sustained 429s (10% of the last 2 s) set the rate to 90% of what the receiver let through, and cut concurrency by 30%', () => {
    const limit = new AdaptiveLimit(caps);
    // 200 answers 2xx over two seconds, then 429s: the 23rd is 10% of the window's answers.
    for (let i = 0; i < 200; i++) limit.observe('ok', T0 + i * 10);
    for (let i = 0; i < 22; i++) limit.observe('throttled', T0 + 1950 + i);
    expect(limit.rate).toBe(Number.POSITIVE_INFINITY);
    limit.observe('throttled', T0 + 1999);
    // 200 let through over the 2 s window: 100 a second, 90% of it.
    expect(limit.rate).toBeCloseTo(90, 0);
    expect(limit.concurrency).toBe(44);
    // The window still holds the answers to the old limits: no second cut within it.
    for (let i = 0; i < 20; i++) limit.observe('throttled', T0 + 2000 + i);
    expect(limit.rate).toBeCloseTo(90, 0);
    expect(limit.concurrency).toBe(44);
  });

  it('429s when nothing else gets through halve what was sent; 503s set no rate (down, not busy)', () => {
    const throttled = new AdaptiveLimit(caps);
    for (let i = 0; i < 40; i++) throttled.observe('throttled', T0 + i * 50);
    // The 31st answer is the first whose window reaches 1.5 s back: half of 31 over 1.5 s.
    expect(throttled.rate).toBeCloseTo(10.33, 2);
    const down = new AdaptiveLimit(caps);
    for (let i = 0; i < 40; i++) down.observe('failed', T0 + i);
    expect([down.concurrency, down.rate]).toEqual([64, Number.POSITIVE_INFINITY]);
  });

  it('grows the rate by 5% a second up to what the receiver let through, by 1% above it, and probes a minute after the last cut until it is gone', () => {
    const limit = new AdaptiveLimit(caps);
    for (let i = 0; i < 100; i++) limit.observe('ok', T0 + i * 20);
    for (let i = 0; i < 30; i++) limit.observe('throttled', T0 + 1999);
    // 100 let through over 2 s: a capacity of 50 a second, the rate at 90% of it.
    const cut = limit.rate;
    expect(cut).toBeCloseTo(45, 0);
    // No growth while the window still holds the 429s.
    limit.observe('ok', T0 + 2999);
    expect(limit.rate).toBe(cut);
    limit.observe('ok', T0 + 4099);
    limit.observe('ok', T0 + 5099);
    // 5% a second once they are gone: 1.1 s then 1 s of it.
    expect(limit.rate).toBeGreaterThan(cut + 4.7);
    expect(limit.rate).toBeLessThan(cut + 5);
    // Past the capacity, 1% a second.
    for (let t = 6099; t <= 12_099; t += 1000) limit.observe('ok', T0 + t);
    const above = limit.rate;
    expect(above).toBeGreaterThan(50);
    limit.observe('ok', T0 + 13_099);
    expect(limit.rate - above).toBeCloseTo(above * 0.01, 2);
    // A 429 now and then, below the threshold, does not keep it: a minute after the cut the rate
    // probes, 5% a second compounded, and is gone once past twice the capacity.
    limit.observe('throttled', T0 + 40_000);
    for (let t = 14_099; t < 62_000; t += 1000) limit.observe('ok', T0 + t);
    const probing = limit.rate;
    limit.observe('ok', T0 + 62_099);
    expect(limit.rate).toBeCloseTo(probing * 1.05, 1);
    for (let t = 63_099; t <= 80_099; t += 1000) limit.observe('ok', T0 + t);
    expect(limit.rate).toBe(Number.POSITIVE_INFINITY);
  });

  it('trims a rate in force when 3-10% of the answers are 429s: to the capacity, or to what got through when less; 2% trims nothing', () => {
    /** A cut (capacity 50/s), then 14 s of 2xx that grow the rate past 55/s; returns the time reached. */
    const grown = (limit: AdaptiveLimit): number => {
      for (let i = 0; i < 100; i++) limit.observe('ok', T0 + i * 20);
      for (let i = 0; i < 30; i++) limit.observe('throttled', T0 + 1999);
      for (let t = 2100; t <= 16_000; t += 100) limit.observe('ok', T0 + t);
      expect(limit.rate).toBeGreaterThan(55);
      return T0 + 16_000;
    };
    /** 2 s of 2xx at `perS`, then 3 s with every `every`-th a 429: the window holds only answers at `perS`. */
    const answers = (limit: AdaptiveLimit, from: number, every: number, perS = 55) => {
      for (let i = 1; i <= 5 * perS; i++) {
        const throttled = i > 2 * perS && i % every === 0;
        limit.observe(throttled ? 'throttled' : 'ok', from + Math.round((i * 1000) / perS));
      }
    };
    const over = new AdaptiveLimit(caps);
    const trimmedFrom = grown(over);
    const concurrency = over.concurrency;
    answers(over, trimmedFrom, 15);
    // Back to the 50 a second the receiver let through at the cut.
    expect(over.rate).toBeCloseTo(50, 0);
    // A trim leaves the concurrency alone (a cut would take 30% off it).
    expect(over.concurrency).toBeGreaterThanOrEqual(concurrency);
    // Below a capacity measured too high, what gets through is the measure.
    const measuredHigh = new AdaptiveLimit(caps);
    for (let i = 0; i < 100; i++) measuredHigh.observe('ok', T0 + i * 20);
    for (let i = 0; i < 30; i++) measuredHigh.observe('throttled', T0 + 1999);
    expect(measuredHigh.rate).toBeCloseTo(45, 0);
    // 46 a second, one in 12 a 429 once the window is theirs: 42-44 a second got through.
    answers(measuredHigh, T0 + 4000, 12, 46);
    expect(measuredHigh.rate).toBeGreaterThan(42);
    expect(measuredHigh.rate).toBeLessThan(44);
    const noise = new AdaptiveLimit(caps);
    const from = grown(noise);
    const before = noise.rate;
    answers(noise, from, 50);
    expect(noise.rate).toBeGreaterThanOrEqual(before);
  });

  it('needs 20 answers in the window before a share means anything: 429s among a burst’s first answers cut nothing', () => {
    const limit = new AdaptiveLimit(caps);
    for (let i = 0; i < 5; i++) limit.observe('throttled', T0 + i);
    for (let i = 0; i < 14; i++) limit.observe('ok', T0 + 10 + i);
    expect([limit.concurrency, limit.rate]).toEqual([64, Number.POSITIVE_INFINITY]);
  });

  it('stays within a destination’s own caps, and reset goes back to them', () => {
    const limit = new AdaptiveLimit({ maxConcurrency: 10, maxRate: 50 });
    expect(limit.rate).toBe(50);
    limit.setCaps({ maxConcurrency: 4, maxRate: 20 });
    expect([limit.concurrency, limit.rate]).toEqual([4, 20]);
    for (let i = 0; i < 20; i++) limit.observe('throttled', T0 + i * 100);
    limit.setCaps({ maxConcurrency: 16, maxRate: 20 });
    expect(limit.concurrency).toBe(2);
    limit.reset();
    expect([limit.concurrency, limit.rate]).toEqual([16, 20]);
  });
});
