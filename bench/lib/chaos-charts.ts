/** The charts of `pnpm bench`, as SVG (written with their PNG by the bench): pure, from the run results. */
import type { Baselines } from './chaos-report.js';
import type { RunResult } from './chaos-run.js';
import { barChartSvg, lineChartSvg, type Series } from './charts.js';
import { DESTINATIONS, routeOf } from './scenarios.js';

/** Bin i counts [i, i + 1) s: drawn at its middle, so a drop shows after the event that caused it. */
function binPoints(bins: readonly number[]): (readonly [number, number])[] {
  return bins.map((v, i) => [i + 0.5, v] as const);
}

function throughputSeries(runs: readonly RunResult[], mode: string): Series[] {
  return runs
    .filter((r) => r.mode === mode)
    .map((r) => ({ name: r.scenario, points: binPoints(r.timeline.delivered_per_s) }));
}

export function drawCharts(runs: readonly RunResult[], baselines: Baselines): Record<string, string> {
  const charts: Record<string, string> = {};
  const fixedRate = runs.find((r) => r.mode === 'fixed')?.offered_calls_per_s;
  const warmup = runs[0]?.timeline.warmup_s ?? 0;
  const fixed = throughputSeries(runs, 'fixed');
  if (fixed.length > 0) {
    charts['throughput-fixed'] = lineChartSvg({
      title: `Delivered calls/s over time at ${fixedRate?.toLocaleString('en-US') ?? '?'} calls/s offered (each line: one scenario)`,
      xLabel: 'seconds since the load started (warm-up included; the tail is the settle after the load stopped)',
      yLabel: 'delivered calls/s',
      series: fixed,
      markers: [{ x: warmup, label: 'measured window starts' }],
    });
  }
  const sat = throughputSeries(runs, 'saturation');
  if (sat.length > 0) {
    const chain = baselines.bullmq_chain_delivered_per_s;
    const longest = Math.max(...sat.map((s) => s.points.length));
    charts['throughput-saturation'] = lineChartSvg({
      title: 'Delivered calls/s over time at saturation (each line: one scenario)',
      xLabel: 'seconds since the load started',
      yLabel: 'delivered calls/s',
      series: [...sat, ...(chain ? [{ name: 'baseline: BullMQ → undici chain', points: [[0, chain] as const, [longest, chain] as const], dashed: true }] : [])],
      markers: [{ x: warmup, label: 'measured window starts' }],
    });
  }
  // The disruptions, one chart each: what the intake accepted and what arrived, second by second.
  for (const r of runs.filter((x) => x.mode === 'fixed' && x.events.length > 0)) {
    charts[`events-${r.scenario}`] = lineChartSvg({
      title: `${r.scenario} at ${r.offered_calls_per_s?.toLocaleString('en-US') ?? '?'} calls/s offered: accepted and delivered per second`,
      xLabel: 'seconds since the load started',
      yLabel: 'calls/s',
      series: [
        // Sample i of the accepted count covers the second before it.
        { name: 'accepted by the intake', points: r.timeline.accepted_per_s.map((v, i) => [i - 0.5, v] as const).filter(([x]) => x >= 0), dashed: true },
        { name: 'delivered (first 2xx at a receiver)', points: binPoints(r.timeline.delivered_per_s) },
      ],
      markers: r.events.map((e) => ({ x: r.timeline.warmup_s + e.at_s, label: e.what })),
    });
  }
  const fixedRuns = runs.filter((r) => r.mode === 'fixed');
  if (fixedRuns.length > 0) {
    charts['latency-fixed'] = barChartSvg({
      title: `End-to-end latency (intake send → receiver 2xx) at ${fixedRate?.toLocaleString('en-US') ?? '?'} calls/s, all destinations`,
      yLabel: 'ms (log scale)',
      seriesNames: ['p50', 'p90', 'p99', 'p99.9'],
      groups: fixedRuns.map((r) => ({ label: r.scenario, values: [r.latency_ms.p50, r.latency_ms.p90, r.latency_ms.p99, r.latency_ms.p999] })),
      yLog: true,
    });
  }
  const satRuns = runs.filter((r) => r.mode === 'saturation');
  if (satRuns.length > 0) {
    charts['per-destination'] = barChartSvg({
      title: 'Delivered calls/s per destination at saturation',
      yLabel: 'delivered calls/s',
      seriesNames: satRuns.map((r) => r.scenario),
      groups: Array.from({ length: DESTINATIONS }, (_, i) => ({ label: routeOf(i), values: satRuns.map((r) => r.per_destination[routeOf(i)]?.delivered_calls_per_s ?? null) })),
    });
  }
  const soak = runs.find((r) => r.mode === 'soak');
  if (soak?.memory_timeline) {
    charts['soak-memory'] = lineChartSvg({
      title: `Memory during the soak (${soak.offered_calls_per_s?.toLocaleString('en-US') ?? '?'} calls/s for ${Math.round(soak.measured_s)} s)`,
      xLabel: 'seconds since the load started',
      yLabel: 'MB (RSS per process; Redis used_memory)',
      series: Object.entries(soak.memory_timeline).map(([name, points]) => ({ name, points, dashed: name === 'redis used_memory' })),
    });
  }
  return charts;
}
