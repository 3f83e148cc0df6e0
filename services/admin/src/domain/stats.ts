/**
 * The stats report (GET /admin/v1/stats): which buckets a window covers, and the counters' raw
 * bucket fields (see StatsCounters in @eventrelay/stores) merged into a series per destination and
 * source plus totals over the window. Every configured destination and source is in the report,
 * with zeros when nothing was counted; fields of deleted ones are ignored.
 */
import type { Destination, DestinationStats, Source, SourceStats, StatsReport } from '@eventrelay/config';

export type StatsWindow = StatsReport['window'];

/** Which buckets to read: of which resolution, by number (epoch seconds / bucket seconds), oldest first. */
export interface WindowPlan {
  readonly window: StatsWindow;
  readonly resolution: '1m' | '10m';
  readonly bucketSeconds: 60 | 600;
  readonly buckets: readonly number[];
}

const WINDOWS: Record<StatsWindow, Omit<WindowPlan, 'window' | 'buckets'> & { readonly count: number }> = {
  hour: { resolution: '1m', bucketSeconds: 60, count: 60 },
  day: { resolution: '10m', bucketSeconds: 600, count: 144 },
};

/** The window's buckets at `now` (ms): the last one is the bucket `now` is in. */
export function planWindow(window: StatsWindow, now: number): WindowPlan {
  const { resolution, bucketSeconds, count } = WINDOWS[window];
  const current = Math.floor(now / 1000 / bucketSeconds);
  const buckets = Array.from({ length: count }, (_, i) => current - count + 1 + i);
  return { window, resolution, bucketSeconds, buckets };
}

type DestinationCounter = 'delivered' | 'retrying' | 'dead' | 'attempts' | 'failed' | 'lagSum' | 'lagCount' | 'lagMax';

/**
 * The report from the buckets' raw fields, `raw[i]` being the fields of `plan.buckets[i]`
 * (`d:<destinationId>:<counter>`, `s:<sourceId>:<counter>`, values as Redis returns them).
 */
export function buildStatsReport(
  plan: WindowPlan,
  raw: readonly Readonly<Record<string, string>>[],
  config: { readonly destinations: readonly Destination[]; readonly sources: readonly Source[] },
  now: number,
): StatsReport {
  const value = (i: number, field: string) => Number(raw[i]?.[field] ?? 0) || 0;
  const each = <T>(f: (i: number) => T): T[] => plan.buckets.map((_, i) => f(i));

  const destinations = [...config.destinations].sort(byId).map((d): DestinationStats => {
    const count = (what: DestinationCounter) => each((i) => value(i, `d:${d.id}:${what}`));
    const [delivered, retrying, deadLettered, attempts, failedAttempts] = (
      ['delivered', 'retrying', 'dead', 'attempts', 'failed'] as const
    ).map(count) as [number[], number[], number[], number[], number[]];
    const lagSum = count('lagSum');
    const lagCount = count('lagCount');
    const lagMax = count('lagMax');
    const totalAttempts = sum(attempts);
    const totalFailed = sum(failedAttempts);
    const totalLagCount = sum(lagCount);
    return {
      id: d.id,
      name: d.name,
      type: d.name,
      enabled: d.enabled,
      series: {
        delivered,
        retrying,
        deadLettered,
        attempts,
        failedAttempts,
        lagMsAvg: lagCount.map((n, i) => (n > 0 ? Math.round((lagSum[i] ?? 0) / n) : null)),
        lagMsMax: lagCount.map((n, i) => (n > 0 ? (lagMax[i] ?? 0) : null)),
      },
      totals: {
        delivered: sum(delivered),
        retrying: sum(retrying),
        deadLettered: sum(deadLettered),
        attempts: totalAttempts,
        failedAttempts: totalFailed,
        errorRatio: totalAttempts > 0 ? totalFailed / totalAttempts : null,
        lagMsAvg: totalLagCount > 0 ? Math.round(sum(lagSum) / totalLagCount) : null,
        lagMsMax: totalLagCount > 0 ? Math.max(...lagMax) : null,
      },
    };
  });

  const minutes = (plan.buckets.length * plan.bucketSeconds) / 60;
  const sources = [...config.sources].sort(byId).map((s): SourceStats => {
    const accepted = each((i) => value(i, `s:${s.id}:accepted`));
    const rejected = each((i) => value(i, `s:${s.id}:rejected`));
    const totals = { accepted: sum(accepted), rejected: sum(rejected) };
    return {
      id: s.id,
      name: s.name,
      series: { accepted, rejected },
      totals: { ...totals, callsPerMinute: Math.round(((totals.accepted + totals.rejected) / minutes) * 1000) / 1000 },
    };
  });

  return {
    window: plan.window,
    bucketSeconds: plan.bucketSeconds,
    generatedAt: new Date(now).toISOString(),
    buckets: plan.buckets.map((b) => new Date(b * plan.bucketSeconds * 1000).toISOString()),
    destinations,
    sources,
  };
}

function sum(values: readonly number[]): number {
  let total = 0;
  for (const v of values) total += v;
  return total;
}

function byId(a: { id: string }, b: { id: string }): number {
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}
