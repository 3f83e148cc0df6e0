/** Per-second bins, percentiles and the growth trend the soak verdict rests on. */
import { percentiles, perSecond, trend } from './series';

describe('perSecond', () => {
  it('bins times by whole second from the start and drops those outside', () => {
    expect(perSecond([1000, 1500, 1999, 2000, 4999, 999, 5000], 1000, 4)).toEqual([3, 1, 0, 1]);
  });
});

describe('percentiles', () => {
  it('takes the nearest rank', () => {
    const values = Array.from({ length: 100 }, (_, i) => 100 - i);
    expect(percentiles(values, { p50: 0.5, p99: 0.99, max: 1 })).toEqual({ p50: 50, p99: 99, max: 100 });
  });

  it('gives null without values', () => {
    expect(percentiles([], { p99: 0.99 })).toEqual({ p99: null });
  });
});

describe('trend', () => {
  it('finds no growth in a flat, noisy series', () => {
    const t = trend(Array.from({ length: 60 }, (_, i) => [i * 10, 100 + (i % 2 === 0 ? 3 : -3)] as const));
    expect(Math.abs(t.growth)).toBeLessThan(0.02);
  });

  it('measures steady growth as a share of the fitted start', () => {
    const t = trend(Array.from({ length: 11 }, (_, i) => [i * 60, 100 + i * 2] as const));
    expect(t.growth).toBeCloseTo(0.2, 5);
    expect(t.slopePerS).toBeCloseTo(2 / 60, 5);
  });

  it('reports no growth for fewer than two points', () => {
    expect(trend([[0, 5]]).growth).toBe(0);
  });
});
