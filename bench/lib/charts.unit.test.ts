/** The chart specs built from run results (the rendering is vega's and resvg's, not tested here). */
import { chartSpecs, type Spec } from './charts';
import type { RunResult } from './run';

const run = (scenario: string, mode: RunResult['mode'], extra: Partial<RunResult> = {}): RunResult =>
  ({
    scenario,
    mode,
    offered_calls_per_s: mode === 'saturation' ? null : 1000,
    measured_s: 20,
    latency_ms: { p50: 12, p90: 15, p99: 24, p999: 0, max: 30 },
    per_destination: { d0: { delivered_calls_per_s: 700, p99_ms: 20 } },
    events: [],
    timeline: { delivered_per_s: [900, 1000], accepted_per_s: [1000, 1000, 0], warmup_s: 5 },
    ...extra,
  }) as unknown as RunResult;

const rows = (spec: Spec | undefined) => (spec?.['data'] as { values: Record<string, unknown>[] }).values;
const layer = (spec: Spec | undefined, i: number) => (spec?.['layer'] as Spec[])[i];

describe('chartSpecs', () => {
  const runs = [
    run('healthy', 'fixed'),
    run('receiver-down', 'fixed', { events: [{ at_s: 5, what: 'receiver 0 down' }] }),
    run('healthy', 'saturation'),
    run('throttling', 'fixed', {
      misbehaving: {
        destination: 'd0',
        rate_limit_per_s: 200,
        attempts_per_s: [300, 250],
        failed_per_s: [100, 50],
        delivered_per_s: [200, 200],
      },
    } as unknown as Partial<RunResult>),
    run('throttling', 'saturation', { misbehaving: { destination: 'd0' } } as unknown as Partial<RunResult>),
    run('healthy', 'soak', { memory_timeline: { ingest: [[1, 100]], 'redis used_memory': [[1, 60]] } }),
  ];
  const specs = chartSpecs(runs, { bare_http_calls_per_s: 1, bullmq_chain_delivered_per_s: 7000, bullmq_chain_p99_ms: 600 });

  it('draws every chart of a complete run, and an event chart only for a fixed run with events', () => {
    expect(Object.keys(specs).sort()).toEqual([
      'events-receiver-down',
      'latency-fixed',
      'misbehaving-throttling',
      'per-destination',
      'soak-memory',
      'throughput-fixed',
      'throughput-saturation',
    ]);
  });

  it('draws each per-second bin at its middle, and the accepted sample of second i at i - 0.5', () => {
    expect(rows(specs['throughput-fixed']).filter((r) => r['series'] === 'healthy')).toEqual([
      { series: 'healthy', x: 0.5, y: 900, dashed: false },
      { series: 'healthy', x: 1.5, y: 1000, dashed: false },
    ]);
    expect(
      rows(specs['events-receiver-down'])
        .filter((r) => r['dashed'] === true)
        .map((r) => r['x']),
    ).toEqual([0.5, 1.5]);
  });

  it('marks events at the warm-up plus their time in the window, and the bare chain as a dashed line', () => {
    expect(rows(layer(specs['events-receiver-down'], 1))).toEqual([{ x: 10, label: 'receiver 0 down', row: 0 }]);
    expect(
      rows(specs['throughput-saturation'])
        .filter((r) => r['dashed'] === true)
        .map((r) => r['y']),
    ).toEqual([7000, 7000]);
  });

  it("draws the misbehaving destination's requests, failures and deliveries, and its rate limit as a dashed line", () => {
    const lines = rows(specs['misbehaving-throttling']);
    expect(lines.filter((r) => r['series'] === 'requests').map((r) => r['y'])).toEqual([300, 250]);
    expect(lines.filter((r) => r['series'] === 'answered other than 2xx').every((r) => r['dashed'] === true)).toBe(true);
    expect(lines.filter((r) => r['series'] === 'rate limit (200/s)').map((r) => [r['x'], r['y']])).toEqual([
      [0, 200],
      [2, 200],
    ]);
  });

  it('leaves values a log scale cannot show out of the latency bars', () => {
    const latency = rows(specs['latency-fixed']);
    expect(latency.filter((r) => r['group'] === 'healthy').map((r) => r['series'])).toEqual(['p50', 'p90', 'p99']);
    expect(specs['soak-memory'] && rows(specs['soak-memory']).find((r) => r['series'] === 'redis used_memory')?.['dashed']).toBe(true);
  });
});
