/**
 * Hand-written SVG charts for the benchmark report (line charts over time, grouped bar charts),
 * and their PNG rendering with resvg. No charting dependency: the charts go in the README, so
 * they must render the same everywhere, and a few hundred lines of SVG are easier to keep
 * deterministic than a browser-based library.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Resvg } from '@resvg/resvg-js';

export interface Series {
  readonly name: string;
  readonly points: readonly (readonly [number, number])[];
  readonly dashed?: boolean;
}

export interface LineChart {
  readonly title: string;
  readonly xLabel: string;
  readonly yLabel: string;
  readonly series: readonly Series[];
  readonly width?: number;
  readonly height?: number;
  readonly yLog?: boolean;
  /** vertical marker lines, e.g. "delivery killed" at x=12 */
  readonly markers?: readonly { readonly x: number; readonly label: string }[];
  readonly yMin?: number;
}

export interface BarGroup {
  readonly label: string;
  readonly values: readonly (number | null)[];
}

export interface BarChart {
  readonly title: string;
  readonly yLabel: string;
  readonly seriesNames: readonly string[];
  readonly groups: readonly BarGroup[];
  readonly width?: number;
  readonly height?: number;
  readonly yLog?: boolean;
}

export const FONT_FAMILY = 'DejaVu Sans, Liberation Sans, Arial, sans-serif';
export const DEFAULT_WIDTH = 900;
export const DEFAULT_HEIGHT = 420;

/**
 * Okabe–Ito (without its yellow, too pale on white) followed by Paul Tol's darker hues: all
 * distinguishable with the common colour-vision deficiencies. Beyond 12 series colours repeat.
 */
export const PALETTE: readonly string[] = [
  '#0072B2', // blue
  '#D55E00', // vermillion
  '#009E73', // bluish green
  '#CC79A7', // reddish purple
  '#E69F00', // orange
  '#56B4E9', // sky blue
  '#000000', // black
  '#882255', // wine
  '#999933', // olive
  '#332288', // indigo
  '#AA4499', // purple
  '#7F7F7F', // grey
];

export function seriesColor(i: number): string {
  return PALETTE[i % PALETTE.length] ?? '#000000';
}

// ---------------------------------------------------------------------------------------------
// Low-level helpers

/** Escapes text for XML content and attribute values; drops characters XML 1.0 forbids. */
export function escapeXml(s: string): string {
  return s
    // eslint-disable-next-line no-control-regex
    .replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/g, '')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&apos;');
}

/** A coordinate for an attribute: two decimals at most, never NaN/Infinity. */
function n(v: number): string {
  if (!Number.isFinite(v)) return '0';
  const r = Math.round(v * 100) / 100;
  return Object.is(r, -0) ? '0' : String(r);
}

/**
 * Approximate advance width of `s` in DejaVu Sans (the widest of the fonts in FONT_FAMILY, so
 * the layout leaves enough room for the others). Good enough to place labels without overlap.
 */
