import { Registry, collectDefaultMetrics, type Counter } from 'prom-client';

export { Counter, Histogram, Gauge, Registry } from 'prom-client';

/** One registry per process, built in the composition root and passed to whatever records metrics. */
export function createMetricsRegistry(service: string): Registry {
  const registry = new Registry();
  registry.setDefaultLabels({ service });
  // Standard names (process_*, nodejs_*), so stock Node.js dashboards work on them too.
  collectDefaultMetrics({ register: registry });
  return registry;
}

/** Latency buckets for request-sized work, in seconds. */
export const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

/**
 * Creates the series of a labelled counter at 0. A series that first appears at its first
 * increment is invisible to increase() and rate(), so alerts on it would miss the first events.
 */
export function startAtZero<T extends string>(counter: Counter<T>, labelSets: readonly Partial<Record<T, string>>[]): Counter<T> {
  for (const labels of labelSets) counter.inc(labels, 0);
  return counter;
}

/**
 * Counts by label set while a unit of work is classified, so that a batch of calls or attempts
 * costs one increment per set instead of one per item (prom-client hashes the labels on every
 * increment).
 */
export class LabelTally<T extends string> {
  private readonly counts = new Map<string, { labels: Partial<Record<T, string>>; n: number }>();

  add(labels: Partial<Record<T, string>>): void {
    let key = '';
    for (const name in labels) key += `${name}=${labels[name]}\u0000`;
    const entry = this.counts.get(key);
    if (entry) entry.n++;
    else this.counts.set(key, { labels, n: 1 });
  }

  clear(): void {
    this.counts.clear();
  }

  countIn(counter: Counter<T>): void {
    for (const { labels, n } of this.counts.values()) counter.inc(labels, n);
  }
}
