import { AdaptiveLimit } from './adaptive-limit.js';
import { answerSignal, breakerFailure } from './answer-signal.js';

const T0 = Date.parse('2026-11-25T10:00:00.000Z');

describe('answerSignal', () => {
  it('reads capacity from the outcome', () => {
    expect(answerSignal({ kind: 'success', status: 200 })).toBe('ok');
    expect(answerSignal({ kind: 'retryable', error: 'HTTP 429', status: 429 })).toBe('throttled');
    expect(answerSignal({ kind: 'retryable', error: 'HTTP 503', status: 503 })).toBe('throttled');
    expect(answerSignal({ kind: 'retryable', error: 'timeout: no complete response within 5000 ms' })).toBe('overloaded');
    expect(answerSignal({ kind: 'retryable', error: 'HTTP 500', status: 500 })).toBe('failed');
    expect(answerSignal({ kind: 'retryable', error: 'connection_refused: ECONNREFUSED' })).toBe('failed');
    expect(answerSignal({ kind: 'permanent', error: 'HTTP 404', status: 404 })).toBe('other');
  });

  it('counts 503, timeouts and errors against the breaker, never 429 or a 4xx', () => {
    expect(breakerFailure('throttled', 503)).toBe(true);
    expect(breakerFailure('throttled', 429)).toBe(false);
    expect(breakerFailure('overloaded', undefined)).toBe(true);
    expect(breakerFailure('failed', 500)).toBe(true);
    expect(breakerFailure('other', 404)).toBe(false);
    expect(breakerFailure('ok', 200)).toBe(false);
  });
});

describe('AdaptiveLimit', () => {
  const caps = { maxConcurrency: 64, maxRate: Number.POSITIVE_INFINITY };

  it('starts at the destination’s maximums: no rate in force', () => {
    const limit = new AdaptiveLimit(caps);
    expect(limit.concurrency).toBe(64);
    expect(limit.rate).toBe(Number.POSITIVE_INFINITY);
  });

  it('on a 429 sets the rate to 90% of what the receiver accepted in the last second, and cuts concurrency by 30%', () => {
    const limit = new AdaptiveLimit(caps);
    for (let i = 0; i < 100; i++) limit.observe('ok', T0 + i * 5);
    limit.observe('throttled', T0 + 600, 429);
    expect(limit.rate).toBeCloseTo(90);
    expect(limit.concurrency).toBe(44);
    // The rest of the burst's 429s are the same signal: no second cut within a second.
    limit.observe('throttled', T0 + 700, 429);
    expect(limit.rate).toBeCloseTo(90);
    expect(limit.concurrency).toBe(44);
  });

  it('a 429 when nothing was accepted halves what was sent; a 503 then sets no rate (down, not busy)', () => {
    const throttled = new AdaptiveLimit(caps);
    for (let i = 0; i < 40; i++) throttled.observe('throttled', T0 + i, 429);
    // The first 429 cut on one answer; the next cut, a second later, sees the 40 answers of that second.
    expect(throttled.rate).toBe(1);
    const down = new AdaptiveLimit(caps);
    for (let i = 0; i < 40; i++) down.observe('throttled', T0 + i, 503);
    expect(down.rate).toBe(Number.POSITIVE_INFINITY);
    expect(down.concurrency).toBe(44);
  });

  it('grows the rate by 5% a second while 2xx come, and forgets it a minute after the last 429', () => {
    const limit = new AdaptiveLimit(caps);
    for (let i = 0; i < 100; i++) limit.observe('ok', T0 + i * 5);
    limit.observe('throttled', T0 + 600, 429);
    limit.observe('ok', T0 + 1600);
    limit.observe('ok', T0 + 2600);
    expect(limit.rate).toBeGreaterThan(90);
    expect(limit.rate).toBeLessThan(100);
    limit.observe('ok', T0 + 61_000);
    expect(limit.rate).toBe(Number.POSITIVE_INFINITY);
  });

  it('halves concurrency on a timeout, then adds one per round of 2xx, never above the maximum', () => {
    const limit = new AdaptiveLimit({ maxConcurrency: 8, maxRate: Number.POSITIVE_INFINITY });
    limit.observe('overloaded', T0);
    expect(limit.concurrency).toBe(4);
    for (let i = 0; i < 5; i++) limit.observe('ok', T0 + 10 + i);
    expect(limit.concurrency).toBe(5);
    for (let i = 0; i < 200; i++) limit.observe('ok', T0 + 100 + i);
    expect(limit.concurrency).toBe(8);
    expect(limit.rate).toBe(Number.POSITIVE_INFINITY);
  });

  it('stays within a destination’s own caps, and reset goes back to them', () => {
    const limit = new AdaptiveLimit({ maxConcurrency: 10, maxRate: 50 });
    expect(limit.rate).toBe(50);
    limit.setCaps({ maxConcurrency: 4, maxRate: 20 });
    expect([limit.concurrency, limit.rate]).toEqual([4, 20]);
    limit.observe('overloaded', T0);
    limit.setCaps({ maxConcurrency: 16, maxRate: 20 });
    expect(limit.concurrency).toBe(2);
    limit.reset();
    expect([limit.concurrency, limit.rate]).toEqual([16, 20]);
  });
});
