/**
 * The stats endpoint's answer (`GET /admin/v1/stats?window=hour|day`) and its per-destination and
 * per-source series shaped as uPlot wants them: x in Unix seconds, one array per line, null where
 * a bucket has no value so the line breaks instead of dropping to zero.
 */
export type StatsWindow = 'hour' | 'day';

import type { DestinationStats, SourceStats, StatsReport } from '@eventrelay/config';

export type { DestinationStats, SourceStats };
export type Stats = StatsReport;

export type ChartData = [number[], ...(number | null)[][]];

function bucketSeconds(buckets: readonly string[]): number[] {
  return buckets.map((b) => Math.floor(Date.parse(b) / 1000));
}

/** Arrays shorter than the buckets (a destination created mid-window) are padded at the start. */
function aligned<T>(values: readonly T[], length: number, fill: T): T[] {
  if (values.length >= length) return values.slice(values.length - length);
  return [...Array.from({ length: length - values.length }, () => fill), ...values];
}

export function outcomeChart(stats: Stats, d: DestinationStats): ChartData {
  const n = stats.buckets.length;
  return [
    bucketSeconds(stats.buckets),
    aligned(d.series.delivered, n, 0),
    aligned(d.series.retrying, n, 0),
    aligned(d.series.deadLettered, n, 0),
  ];
}

/** Failed attempts over attempts per bucket, in percent; no attempts → no point. */
function errorRatioSeries(d: DestinationStats, n: number): (number | null)[] {
  const attempts = aligned(d.series.attempts, n, 0);
  const failed = aligned(d.series.failedAttempts, n, 0);
  return attempts.map((a, i) => (a > 0 ? Math.round(((failed[i] ?? 0) / a) * 10_000) / 100 : null));
}

export function errorChart(stats: Stats, d: DestinationStats): ChartData {
  return [bucketSeconds(stats.buckets), errorRatioSeries(d, stats.buckets.length)];
}

export function lagChart(stats: Stats, d: DestinationStats): ChartData {
  const n = stats.buckets.length;
  return [bucketSeconds(stats.buckets), aligned(d.series.lagMsAvg, n, null), aligned(d.series.lagMsMax, n, null)];
}

export function sourceChart(stats: Stats, s: SourceStats): ChartData {
  const n = stats.buckets.length;
  return [bucketSeconds(stats.buckets), aligned(s.series.accepted, n, 0), aligned(s.series.rejected, n, 0)];
}

export function formatRatio(ratio: number | null): string {
  return ratio === null ? '—' : `${(ratio * 100).toFixed(ratio < 0.001 && ratio > 0 ? 2 : 1)} %`;
}

export function formatMs(ms: number | null): string {
  if (ms === null) return '—';
  return ms >= 10_000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.round(ms)} ms`;
}

/** A destination needs attention when any call was dead-lettered or over 5 % of attempts failed. */
export function needsAttention(d: DestinationStats): boolean {
  return d.totals.deadLettered > 0 || (d.totals.errorRatio ?? 0) > 0.05;
}
