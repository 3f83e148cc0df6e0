/** Pure helpers for the bench's time series: per-second rates, percentiles, and a growth trend. */

/** Counts of `times` (ms) per whole second from `startMs` for `seconds` seconds. */
export function perSecond(times: Iterable<number>, startMs: number, seconds: number): number[] {
  const bins = new Array<number>(Math.max(0, Math.ceil(seconds))).fill(0);
  for (const t of times) {
    const i = Math.floor((t - startMs) / 1000);
    if (i >= 0 && i < bins.length) bins[i] = (bins[i] ?? 0) + 1;
  }
  return bins;
}

/** Nearest-rank percentiles of `values` (unsorted), rounded to 0.01; null when empty. */
export function percentiles<Q extends string>(values: ArrayLike<number>, qs: Readonly<Record<Q, number>>): Record<Q, number | null> {
  const sorted = Float64Array.from(values).sort();
  const out = {} as Record<Q, number | null>;
  for (const [name, q] of Object.entries(qs) as [Q, number][]) {
    if (sorted.length === 0) out[name] = null;
    else {
      const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
      out[name] = Math.round((sorted[i] as number) * 100) / 100;
    }
  }
  return out;
}

export const LATENCY_QUANTILES = { p50: 0.5, p90: 0.9, p99: 0.99, p999: 0.999, max: 1 } as const;

export interface Trend {
  /** Least-squares slope, units per second. */
  readonly slopePerS: number;
  /** The fitted line's change over the span, as a share of its starting value (0.1 = grew 10%). */
  readonly growth: number;
  readonly first: number;
  readonly last: number;
}

/** A least-squares line through (seconds, value) points; growth 0 for fewer than 2 points. */
export function trend(points: readonly (readonly [number, number])[]): Trend {
  const n = points.length;
  if (n < 2) return { slopePerS: 0, growth: 0, first: points[0]?.[1] ?? 0, last: points[0]?.[1] ?? 0 };
  let sx = 0;
  let sy = 0;
  for (const [x, y] of points) {
    sx += x;
    sy += y;
  }
  const mx = sx / n;
  const my = sy / n;
  let num = 0;
  let den = 0;
  for (const [x, y] of points) {
    num += (x - mx) * (y - my);
    den += (x - mx) ** 2;
  }
  const slope = den === 0 ? 0 : num / den;
  const x0 = points[0]?.[0] ?? 0;
  const x1 = points[n - 1]?.[0] ?? 0;
  const first = my + slope * (x0 - mx);
  const last = my + slope * (x1 - mx);
  return { slopePerS: slope, growth: first > 0 ? (last - first) / first : 0, first, last };
}
