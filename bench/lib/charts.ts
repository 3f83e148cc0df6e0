/**
 * The charts of `pnpm bench`: Vega-Lite specs built from the run results (pure, tested), compiled
 * with vega-lite, rendered to SVG headlessly by vega (no browser, no canvas) and to PNG by resvg.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Baselines } from './chaos-report.js';
import type { RunResult } from './run.js';
import { DESTINATIONS, routeOf } from './scenarios.js';

/** A Vega-Lite spec, as plain JSON (the library's own type is too wide to help here). */
export type Spec = Record<string, unknown>;
type Row = Record<string, string | number | boolean | null>;

const WIDTH = 760;
const HEIGHT = 300;
const FONT = 'DejaVu Sans';
/** Colour-blind safe (Okabe–Ito without its pale yellow), then Tol's darker hues. */
const PALETTE = ['#0072B2', '#D55E00', '#009E73', '#CC79A7', '#E69F00', '#56B4E9', '#000000', '#882255', '#999933', '#332288'];
const CONFIG = {
  font: FONT,
  background: 'white',
  range: { category: PALETTE },
  legend: { orient: 'bottom', columns: 4, labelLimit: 260 },
  title: { anchor: 'start', fontSize: 14 },
};

/** Lines over time, one per `series`; `dashed` rows drawn dashed; vertical rules labelled at `markers`. */
function lineSpec(o: {
  title: string;
  xTitle: string;
  yTitle: string;
  rows: readonly Row[];
  markers?: readonly { x: number; label: string }[];
}): Spec {
  const layers: Spec[] = [
    {
      mark: { type: 'line', strokeWidth: 1.6, interpolate: 'linear' },
      encoding: {
        x: { field: 'x', type: 'quantitative', title: o.xTitle },
        y: { field: 'y', type: 'quantitative', title: o.yTitle },
        color: { field: 'series', type: 'nominal', title: null, sort: null },
        strokeDash: {
          field: 'dashed',
          type: 'nominal',
          legend: null,
          scale: {
            domain: [false, true],
            range: [
              [1, 0],
              [6, 4],
            ],
          },
        },
      },
    },
  ];
  if (o.markers?.length) {
    const data = { values: o.markers.map((m, i) => ({ x: m.x, label: m.label, row: i })) };
    layers.push({ data, mark: { type: 'rule', color: '#555', strokeDash: [2, 3] }, encoding: { x: { field: 'x', type: 'quantitative' } } });
    // Labels stacked from the top, one line each, so that close events do not overprint.
    layers.push({
      data,
      mark: { type: 'text', align: 'left', dx: 3, fontSize: 10, color: '#333' },
      encoding: { x: { field: 'x', type: 'quantitative' }, y: { value: { expr: '10 + datum.row * 12' } }, text: { field: 'label' } },
    });
  }
  return { title: o.title, width: WIDTH, height: HEIGHT, config: CONFIG, data: { values: o.rows }, layer: layers };
}

/** Grouped bars: one group per `group`, one bar per `series` in it. */
function barSpec(o: { title: string; yTitle: string; rows: readonly Row[]; log?: boolean }): Spec {
  return {
    title: o.title,
    width: WIDTH,
    height: HEIGHT,
    config: CONFIG,
    data: { values: o.rows.filter((r) => r['value'] !== null && (!o.log || (r['value'] as number) > 0)) },
    mark: 'bar',
    encoding: {
      x: { field: 'group', type: 'nominal', title: null, sort: null, axis: { labelAngle: 0 } },
      xOffset: { field: 'series', type: 'nominal', sort: null },
      // Side by side (xOffset), not stacked; a log scale has no zero, so log bars start at the plot's bottom.
      y: { field: 'value', type: 'quantitative', title: o.yTitle, stack: null, ...(o.log ? { scale: { type: 'log' } } : {}) },
      ...(o.log ? { y2: { value: HEIGHT } } : {}),
      color: { field: 'series', type: 'nominal', title: null, sort: null },
    },
  };
}

/** Bin i counts [i, i + 1) s: drawn at its middle, so a drop shows after the event that caused it. */
const binRows = (series: string, bins: readonly number[], dashed = false): Row[] =>
  bins.map((y, i) => ({ series, x: i + 0.5, y, dashed: dashed }));
const rate = (n: number | null | undefined) => n?.toLocaleString('en-US') ?? '?';