export function textWidth(s: string, size: number, bold = false): number {
  let em = 0;
  for (const ch of s) {
    if (/[ilj.,:;'|!]/.test(ch)) em += 0.3;
    else if (/[ frtI()[\]\-/]/.test(ch)) em += 0.4;
    else if (/[mwMW%@]/.test(ch)) em += 0.9;
    else if (/[A-Z]/.test(ch)) em += 0.72;
    else if (/[0-9]/.test(ch)) em += 0.64;
    else em += 0.6;
  }
  return em * size * (bold ? 1.1 : 1);
}

interface TextOpts {
  readonly size?: number;
  readonly anchor?: 'start' | 'middle' | 'end';
  readonly weight?: 'bold';
  readonly fill?: string;
  readonly rotate?: number;
  /** 'middle' centres the text vertically on y (resvg supports dominant-baseline). */
  readonly baseline?: 'middle' | 'hanging';
  /** a class naming the text's role (y-tick, x-tick, marker…), for readers and tests */
  readonly cls?: string;
}

function text(x: number, y: number, s: string, o: TextOpts = {}): string {
  const attrs = o.cls ? [`class="${o.cls}"`] : [];
  attrs.push(`x="${n(x)}"`, `y="${n(y)}"`, `font-size="${o.size ?? 12}"`);
  if (o.anchor && o.anchor !== 'start') attrs.push(`text-anchor="${o.anchor}"`);
  if (o.weight) attrs.push(`font-weight="${o.weight}"`);
  if (o.baseline) attrs.push(`dominant-baseline="${o.baseline === 'middle' ? 'central' : 'hanging'}"`);
  attrs.push(`fill="${o.fill ?? '#222'}"`);
  if (o.rotate) attrs.push(`transform="rotate(${o.rotate} ${n(x)} ${n(y)})"`);
  return `<text ${attrs.join(' ')}>${escapeXml(s)}</text>`;
}

function line(x1: number, y1: number, x2: number, y2: number, stroke: string, width = 1, dash?: string): string {
  const d = dash ? ` stroke-dasharray="${dash}"` : '';
  return `<line x1="${n(x1)}" y1="${n(y1)}" x2="${n(x2)}" y2="${n(y2)}" stroke="${stroke}" stroke-width="${width}"${d}/>`;
}

function rect(x: number, y: number, w: number, h: number, fill: string, extra = ''): string {
  return `<rect x="${n(x)}" y="${n(y)}" width="${n(Math.max(0, w))}" height="${n(Math.max(0, h))}" fill="${fill}"${extra}/>`;
}

/** Splits `s` into lines no wider than `maxWidth`, at most `maxLines` (the last one ellipsised). */
export function wrapText(s: string, maxWidth: number, size: number, maxLines: number, bold = false): string[] {
  const words = s.split(/\s+/).filter((w) => w !== '');
  const lines: string[] = [];
  let cur = '';
  for (const w of words) {
    const next = cur === '' ? w : `${cur} ${w}`;
    if (cur !== '' && textWidth(next, size, bold) > maxWidth) {
      lines.push(cur);
      cur = w;
    } else cur = next;
  }
  if (cur !== '') lines.push(cur);
  if (lines.length <= maxLines) return lines.map((l) => ellipsis(l, maxWidth, size, bold));
  const kept = lines.slice(0, maxLines);
  kept[maxLines - 1] = ellipsis(`${kept[maxLines - 1] ?? ''} ${lines.slice(maxLines).join(' ')}`, maxWidth, size, bold, true);
  return kept;
}

function ellipsis(s: string, maxWidth: number, size: number, bold: boolean, force = false): string {
  if (!force && textWidth(s, size, bold) <= maxWidth) return s;
  const chars = [...s];
  while (chars.length > 1 && textWidth(`${chars.join('')}…`, size, bold) > maxWidth) chars.pop();
  return `${chars.join('').trimEnd()}…`;
}

/** Canvas sizes: the default for nonsense, at least MIN_SIZE (room for a title, axes and a plot). */
const MIN_SIZE = 240;

function dim(v: number | undefined, fallback: number): number {
  return v !== undefined && Number.isFinite(v) && v > 0 ? Math.max(MIN_SIZE, Math.min(Math.round(v), 10_000)) : fallback;
}

/** The smallest plot height worth drawing; a canvas too short for it (a tall legend) grows. */
const MIN_PLOT = 60;

// ---------------------------------------------------------------------------------------------
// Ticks and number formatting

/** Beyond this magnitude a value is clamped: keeps step arithmetic away from overflowing to Infinity. */
const MAX_MAGNITUDE = 1e300;

function clampMagnitude(v: number): number {
  return Math.max(-MAX_MAGNITUDE, Math.min(MAX_MAGNITUDE, v));
}

/** Rounds away floating-point noise (0.30000000000000004 → 0.3) at the precision of `step`. */
function snap(v: number, step: number): number {
  const decimals = Math.max(0, Math.min(20, -Math.floor(Math.log10(step)) + 1));
  const r = Number(v.toFixed(decimals));
  return Object.is(r, -0) ? 0 : r;
}

/** The 1, 2 or 5 × 10^n step nearest to `raw` (on a log scale, as d3 does). */
export function niceStep(raw: number): number {
  if (!(raw > 0) || !Number.isFinite(raw)) return 1;
  const p = 10 ** Math.floor(Math.log10(raw));
  const f = raw / p;
  const m = f < Math.SQRT2 ? 1 : f < Math.sqrt(10) ? 2 : f < Math.sqrt(50) ? 5 : 10;
  return m * p;
}

/**
 * Evenly spaced "nice" ticks (multiples of 1, 2 or 5 × 10^n) covering [lo, hi]: the first is
 * ≤ lo, the last ≥ hi, roughly `target` of them. niceTicks(0, 3712) → [0, 1000, 2000, 3000, 4000].
 */
export function niceTicks(lo: number, hi: number, target = 6): number[] {
  let a = Number.isFinite(lo) ? clampMagnitude(lo) : 0;
  let b = Number.isFinite(hi) ? clampMagnitude(hi) : a + 1;
  if (a > b) [a, b] = [b, a];
  if (a === b) {
    const d = a === 0 ? 1 : Math.abs(a) * 0.1;
    a -= a === 0 ? 0 : d;
    b += d;
    if (a === b) b = a + 1; // below float resolution
  }
  const count = Math.max(2, Math.min(20, Math.round(target)));
  const step = niceStep((b - a) / (count - 1));
  const first = Math.floor(a / step + 1e-9);
  const last = Math.ceil(b / step - 1e-9);
  const ticks: number[] = [];
  for (let i = first; i <= last && ticks.length < 50; i++) ticks.push(snap(i * step, step));
  if (ticks.length < 2 || ticks.some((t) => !Number.isFinite(t))) return [0, 1];
  return ticks;
}

/**
 * Ticks for a log axis covering [lo, hi] (both > 0): powers of ten, with the 2 and 5 multiples
 * in between when the range spans few decades. logTicks(3, 700) → [1, 2, 5, 10, …, 500, 1000].
 */
export function logTicks(lo: number, hi: number): number[] {
  let a = Number.isFinite(lo) && lo > 0 ? Math.max(lo, 1e-300) : 1;
  let b = Number.isFinite(hi) && hi > 0 ? Math.min(hi, 1e300) : a * 10;
  if (a > b) [a, b] = [b, a];
  const e0 = Math.floor(Math.log10(a) + 1e-9);
  let e1 = Math.ceil(Math.log10(b) - 1e-9);
  if (e1 <= e0) e1 = e0 + 1;
  const decades = e1 - e0;
  const mults = decades <= 4 ? [1, 2, 5] : [1];
  const every = Math.max(1, Math.ceil(decades / 10)); // at most ~10 decades labelled
  const steps = Math.ceil(decades / every);
  const ticks: number[] = [];
  for (let i = 0; i <= steps; i++) {
    const e = e0 + i * every;
    for (const m of mults) {
      if (i === steps && m > 1) break;
      ticks.push(Number((m * 10 ** e).toPrecision(12)));
    }
  }
  return ticks.filter((t) => Number.isFinite(t) && t > 0);
}

/** A tick label: thousands separators ("3,000"), trimmed decimals, exponent form when huge or tiny. */
export function formatTick(v: number): string {
  if (!Number.isFinite(v)) return '';
  if (v === 0) return '0';
  const abs = Math.abs(v);
  if (abs >= 1e12 || abs < 1e-4) return v.toExponential(2).replace(/\.?0+e/, 'e').replace('e+', 'e');
  return v.toLocaleString('en-US', { maximumFractionDigits: 6 });
}

/** A value label on a bar: whole numbers from 100 up, a few significant digits below. */
export function formatValue(v: number): string {
  if (!Number.isFinite(v)) return '';
  const abs = Math.abs(v);
  if (abs >= 1e12 || (abs > 0 && abs < 1e-3)) return formatTick(v);
  const digits = abs >= 100 ? 0 : abs >= 10 ? 1 : abs >= 1 ? 2 : 3;
  return v.toLocaleString('en-US', { maximumFractionDigits: digits });
}

// ---------------------------------------------------------------------------------------------
// Shared layout

const PAD = 16;
const TITLE_SIZE = 18;
const LABEL_SIZE = 13;
const TICK_SIZE = 12;
const LEGEND_SIZE = 12;
const GRID = '#e3e3e3';
const GRID_MINOR = '#f1f1f1';
const AXIS = '#555';

interface LegendItem {
  readonly name: string;
  readonly color: string;
  readonly kind: 'line' | 'box';
  readonly dashed?: boolean;
}

/** Legend items in centred rows that wrap within [x0, x1]; returns the markup and its height. */
function legend(items: readonly LegendItem[], x0: number, x1: number, top: number): { svg: string; height: number } {
  if (items.length === 0) return { svg: '', height: 0 };
  const swatch = 24;
  const gap = 6;
  const spacing = 22;
  const rowH = 20;
  const maxItem = x1 - x0;
  const measured = items.map((it) => {
    const label = ellipsis(it.name, maxItem - swatch - gap, LEGEND_SIZE, false);
    return { ...it, label, w: swatch + gap + textWidth(label, LEGEND_SIZE) };
  });
  // One centred row when everything fits; otherwise a grid of equal columns, which reads
  // better than ragged rows when there are many series.
  const oneRow = measured.reduce((sum, it) => sum + it.w, 0) + spacing * (measured.length - 1);
  const colW = Math.max(...measured.map((it) => it.w));
  const cols = oneRow <= maxItem ? measured.length : Math.max(1, Math.floor((maxItem + spacing) / (colW + spacing)));
  const rowCount = Math.ceil(measured.length / cols);
  const blockW = oneRow <= maxItem ? oneRow : cols * colW + (cols - 1) * spacing;
  const parts: string[] = [];
  let x = x0 + (maxItem - blockW) / 2;
  measured.forEach((it, i) => {
    const col = i % cols;
    const cy = top + Math.floor(i / cols) * rowH + rowH / 2;
    if (col === 0) x = x0 + (maxItem - blockW) / 2;
    if (it.kind === 'line') parts.push(line(x, cy, x + swatch, cy, it.color, 2.5, it.dashed ? '6 4' : undefined));
    else parts.push(rect(x + 5, cy - 6, swatch - 10, 12, it.color));
    parts.push(text(x + swatch + gap, cy, it.label, { size: LEGEND_SIZE, baseline: 'middle' }));
    x += (oneRow <= maxItem ? it.w : colW) + spacing;
  });
  return { svg: `<g class="legend">${parts.join('')}</g>`, height: rowCount * rowH };
}

/** Title lines (wrapped to two at most); returns markup and the y below them. */
function title(s: string, width: number): { svg: string; bottom: number } {
  const lines = wrapText(s, width - 2 * PAD, TITLE_SIZE, 2, true);
  const svg = lines.map((l, i) => text(width / 2, PAD + TITLE_SIZE + i * (TITLE_SIZE + 4), l, { size: TITLE_SIZE, anchor: 'middle', weight: 'bold', fill: '#111' })).join('');
  return { svg, bottom: PAD + lines.length * (TITLE_SIZE + 4) + 4 };
}

function svgDocument(width: number, height: number, label: string, body: readonly string[]): string {
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" role="img" aria-label="${escapeXml(label)}" font-family="${FONT_FAMILY}">`,
    rect(0, 0, width, height, '#ffffff'),
    ...body,
    '</svg>',
    '',
  ].join('\n');
}

interface YAxis {
  readonly ticks: readonly number[];
  /** ticks that get a label (all of them except on crowded log axes) */
  readonly labelled: ReadonlySet<number>;
  readonly lo: number;
  readonly hi: number;
  readonly log: boolean;
}

/** A y axis over `values`; `floor` (yMin) fixes the bottom, linear axes include 0 otherwise. */
function yAxis(values: readonly number[], log: boolean, target: number, floor: number | undefined, headroom: number): YAxis {
  if (log) {
    const pos = values.filter((v) => v > 0);
    const fl = floor !== undefined && Number.isFinite(floor) && floor > 0 ? floor : undefined;
    const lo = fl ?? (pos.length ? Math.min(...pos) : 1);
    const hi = Math.max(pos.length ? Math.max(...pos) : lo * 10, lo);
    const all = logTicks(lo, hi === lo ? lo * 10 : hi);
    const bottom = fl ?? all[0] ?? 1;
    const top = all[all.length - 1] ?? bottom * 10;
    const ticks = all.filter((t) => t >= bottom * (1 - 1e-9));
    const powers = ticks.filter((t) => Math.abs(Math.log10(t) - Math.round(Math.log10(t))) < 1e-9);
    const labelled = new Set(ticks.length <= 12 || powers.length < 2 ? ticks : powers);
    return { ticks, labelled, lo: bottom, hi: top > bottom ? top : bottom * 10, log: true };
  }
  const fl = floor !== undefined && Number.isFinite(floor) ? clampMagnitude(floor) : undefined;
  const dataMin = values.length ? Math.min(...values) : 0;
  const dataMax = values.length ? Math.max(...values) : 1;
  let lo = fl ?? Math.min(0, dataMin);
  let hi = fl !== undefined ? Math.max(dataMax, fl) : Math.max(0, dataMax);
  // Headroom keeps value labels on the tallest bars inside the plot.
  const span = hi - lo;
  if (hi > 0) hi += span * headroom;
  if (lo < 0 && fl === undefined) lo -= span * headroom;
  if (!(hi > lo)) hi = lo === 0 ? 1 : lo + Math.abs(lo);
  lo = clampMagnitude(lo);
  hi = clampMagnitude(hi);
  const all = niceTicks(lo, hi, target);
  const bottom = fl ?? all[0] ?? 0;
  let top = all[all.length - 1] ?? 1;
  if (!(top > bottom)) top = bottom + 1;
  const ticks = all.filter((t) => t >= bottom - Math.abs(bottom) * 1e-9 && t <= top);
  return { ticks, labelled: new Set(ticks), lo: bottom, hi: top, log: false };
}

/** Maps a data value to a pixel between r0 (at lo) and r1 (at hi); off-scale values stay bounded. */
function scaler(lo: number, hi: number, r0: number, r1: number, log: boolean): (v: number) => number {
  const f = log ? (v: number) => Math.log10(Math.max(v, 1e-300)) : (v: number) => v;
  const d0 = f(lo);
  const d1 = f(hi);
  const span = d1 - d0 || 1;
  const range = r1 - r0;
  return (v: number) => {
    const t = (f(v) - d0) / span;
    // Far off-scale values (under a yMin, for instance) are clipped anyway; bounding them keeps
    // the coordinates small and finite.
    return r0 + Math.max(-10, Math.min(11, Number.isFinite(t) ? t : 0)) * range;
  };
}

function yLabelWidth(axis: YAxis): number {
  return Math.max(0, ...axis.ticks.filter((t) => axis.labelled.has(t)).map((t) => textWidth(formatTick(t), TICK_SIZE)));
}

function drawYGrid(axis: YAxis, y: (v: number) => number, left: number, right: number): string[] {
  const out: string[] = [];
  for (const t of axis.ticks) {
    const py = y(t);
    const minor = axis.log && !axis.labelled.has(t);
    out.push(line(left, py, right, py, minor ? GRID_MINOR : GRID));
  }
  return out;
}

function drawYLabels(axis: YAxis, y: (v: number) => number, left: number): string[] {
  const out: string[] = [];
  for (const t of axis.ticks) {
    if (!axis.labelled.has(t)) continue;
    const py = y(t);
    out.push(line(left - 5, py, left, py, AXIS));
    out.push(text(left - 8, py, formatTick(t), { size: TICK_SIZE, anchor: 'end', baseline: 'middle', fill: '#333', cls: 'y-tick' }));
  }
  return out;
}

/**
 * A clip-path id derived from the chart, so two charts inlined in one HTML page do not share
 * an id, while the same chart still renders byte-for-byte the same.
 */
function clipId(kind: string, title: string, w: number, h: number): string {
  let hash = 0x811c9dc5;
  for (const ch of `${kind}|${title}|${w}x${h}`) hash = Math.imul(hash ^ (ch.codePointAt(0) ?? 0), 0x01000193) >>> 0;
  return `plot-${kind}-${hash.toString(16)}`;
}

function noData(cx: number, cy: number): string {
  return text(cx, cy, 'No data', { size: 14, anchor: 'middle', baseline: 'middle', fill: '#888' });
}

// ---------------------------------------------------------------------------------------------
// Line chart

const finite = (v: number) => Number.isFinite(v);

/** A line chart: one polyline per series, optional log y axis and labelled vertical markers. */
export function lineChartSvg(chart: LineChart): string {
  const W = dim(chart.width, DEFAULT_WIDTH);
  const asked = dim(chart.height, DEFAULT_HEIGHT);
  const log = chart.yLog === true;
  const series = chart.series.map((s, i) => ({
    name: s.name,
    dashed: s.dashed === true,
    color: seriesColor(i),
    points: s.points.filter(([x, y]) => finite(x) && finite(y)).map(([x, y]) => [clampMagnitude(x), clampMagnitude(y)] as const),
  }));
  const markers = (chart.markers ?? []).filter((m) => finite(m.x));
  const usable = (y: number) => !log || y > 0;
  const xs = [...series.flatMap((s) => s.points.filter(([, y]) => usable(y)).map(([x]) => x)), ...markers.map((m) => m.x)];
  const ys = series.flatMap((s) => s.points.map(([, y]) => y).filter(usable));
  const hasData = ys.length > 0;

  const head = title(chart.title, W);
  const leg = legend(
    series.map((s) => ({ name: s.name, color: s.color, kind: 'line', dashed: s.dashed })),
    PAD,
    W - PAD,
    head.bottom,
  );
  const top = head.bottom + leg.height + (leg.height ? 12 : 4);
  const below = PAD + LABEL_SIZE + 8 + TICK_SIZE + 10;
  const H = Math.max(asked, top + MIN_PLOT + below);
  const plotBottom = H - below;
  const plotH = plotBottom - top;

  const yAx = yAxis(ys, log, Math.max(3, Math.min(8, Math.round(plotH / 55) + 1)), chart.yMin, 0);
  const left = PAD + LABEL_SIZE + 12 + yLabelWidth(yAx) + 10;

  // x domain: tight around the data (and markers), so lines reach both edges.
  let x0 = xs.length ? Math.min(...xs) : 0;
  let x1 = xs.length ? Math.max(...xs) : 1;
  if (x0 === x1) {
    const t = niceTicks(x0, x1, 3);
    x0 = t[0] ?? x0 - 1;
    x1 = t[t.length - 1] ?? x0 + 2;
  } else {
    // Snap an end to the next nice tick when that is nearly free (1..200 becomes 0..200).
    const t = niceTicks(x0, x1, Math.max(2, Math.round((W - 2 * PAD - left) / 90)));
    const near = (x1 - x0) * 0.05;
    if (x0 - (t[0] ?? x0) <= near) x0 = t[0] ?? x0;
    if ((t[t.length - 1] ?? x1) - x1 <= near) x1 = t[t.length - 1] ?? x1;
  }
  // Reserve room for the last x label, which is centred on its tick.
  let right = W - PAD - textWidth(formatTick(x1), TICK_SIZE) / 2;
  // As many x ticks as fit without their labels touching; the sparsest set of two or more when
  // none does.
  const inDomain = (t: number) => t >= x0 - (x1 - x0) * 1e-9 && t <= x1 + (x1 - x0) * 1e-9;
  let xTicks = niceTicks(x0, x1, 3).filter(inDomain);
  for (let target = Math.max(3, Math.round((right - left) / 90)); target >= 2; target--) {
    const candidate = niceTicks(x0, x1, target).filter(inDomain);
    if (candidate.length < 2) continue;
    xTicks = candidate;
    const widest = Math.max(...candidate.map((t) => textWidth(formatTick(t), TICK_SIZE)));
    if (((right - left) * (candidate[1]! - candidate[0]!)) / (x1 - x0) >= widest + 24) break;
  }
  right = Math.min(W - PAD, Math.max(left + 40, right));
  const x = scaler(x0, x1, left, right, false);
  const y = scaler(yAx.lo, yAx.hi, plotBottom, top, log);

  const body: string[] = [head.svg, leg.svg];
  body.push(...drawYGrid(yAx, y, left, right));
  for (const t of xTicks) body.push(line(x(t), top, x(t), plotBottom, GRID_MINOR));
  body.push(line(left, top, left, plotBottom, AXIS), line(left, plotBottom, right, plotBottom, AXIS));
  for (const t of xTicks) {
    body.push(line(x(t), plotBottom, x(t), plotBottom + 5, AXIS));
    body.push(text(x(t), plotBottom + 8 + TICK_SIZE, formatTick(t), { size: TICK_SIZE, anchor: 'middle', fill: '#333', cls: 'x-tick' }));
  }
  body.push(...drawYLabels(yAx, y, left));

  // Series, clipped to the plot (a yMin above some values must not draw over the axis labels).
  const clip = clipId('line', chart.title, W, H);
  body.push(`<clipPath id="${clip}">${rect(left, top - 3, right - left + 3, plotH + 6, '#fff')}</clipPath>`);
  const lines: string[] = [];
  for (const s of series) {
    // A skipped point (non-positive on a log axis) breaks the line rather than bridging it.
    const runs: (readonly [number, number])[][] = [[]];
    for (const p of s.points) {
      if (usable(p[1])) runs[runs.length - 1]!.push(p);
      else if (runs[runs.length - 1]!.length) runs.push([]);
    }
    const dash = s.dashed ? ' stroke-dasharray="7 5"' : '';
    for (const run of runs) {
      if (run.length >= 2) {
        const pts = run.map(([px, py]) => `${n(x(px))},${n(y(py))}`).join(' ');
        lines.push(`<polyline points="${pts}" fill="none" stroke="${s.color}" stroke-width="2.2" stroke-linejoin="round" stroke-linecap="round"${dash}/>`);
      }
    }
    // Dots when the points are few enough to read one by one (and always for a lone point).
    const visible = s.points.filter(([, py]) => usable(py));
    if (visible.length <= 25) {
      for (const [px, py] of visible) lines.push(`<circle cx="${n(x(px))}" cy="${n(y(py))}" r="3" fill="${s.color}"/>`);
    }
  }
  body.push(`<g clip-path="url(#${clip})">${lines.join('')}</g>`);

  // Markers: dashed vertical lines, labels stacked at the top so neighbours do not overlap.
  const taken: { x0: number; x1: number }[][] = [];
  for (const m of markers) {
    const px = x(m.x);
    body.push(line(px, top, px, plotBottom, '#444', 1.2, '5 4'));
    if (m.label.trim() === '') continue;
    const label = ellipsis(m.label, right - left - 8, 11, false);
    const w = textWidth(label, 11);
    const toRight = px + 4 + w <= right;
    const lx0 = toRight ? px + 4 : px - 4 - w;
    let level = 0;
    while (level < 6 && (taken[level] ?? []).some((r) => lx0 < r.x1 + 6 && lx0 + w > r.x0 - 6)) level++;
    (taken[level] ??= []).push({ x0: lx0, x1: lx0 + w });
    const ly = top + 4 + level * 16;
    body.push(rect(lx0 - 2, ly, w + 4, 15, '#ffffff', ' fill-opacity="0.85"'));
    body.push(text(toRight ? px + 4 : px - 4, ly + 7.5, label, { size: 11, anchor: toRight ? 'start' : 'end', baseline: 'middle', fill: '#333', cls: 'marker' }));
  }
  if (!hasData) body.push(noData((left + right) / 2, (top + plotBottom) / 2));

  body.push(text((left + right) / 2, H - PAD, chart.xLabel, { size: LABEL_SIZE, anchor: 'middle', fill: '#222' }));
  const yl = ellipsis(chart.yLabel, plotH + 20, LABEL_SIZE, false);
  body.push(text(PAD + LABEL_SIZE - 2, (top + plotBottom) / 2, yl, { size: LABEL_SIZE, anchor: 'middle', fill: '#222', rotate: -90 }));
  return svgDocument(W, H, chart.title, body);
}

// ---------------------------------------------------------------------------------------------
// Bar chart

/** Grouped bars: one group per label, one bar per series (a legend names them); null = no bar. */
export function barChartSvg(chart: BarChart): string {
  const W = dim(chart.width, DEFAULT_WIDTH);
  const asked = dim(chart.height, DEFAULT_HEIGHT);
  const log = chart.yLog === true;
  const nSeries = chart.seriesNames.length;
  const groups = chart.groups.map((g) => ({
    label: g.label,
    values: chart.seriesNames.map((_, i) => {
      const v = g.values[i];
      return v === null || v === undefined || !finite(v) || (log && v <= 0) ? null : clampMagnitude(v);
    }),
  }));
  const values = groups.flatMap((g) => g.values.filter((v): v is number => v !== null));

  const head = title(chart.title, W);
  const leg = legend(
    chart.seriesNames.map((name, i) => ({ name, color: seriesColor(i), kind: 'box' })),
    PAD,
    W - PAD,
    head.bottom,
  );
  const top = head.bottom + leg.height + (leg.height ? 12 : 4);

  // Group labels wrap under their group; the bottom margin grows with the longest.
  const yAxGuess = yAxis(values, log, 6, undefined, 0.08);
  const leftGuess = PAD + LABEL_SIZE + 12 + yLabelWidth(yAxGuess) + 10;
  const groupW = (W - PAD - leftGuess) / Math.max(1, groups.length);
  const labelLines = groups.map((g) => wrapText(g.label, Math.max(30, groupW - 8), TICK_SIZE, 3));
  const maxLines = Math.max(1, ...labelLines.map((l) => l.length));
  const below = PAD + maxLines * (TICK_SIZE + 3) + 8;
  const H = Math.max(asked, top + MIN_PLOT + below);
  const plotBottom = H - below;
  const plotH = plotBottom - top;
  const yAx = yAxis(values, log, Math.max(3, Math.min(8, Math.round(plotH / 55) + 1)), undefined, 0.08);
  const left = PAD + LABEL_SIZE + 12 + yLabelWidth(yAx) + 10;
  const right = W - PAD;
  const y = scaler(yAx.lo, yAx.hi, plotBottom, top, log);
  const base = log ? plotBottom : Math.max(top, Math.min(plotBottom, y(0)));

  const body: string[] = [head.svg, leg.svg];
  body.push(...drawYGrid(yAx, y, left, right));
  body.push(line(left, top, left, plotBottom, AXIS));
  body.push(...drawYLabels(yAx, y, left));

  const gw = (right - left) / Math.max(1, groups.length);
  // Bars fill 80% of their group, capped so a lone bar does not become a wall.
  const barW = nSeries ? Math.min(70, (gw * 0.8) / nSeries) : 0;
  const bars: string[] = [];
  const valueLabels: string[] = [];
  groups.forEach((g, gi) => {
    const cx = left + gw * (gi + 0.5);
    const start = cx - (barW * nSeries) / 2;
    g.values.forEach((v, si) => {
      if (v === null) return;
      const bx = start + si * barW + 1;
      const bw = Math.max(1, barW - 2);
      const py = y(v);
      const y0 = Math.min(py, base);
      const h = Math.max(v === 0 ? 0 : 1, Math.abs(base - py));
      bars.push(rect(bx, y0, bw, h, seriesColor(si)));
      const label = formatValue(v);
      if (textWidth(label, 11) <= barW + 8) {
        const above = v >= 0 || log;
        valueLabels.push(text(bx + bw / 2, above ? y0 - 4 : y0 + h + 12, label, { size: 11, anchor: 'middle', fill: '#333', cls: 'value' }));
      }
    });
    labelLines[gi]?.forEach((l, li) => {
      body.push(text(cx, plotBottom + 6 + (li + 1) * (TICK_SIZE + 3) - 2, l, { size: TICK_SIZE, anchor: 'middle', fill: '#222' }));
    });
  });
  const clip = clipId('bar', chart.title, W, H);
  body.push(`<clipPath id="${clip}">${rect(left, top - 16, right - left, plotH + 32, '#fff')}</clipPath>`);
  body.push(`<g clip-path="url(#${clip})">${bars.join('')}${valueLabels.join('')}</g>`);
  body.push(line(left, base, right, base, AXIS));
  if (values.length === 0) body.push(noData((left + right) / 2, (top + plotBottom) / 2));

  const yl = ellipsis(chart.yLabel, plotH + 20, LABEL_SIZE, false);
  body.push(text(PAD + LABEL_SIZE - 2, (top + plotBottom) / 2, yl, { size: LABEL_SIZE, anchor: 'middle', fill: '#222', rotate: -90 }));
  return svgDocument(W, H, chart.title, body);
}

// ---------------------------------------------------------------------------------------------
// PNG

/** Font files to look for, first found wins; any of them matches the FONT_FAMILY list's intent. */
const FONT_CANDIDATES: readonly (readonly [family: string, file: string])[] = [
  ['DejaVu Sans', '/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf'],
  ['DejaVu Sans', '/usr/share/fonts/dejavu/DejaVuSans.ttf'],
  ['DejaVu Sans', '/usr/share/fonts/TTF/DejaVuSans.ttf'],
  ['DejaVu Sans', '/usr/share/fonts/dejavu-sans-fonts/DejaVuSans.ttf'],
  ['Liberation Sans', '/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf'],
  ['Liberation Sans', '/usr/share/fonts/liberation-sans/LiberationSans-Regular.ttf'],
  ['Arial', '/System/Library/Fonts/Supplemental/Arial.ttf'],
  ['Arial', '/Library/Fonts/Arial.ttf'],
  ['Helvetica', '/System/Library/Fonts/Helvetica.ttc'],
  ['Arial', 'C:\\Windows\\Fonts\\arial.ttf'],
];

let fontChoice: { family: string; file: string } | null | undefined;

function pickFont(): { family: string; file: string } | null {
  if (fontChoice === undefined) {
    const hit = FONT_CANDIDATES.find(([, file]) => existsSync(file));
    fontChoice = hit ? { family: hit[0], file: hit[1] } : null;
  }
  return fontChoice;
}

/** Renders SVG to PNG with @resvg/resvg-js; uses DejaVu Sans (or any system font) when present. Returns the PNG bytes. */
export function svgToPng(svg: string): Buffer {
  const font = pickFont();
  // Without a known font, resvg falls back to the first system font it finds: the text still
  // renders, in whatever sans the machine has.
  const resvg = new Resvg(svg, {
    font: font
      ? { loadSystemFonts: true, fontFiles: [font.file], defaultFontFamily: font.family, sansSerifFamily: font.family }
      : { loadSystemFonts: true },
    fitTo: { mode: 'original' },
    background: '#ffffff',
    logLevel: 'off',
  });
  return resvg.render().asPng();
}

/** Writes <file>.svg and <file>.png (file without extension); returns both paths. */
export function writeChart(fileWithoutExt: string, svg: string): { svg: string; png: string } {
  const out = { svg: `${fileWithoutExt}.svg`, png: `${fileWithoutExt}.png` };
  mkdirSync(path.dirname(out.svg), { recursive: true });
  writeFileSync(out.svg, svg);
  writeFileSync(out.png, svgToPng(svg));
  return out;
}
