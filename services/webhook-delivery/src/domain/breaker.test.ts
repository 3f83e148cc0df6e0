import { Breaker, FIRST_PROBE_MS, MAX_PROBE_MS, MIN_ATTEMPTS } from './breaker.js';

const T0 = Date.parse('2026-11-25T10:00:00.000Z');

describe('Breaker', () => {
  function opened(): Breaker {
    const breaker = new Breaker();
    for (let i = 0; i < MIN_ATTEMPTS - 1; i++) expect(breaker.observe('failed', T0 + i)).toBeUndefined();
    expect(breaker.observe('failed', T0 + MIN_ATTEMPTS)).toBe('opened');
    return breaker;
  }

  it('stays closed below the minimum of attempts, and while fewer than half fail', () => {
    const breaker = new Breaker();
    for (let i = 0; i < MIN_ATTEMPTS - 1; i++) breaker.observe('failed', T0 + i);
    expect(breaker.state).toBe('closed');
    const mixed = new Breaker();
    for (let i = 0; i < 100; i++) mixed.observe(i % 3 === 0 ? 'failed' : 'ok', T0 + i);
    expect(mixed.state).toBe('closed');
    expect(mixed.admit(T0 + 200)).toEqual({ kind: 'go' });
  });

  it('never opens on 429s (a receiver that throttles is up) nor on 4xx', () => {
    const breaker = new Breaker();
    for (let i = 0; i < 100; i++) breaker.observe(i % 2 ? 'throttled' : 'other', T0 + i);
    expect(breaker.state).toBe('closed');
  });

  it('opens on sustained failures: calls wait for the probe, one at a time, at growing intervals up to 2 s', () => {
    const breaker = opened();
    const at = T0 + MIN_ATTEMPTS;
    expect(breaker.admit(at + 10)).toEqual({ kind: 'wait', probeAt: at + FIRST_PROBE_MS });
    expect(breaker.admit(at + FIRST_PROBE_MS)).toEqual({ kind: 'probe' });
    // The probe is out: nobody else goes.
    expect(breaker.admit(at + FIRST_PROBE_MS + 1)).toEqual({ kind: 'wait', probeAt: at + FIRST_PROBE_MS + 1 });
    let now = at + FIRST_PROBE_MS + 50;
    expect(breaker.observe('failed', now, true)).toBeUndefined();
    const gaps: number[] = [];
    for (let i = 0; i < 4; i++) {
      gaps.push(breaker.probeAt - now);
      now = breaker.probeAt;
      expect(breaker.admit(now)).toEqual({ kind: 'probe' });
      breaker.observe('overloaded', now, true);
    }
    expect(gaps).toEqual([2000, 2000, 2000, 2000]);
    expect(MAX_PROBE_MS).toBe(2000);
    expect(breaker.state).toBe('open');
  });

  it('closes on the probe’s 2xx, and on any 2xx of a request sent before it opened', () => {
    const breaker = opened();
    expect(breaker.admit(T0 + 5000)).toEqual({ kind: 'probe' });
    expect(breaker.observe('ok', T0 + 5010, true)).toBe('closed');
    expect(breaker.admit(T0 + 5020)).toEqual({ kind: 'go' });
    const late = opened();
    expect(late.observe('ok', T0 + 30)).toBe('closed');
  });

  it('answers other than the probe’s do not move an open breaker', () => {
    const breaker = opened();
    expect(breaker.observe('failed', T0 + 100)).toBeUndefined();
    expect(breaker.probeAt).toBe(T0 + MIN_ATTEMPTS + FIRST_PROBE_MS);
  });

  it('a probe that was not sent lets the next job carry it', () => {
    const breaker = opened();
    expect(breaker.admit(T0 + 2000)).toEqual({ kind: 'probe' });
    breaker.probeNotSent();
    expect(breaker.admit(T0 + 2001)).toEqual({ kind: 'probe' });
  });

  it('opens on a run of failures after a healthy spell, without waiting for them to outweigh its 2xx', () => {
    const breaker = new Breaker();
    // Ten seconds at 100 answers/s, all 2xx: the window holds 1,000 of them.
    for (let i = 0; i < 1000; i++) breaker.observe('ok', T0 + i * 10);
    const down = T0 + 10_000;
    for (let i = 0; i < MIN_ATTEMPTS - 1; i++) expect(breaker.observe('failed', down + i * 10)).toBeUndefined();
    expect(breaker.observe('overloaded', down + MIN_ATTEMPTS * 10)).toBe('opened');
  });

  it('any other answer ends a run of failures: a 2xx, a 429 or another 4xx', () => {
    for (const between of ['ok', 'throttled', 'other'] as const) {
      const breaker = new Breaker();
      for (let i = 0; i < 1000; i++) breaker.observe('ok', T0 + i * 10);
      const down = T0 + 10_000;
      for (let i = 0; i < MIN_ATTEMPTS - 1; i++) breaker.observe('failed', down + i);
      breaker.observe(between, down + MIN_ATTEMPTS);
      for (let i = 0; i < MIN_ATTEMPTS - 1; i++) breaker.observe('failed', down + MIN_ATTEMPTS + 1 + i);
      expect(breaker.state).toBe('closed');
    }
  });

  it('10% random failures at 100 answers/s for ten minutes never open it', () => {
    // A fixed pseudo-random sequence (LCG): the same draw on every run.
    let seed = 42;
    const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
    const breaker = new Breaker();
    for (let i = 0; i < 60_000; i++) breaker.observe(random() < 0.1 ? 'failed' : 'ok', T0 + i * 10);
    expect(breaker.state).toBe('closed');
  });

  it('a run slower than the window (a quiet destination) opens nothing', () => {
    const breaker = new Breaker();
    for (let i = 0; i < 3 * MIN_ATTEMPTS; i++) breaker.observe('failed', T0 + i * 1000);
    expect(breaker.state).toBe('closed');
  });

  it('forgets failures older than the window', () => {
    const breaker = new Breaker();
    for (let i = 0; i < MIN_ATTEMPTS - 1; i++) breaker.observe('failed', T0 + i);
    expect(breaker.observe('failed', T0 + 11_000)).toBeUndefined();
    expect(breaker.state).toBe('closed');
  });
});