/** Every chart of a run, by file name. */
export function chartSpecs(runs: readonly RunResult[], baselines: Baselines): Record<string, Spec> {
  const out: Record<string, Spec> = {};
  const fixedRuns = runs.filter((r) => r.mode === 'fixed');
  const satRuns = runs.filter((r) => r.mode === 'saturation');
  const fixedRate = rate(fixedRuns[0]?.offered_calls_per_s);
  const warmup = runs[0]?.timeline.warmup_s ?? 0;
  const start = [{ x: warmup, label: 'measured window starts' }];
  if (fixedRuns.length > 0) {
    out['throughput-fixed'] = lineSpec({
      title: `Delivered calls/s over time at ${fixedRate} calls/s offered (each line: one scenario)`,
      xTitle: 'seconds since the load started (warm-up included; the tail is the settle after the load stopped)',
      yTitle: 'delivered calls/s',
      rows: fixedRuns.flatMap((r) => binRows(r.scenario, r.timeline.delivered_per_s)),
      markers: start,
    });
  }
  if (satRuns.length > 0) {
    const chain = baselines.bullmq_chain_delivered_per_s;
    const longest = Math.max(...satRuns.map((r) => r.timeline.delivered_per_s.length));
    const name = 'baseline: BullMQ → undici chain';
    out['throughput-saturation'] = lineSpec({
      title: 'Delivered calls/s over time at saturation (each line: one scenario)',
      xTitle: 'seconds since the load started',
      yTitle: 'delivered calls/s',
      rows: [
        ...satRuns.flatMap((r) => binRows(r.scenario, r.timeline.delivered_per_s)),
        ...(chain ? [0, longest].map((x) => ({ series: name, x, y: chain, dashed: true })) : []),
      ],
      markers: start,
    });
  }
  // The disruptions, one chart each: what the intake accepted and what arrived, second by second.
  for (const r of fixedRuns.filter((x) => x.events.length > 0)) {
    out[`events-${r.scenario}`] = lineSpec({
      title: `${r.scenario} at ${rate(r.offered_calls_per_s)} calls/s offered: accepted and delivered per second`,
      xTitle: 'seconds since the load started',
      yTitle: 'calls/s',
      rows: [
        // Sample i of the accepted count covers the second before it.
        ...r.timeline.accepted_per_s
          .map((y, i) => ({ series: 'accepted by the intake', x: i - 0.5, y, dashed: true }))
          .filter((p) => p.x >= 0),
        ...binRows('delivered (first 2xx at a receiver)', r.timeline.delivered_per_s),
      ],
      markers: r.events.map((e) => ({ x: r.timeline.warmup_s + e.at_s, label: e.what })),
    });
  }
  // The misbehaving destination of throttling and flapping: what the sender tried, what it got, what arrived.
  for (const r of fixedRuns) {
    const m = r.misbehaving;
    if (!m) continue;
    const limit = m.rate_limit_per_s;
    out[`misbehaving-${r.scenario}`] = lineSpec({
      title: `${r.scenario} at ${rate(r.offered_calls_per_s)} calls/s offered: requests to ${m.destination} per second`,
      xTitle: 'seconds since the load started (the tail is the settle after the load stopped)',
      yTitle: 'per second',
      rows: [
        ...binRows('requests', m.attempts_per_s),
        ...binRows('answered other than 2xx', m.failed_per_s, true),
        ...binRows('calls delivered (first 2xx)', m.delivered_per_s),
        ...(limit === null
          ? []
          : [0, m.attempts_per_s.length].map((x) => ({ series: `rate limit (${limit}/s)`, x, y: limit, dashed: true }))),
      ],
      markers: r.events.map((e) => ({ x: r.timeline.warmup_s + e.at_s, label: e.what })),
    });
  }
  if (fixedRuns.length > 0) {
    const qs = [
      ['p50', 'p50'],
      ['p90', 'p90'],
      ['p99', 'p99'],
      ['p999', 'p99.9'],
    ] as const;
    out['latency-fixed'] = barSpec({
      title: `End-to-end latency (intake send → receiver 2xx) at ${fixedRate} calls/s, all destinations`,
      yTitle: 'ms (log scale)',
      rows: fixedRuns.flatMap((r) => qs.map(([q, label]) => ({ group: r.scenario, series: label, value: r.latency_ms[q] }))),
      log: true,
    });
  }
  if (satRuns.length > 0) {
    out['per-destination'] = barSpec({
      title: 'Delivered calls/s per destination at saturation',
      yTitle: 'delivered calls/s',
      rows: Array.from({ length: DESTINATIONS }, (_, i) =>
        satRuns.map((r) => ({
          group: routeOf(i),
          series: r.scenario,
          value: r.per_destination[routeOf(i)]?.delivered_calls_per_s ?? null,
        })),
      ).flat(),
    });
  }
  const soak = runs.find((r) => r.mode === 'soak');
  if (soak?.memory_timeline) {
    out['soak-memory'] = lineSpec({
      title: `Memory during the soak (${rate(soak.offered_calls_per_s)} calls/s for ${Math.round(soak.measured_s)} s)`,
      xTitle: 'seconds since the load started',
      yTitle: 'MB (RSS per process; Redis used_memory)',
      rows: Object.entries(soak.memory_timeline).flatMap(([series, points]) =>
        points.map(([x, y]) => ({ series, x, y, dashed: series === 'redis used_memory' })),
      ),
    });
  }
  return out;
}

/** Renders each spec to `<dir>/<name><suffix>.svg` and `.png`; returns the names written. */
export async function writeCharts(dir: string, specs: Record<string, Spec>, suffix = ''): Promise<string[]> {
  // Both are ES modules with top-level await: loaded on demand, so the specs stay testable under jest.
  const [vl, vega, { Resvg }] = await Promise.all([import('vega-lite'), import('vega'), import('@resvg/resvg-js')]);
  mkdirSync(dir, { recursive: true });
  const names: string[] = [];
  for (const [name, spec] of Object.entries(specs)) {
    const view = new vega.View(vega.parse(vl.compile(spec as never).spec), { renderer: 'none' });
    const svg = await view.toSVG();
    view.finalize();
    const png = new Resvg(svg, {
      font: { loadSystemFonts: true, defaultFontFamily: FONT, sansSerifFamily: FONT },
      background: '#ffffff',
      logLevel: 'off',
    })
      .render()
      .asPng();
    writeFileSync(path.join(dir, `${name}${suffix}.svg`), svg);
    writeFileSync(path.join(dir, `${name}${suffix}.png`), png);
    names.push(`${name}${suffix}`);
  }
  return names;
}
