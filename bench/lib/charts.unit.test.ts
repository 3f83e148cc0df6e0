import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Resvg } from '@resvg/resvg-js';
import {
  barChartSvg,
  escapeXml,
  formatTick,
  formatValue,
  lineChartSvg,
  logTicks,
  niceStep,
  niceTicks,
  PALETTE,
  svgToPng,
  textWidth,
  wrapText,
  writeChart,
  type BarChart,
  type LineChart,
} from './charts.js';

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** Width and height from the IHDR chunk, which follows the signature. */
function pngSize(png: Buffer): { width: number; height: number } {
  expect(png.subarray(12, 16).toString('latin1')).toBe('IHDR');
  return { width: png.readUInt32BE(16), height: png.readUInt32BE(20) };
}

function svgSize(svg: string): { width: number; height: number } {
  const m = /^<svg [^>]*width="(\d+)" height="(\d+)"/.exec(svg);
  expect(m).not.toBeNull();
  return { width: Number(m![1]), height: Number(m![2]) };
}

/**
 * What every chart must satisfy: an <svg> document a strict XML parser accepts (resvg's parser
 * rejects unbalanced tags and bare `&`), no NaN/undefined/Infinity leaking into the markup, and
 * (unless off-scale values are expected) every coordinate inside the canvas.
 */
function expectSound(svg: string, opts: { inBounds?: boolean } = {}): void {
  expect(svg.startsWith('<svg ')).toBe(true);
  expect(svg.trimEnd().endsWith('</svg>')).toBe(true);
  expect(svg).not.toMatch(/NaN|undefined|Infinity|null/);
  expect(() => new Resvg(svg)).not.toThrow();
  if (opts.inBounds === false) return;
  const { width, height } = svgSize(svg);
  for (const m of svg.matchAll(/ (x|x1|x2|cx|width)="(-?[\d.e+]+)"/g)) {
    const v = Number(m[2]);
    expect(v).toBeGreaterThanOrEqual(0);
    expect(v).toBeLessThanOrEqual(width);
  }
  for (const m of svg.matchAll(/ (y|y1|y2|cy|height)="(-?[\d.e+]+)"/g)) {
    const v = Number(m[2]);
    expect(v).toBeGreaterThanOrEqual(0);
    expect(v).toBeLessThanOrEqual(height);
  }
  for (const m of svg.matchAll(/points="([^"]*)"/g)) {
    for (const pair of m[1]!.split(' ')) {
      const [px, py] = pair.split(',').map(Number);
      expect(px).toBeGreaterThanOrEqual(0);
      expect(px).toBeLessThanOrEqual(width);
      expect(py).toBeGreaterThanOrEqual(0);
      expect(py).toBeLessThanOrEqual(height);
    }
  }
}

/** The y coordinates of each polyline, in order. */
function polylines(svg: string): { x: number; y: number }[][] {
  return [...svg.matchAll(/<polyline points="([^"]*)"/g)].map((m) =>
    m[1]!.split(' ').map((pair) => {
      const [x, y] = pair.split(',').map(Number);
      return { x: x!, y: y! };
    }),
  );
}

/** Bars of one colour (the legend swatch, 12 px high and placed above the plot, is excluded). */
function bars(svg: string, color: string): { y: number; height: number }[] {
  return [...svg.matchAll(new RegExp(`<rect x="[^"]+" y="([^"]+)" width="[^"]+" height="([^"]+)" fill="${color}"/>`, 'g'))]
    .map((m) => ({ y: Number(m[1]), height: Number(m[2]) }))
    .filter((_, i) => i > 0);
}

const tickLabels = (svg: string) => [...svg.matchAll(/<text class="y-tick" [^>]*>([^<]*)</g)].map((m) => m[1]);

const baseLine: LineChart = {
  title: 'Throughput over time',
  xLabel: 'time (s)',
  yLabel: 'events / s',
  series: [
    { name: 'ingest', points: Array.from({ length: 40 }, (_, i) => [i, 3000 + 20 * i] as const) },
    { name: 'baseline', points: [[0, 3500], [39, 3500]], dashed: true },
  ],
  markers: [{ x: 12, label: 'delivery killed' }],
};

describe('niceTicks', () => {
  it('picks 1/2/5 × 10^n steps that cover the range', () => {
    expect(niceTicks(0, 3712, 5)).toEqual([0, 1000, 2000, 3000, 4000]);
    expect(niceTicks(0, 100)).toEqual([0, 20, 40, 60, 80, 100]);
    expect(niceTicks(0, 1)).toEqual([0, 0.2, 0.4, 0.6, 0.8, 1]);
    expect(niceTicks(-12.5, 30, 6)).toEqual([-20, -10, 0, 10, 20, 30]);
  });

  it('has no floating-point noise in the tick values', () => {
    const ticks = niceTicks(0.1, 0.7, 7);
    expect(ticks).toEqual([0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7]);
  });

  it('returns evenly spaced multiples of a 1, 2 or 5 step for arbitrary ranges', () => {
    for (const [lo, hi] of [[3, 97], [0, 1_234_567], [-0.003, 0.017], [17, 18], [1e9, 7e9]] as const) {
      const ticks = niceTicks(lo, hi);
      expect(ticks[0]!).toBeLessThanOrEqual(lo);
      expect(ticks[ticks.length - 1]!).toBeGreaterThanOrEqual(hi);
      expect(ticks.length).toBeGreaterThanOrEqual(3);
      expect(ticks.length).toBeLessThanOrEqual(11);
      const step = ticks[1]! - ticks[0]!;
      const mantissa = Number((step / 10 ** Math.floor(Math.log10(step))).toPrecision(6));
      expect([1, 2, 5]).toContain(mantissa);
      for (const t of ticks) expect(Math.abs(t / step - Math.round(t / step))).toBeLessThan(1e-6);
    }
  });

  it('widens a zero-width range, and survives swapped, non-finite and huge bounds', () => {
    expect(niceTicks(0, 0)).toEqual([0, 0.2, 0.4, 0.6, 0.8, 1]);
    const five = niceTicks(5, 5);
    expect(five[0]!).toBeLessThan(5);
    expect(five[five.length - 1]!).toBeGreaterThan(5);
    expect(niceTicks(100, 0)).toEqual(niceTicks(0, 100));
    for (const ticks of [niceTicks(Number.NaN, 10), niceTicks(0, Number.POSITIVE_INFINITY), niceTicks(0, Number.MAX_VALUE)]) {
      expect(ticks.length).toBeGreaterThanOrEqual(2);
      expect(ticks.every(Number.isFinite)).toBe(true);
    }
  });

  it('niceStep rounds to the nearest nice step', () => {
    expect(niceStep(742)).toBe(1000);
    expect(niceStep(130)).toBe(100);
    expect(niceStep(0.0031)).toBe(0.002);
    expect(niceStep(0.0035)).toBe(0.005);
    expect(niceStep(0)).toBe(1);
  });
});

describe('logTicks', () => {
  it('puts 2 and 5 multiples between powers of ten over a few decades', () => {
    expect(logTicks(3, 700)).toEqual([1, 2, 5, 10, 20, 50, 100, 200, 500, 1000]);
    expect(logTicks(0.02, 0.3)).toEqual([0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1]);
  });

  it('keeps only powers of ten, thinned, over many decades', () => {
    expect(logTicks(1, 1e9)).toEqual([1, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9]);
    const wide = logTicks(1e-200, 1e200);
    expect(wide.length).toBeLessThanOrEqual(12);
    expect(wide[0]!).toBeLessThanOrEqual(1e-200);
    expect(wide[wide.length - 1]!).toBeGreaterThanOrEqual(1e200);
  });

  it('covers a single value and ignores non-positive bounds', () => {
    expect(logTicks(10, 10)).toEqual([10, 20, 50, 100]);
    const ticks = logTicks(0, -5);
    expect(ticks.length).toBeGreaterThanOrEqual(2);
    expect(ticks.every((t) => t > 0 && Number.isFinite(t))).toBe(true);
  });
});

describe('formatting and text', () => {
  it('formats tick labels with thousands separators, trimmed decimals and exponents at the extremes', () => {
    expect(formatTick(3000)).toBe('3,000');
    expect(formatTick(1_234_567)).toBe('1,234,567');
    expect(formatTick(0.5)).toBe('0.5');
    expect(formatTick(-0)).toBe('0');
    expect(formatTick(-2500)).toBe('-2,500');
    expect(formatTick(1e15)).toBe('1e15');
    expect(formatTick(2.5e-7)).toBe('2.5e-7');
    expect(formatTick(Number.NaN)).toBe('');
  });

  it('formats bar values to a sensible precision', () => {
    expect(formatValue(50_040.4)).toBe('50,040');
    expect(formatValue(37.25)).toBe('37.3');
    expect(formatValue(0.1234)).toBe('0.123');
  });

  it('escapes XML special characters and drops forbidden control characters', () => {
    expect(escapeXml(`a & b <c> "d" 'e'\u0001`)).toBe('a &amp; b &lt;c&gt; &quot;d&quot; &apos;e&apos;');
  });

  it('wraps long text and ellipsises what does not fit', () => {
    const lines = wrapText('batched with a very long label that must wrap onto lines', 150, 12, 2);
    expect(lines).toHaveLength(2);
    expect(lines[1]!.endsWith('…')).toBe(true);
    expect(wrapText('short', 150, 12, 2)).toEqual(['short']);
  });
});

describe('lineChartSvg', () => {
  it('draws the title, axis labels, every series in the legend and as a line, at the default size', () => {
    const svg = lineChartSvg(baseLine);
    expectSound(svg);
    expect(svgSize(svg)).toEqual({ width: 900, height: 420 });
    for (const s of ['Throughput over time', 'time (s)', 'events / s', 'ingest', 'baseline']) expect(svg).toContain(`>${s}</text>`);
    expect(polylines(svg)).toHaveLength(2);
    expect(svg).toContain('font-family="DejaVu Sans, Liberation Sans, Arial, sans-serif"');
    expect(svg).toContain('fill="#ffffff"');
  });

  it('uses nice tick labels with thousands separators and gridlines', () => {
    const svg = lineChartSvg(baseLine);
    const labels = tickLabels(svg);
    expect(labels).toContain('3,000');
    expect(labels[0]).toBe('0');
    for (const l of labels) expect(Number(l!.replace(/,/g, '')) % 500).toBe(0);
    expect(svg.match(/stroke="#e3e3e3"/g)?.length).toBe(labels.length);
  });

  it('dashes only the dashed series, colours series from the palette and draws markers with their label', () => {
    const svg = lineChartSvg(baseLine);
    const lines = [...svg.matchAll(/<polyline [^>]*>/g)].map((m) => m[0]);
    expect(lines[0]).toContain(`stroke="${PALETTE[0]}"`);
    expect(lines[0]).not.toContain('stroke-dasharray');
    expect(lines[1]).toContain(`stroke="${PALETTE[1]}"`);
    expect(lines[1]).toContain('stroke-dasharray');
    expect(svg).toContain('>delivery killed</text>');
    expect(svg).toMatch(/<line [^>]*stroke="#444"[^>]*stroke-dasharray="5 4"\/>/);
  });

  it('maps larger values higher up, and the marker to its x position', () => {
    const svg = lineChartSvg(baseLine);
    const [ingest] = polylines(svg);
    expect(ingest![0]!.y).toBeGreaterThan(ingest![39]!.y);
    const x = (i: number) => ingest![i]!.x;
    const marker = /<line x1="([^"]+)" y1="[^"]+" x2="[^"]+" y2="[^"]+" stroke="#444"/.exec(svg);
    expect(Number(marker![1])).toBeCloseTo(x(12), 1);
  });

  it('escapes titles, labels, series names and marker labels', () => {
    const svg = lineChartSvg({
      title: 'A & B <c>',
      xLabel: 'x "quoted"',
      yLabel: "y's",
      series: [{ name: '<script>&', points: [[0, 1], [1, 2]] }],
      markers: [{ x: 0.5, label: 'kill & <restart>' }],
    });
    expectSound(svg);
    expect(svg).toContain('A &amp; B &lt;c&gt;');
    expect(svg).toContain('x &quot;quoted&quot;');
    expect(svg).toContain('y&apos;s');
    expect(svg).toContain('&lt;script&gt;&amp;');
    expect(svg).toContain('kill &amp; &lt;restart&gt;');
    expect(svg).not.toContain('<script>');
    expect(svg).not.toContain('<c>');
  });

  const edgeCases: readonly [string, LineChart][] = [
    ['no series', { ...baseLine, series: [], markers: [] }],
    ['empty points', { ...baseLine, series: [{ name: 'empty', points: [] }] }],
    ['a single point', { ...baseLine, series: [{ name: 'lonely', points: [[5, 7]] }], markers: [] }],
    ['all-equal values', { ...baseLine, series: [{ name: 'flat', points: [[0, 42], [1, 42], [2, 42]] }] }],
    ['all-zero values', { ...baseLine, series: [{ name: 'zeros', points: [[0, 0], [10, 0]] }] }],
    ['negative values', { ...baseLine, series: [{ name: 'neg', points: [[0, -5], [1, -50]] }] }],
    ['very large numbers', { ...baseLine, series: [{ name: 'huge', points: [[0, 1e15], [1, 1e300], [2, Number.MAX_VALUE]] }] }],
    ['non-finite points', { ...baseLine, series: [{ name: 'odd', points: [[0, Number.NaN], [1, Number.POSITIVE_INFINITY], [2, 3], [3, 4]] }] }],
    ['a log axis with no positive values', { ...baseLine, yLog: true, series: [{ name: 'nonpos', points: [[0, 0], [1, -3]] }] }],
    ['twelve series', { ...baseLine, width: 600, series: Array.from({ length: 12 }, (_, i) => ({ name: `series number ${i}`, points: [[0, i], [1, i * 2]] as const })) }],
    ['a tiny canvas', { ...baseLine, width: 100, height: 100 }],
    ['a legend taller than the canvas', { ...baseLine, height: 240, series: Array.from({ length: 40 }, (_, i) => ({ name: `a long series name, number ${i}`, points: [[0, i], [1, i]] as const })) }],
    ['nonsense sizes', { ...baseLine, width: Number.NaN, height: -3 }],
  ];

  it.each(edgeCases)('stays sound with %s', (_name, chart) => {
    const svg = lineChartSvg(chart);
    expectSound(svg);
    expect(svg).toContain(`aria-label="${chart.title}"`);
    for (const word of chart.title.split(' ')) expect(svg).toMatch(new RegExp(`<text [^>]*>[^<]*${word}`));
    expect(svg).toContain(`>${chart.xLabel}</text>`);
    for (const s of chart.series) expect(svg).toContain(`>${s.name}</text>`);
  });

  it('says "No data" when nothing can be drawn, and draws a lone point as a dot', () => {
    expect(lineChartSvg(edgeCases[0]![1])).toContain('>No data</text>');
    expect(lineChartSvg(edgeCases[1]![1])).toContain('>No data</text>');
    const single = lineChartSvg(edgeCases[2]![1]);
    expect(single).not.toContain('>No data</text>');
    expect(single.match(/<circle /g)).toHaveLength(1);
  });

  it('keeps two or more x tick labels, clear of each other, however narrow the canvas', () => {
    for (const width of [240, 400, 900, 2000]) {
      const svg = lineChartSvg({ ...baseLine, width, series: [{ name: 's', points: [[0, 1], [1_234_567, 2]] }] });
      const ticks = [...svg.matchAll(/<text class="x-tick" x="([^"]+)"[^>]*>([^<]*)</g)].map((m) => ({ x: Number(m[1]), w: textWidth(m[2]!, 12) }));
      expect(ticks.length).toBeGreaterThanOrEqual(2);
      for (let i = 1; i < ticks.length; i++) expect(ticks[i]!.x - ticks[i]!.w / 2).toBeGreaterThan(ticks[i - 1]!.x + ticks[i - 1]!.w / 2);
    }
  });

  it('gives twelve series twelve distinct colours', () => {
    const svg = lineChartSvg(edgeCases[9]![1]);
    const colours = new Set([...svg.matchAll(/<polyline [^>]*stroke="(#[0-9A-Fa-f]{6})"/g)].map((m) => m[1]));
    expect(colours.size).toBe(12);
  });

  it('on a log axis, ticks at powers of ten and skips non-positive values by breaking the line', () => {
    const svg = lineChartSvg({
      ...baseLine,
      yLog: true,
      markers: [],
      series: [{ name: 'p99', points: [[0, 3], [1, 30], [2, 0], [3, 300], [4, 700], [5, -1]] }],
    });
    expectSound(svg);
    expect(tickLabels(svg)).toEqual(['1', '2', '5', '10', '20', '50', '100', '200', '500', '1,000']);
    const lines = polylines(svg);
    expect(lines.map((l) => l.length)).toEqual([2, 2]);
    // Distance is proportional to the log of the ratio: 3→30 spans one decade, 300→700 log10(7/3).
    const [a, b] = lines;
    const decade = a![0]!.y - a![1]!.y;
    expect(decade).toBeGreaterThan(0);
    expect(b![0]!.y - b![1]!.y).toBeCloseTo(decade * Math.log10(700 / 300), 0);
  });

  it('starts the y axis at yMin and clips what lies below it', () => {
    const svg = lineChartSvg({ ...baseLine, yMin: 3000, markers: [] });
    expectSound(svg, { inBounds: false });
    const labels = tickLabels(svg);
    expect(labels[0]).toBe('3,000');
    expect(svg).toMatch(/<g clip-path="url\(#plot-line-[0-9a-f]+\)"><polyline/);
  });

  it('is deterministic', () => {
    expect(lineChartSvg(baseLine)).toBe(lineChartSvg(baseLine));
  });
});

describe('barChartSvg', () => {
  const base: BarChart = {
    title: 'Ingest throughput',
    yLabel: 'calls / s',
    seriesNames: ['eventrelay', 'bare Node'],
    groups: [
      { label: 'single', values: [1000, 2000] },
      { label: 'batched', values: [4000, null] },
    ],
  };

  it('draws one bar per non-null value, heights proportional to the values, with a legend', () => {
    const svg = barChartSvg(base);
    expectSound(svg);
    expect(svgSize(svg)).toEqual({ width: 900, height: 420 });
    for (const s of ['Ingest throughput', 'calls / s', 'eventrelay', 'bare Node', 'single', 'batched']) expect(svg).toContain(`>${s}</text>`);
    const first = bars(svg, PALETTE[0]!);
    const second = bars(svg, PALETTE[1]!);
    expect(first).toHaveLength(2);
    expect(second).toHaveLength(1);
    expect(second[0]!.height / first[0]!.height).toBeCloseTo(2, 2);
    expect(first[1]!.height / first[0]!.height).toBeCloseTo(4, 2);
    // Bars stand on the same baseline.
    expect(first[0]!.y + first[0]!.height).toBeCloseTo(second[0]!.y + second[0]!.height, 5);
    expect(svg).toContain('>4,000</text>');
    expect(tickLabels(svg)).toContain('4,000');
  });

  const edgeCases: readonly [string, BarChart][] = [
    ['no groups', { ...base, groups: [] }],
    ['no series', { ...base, seriesNames: [] }],
    ['only nulls', { ...base, groups: [{ label: 'a', values: [null, null] }] }],
    ['all-zero values', { ...base, groups: [{ label: 'a', values: [0, 0] }] }],
    ['all-equal values', { ...base, groups: [{ label: 'a', values: [7, 7] }, { label: 'b', values: [7, 7] }] }],
    ['negative values', { ...base, groups: [{ label: 'a', values: [-12.5, 30] }] }],
    ['short value arrays', { ...base, groups: [{ label: 'a', values: [] }, { label: 'b', values: [1] }] }],
    ['very large numbers', { ...base, groups: [{ label: 'a', values: [1e15, Number.MAX_VALUE] }] }],
    ['non-finite values', { ...base, groups: [{ label: 'a', values: [Number.NaN, Number.NEGATIVE_INFINITY] }] }],
    ['a log axis with zeros', { ...base, yLog: true, groups: [{ label: 'a', values: [0, 12] }, { label: 'b', values: [0.5, 340] }] }],
    ['long labels', { ...base, title: 'T & <t>', groups: Array.from({ length: 8 }, (_, i) => ({ label: `a rather long group label number ${i} & more`, values: [i, i + 1] })) }],
  ];

  it.each(edgeCases)('stays sound with %s', (_name, chart) => {
    const svg = barChartSvg(chart);
    expectSound(svg);
    expect(svg).toContain(`>${escapeXml(chart.title)}</text>`);
    for (const s of chart.seriesNames) expect(svg).toContain(`>${s}</text>`);
  });

  it('says "No data" when every value is null', () => {
    expect(barChartSvg(edgeCases[2]![1])).toContain('>No data</text>');
    expect(barChartSvg(base)).not.toContain('>No data</text>');
  });

  it('on a log axis, skips non-positive values and ticks at powers of ten', () => {
    const svg = barChartSvg(edgeCases[9]![1]);
    expect(bars(svg, PALETTE[0]!)).toHaveLength(1);
    expect(bars(svg, PALETTE[1]!)).toHaveLength(2);
    expect(tickLabels(svg)).toEqual(expect.arrayContaining(['1', '10', '100', '1,000']));
  });
});

describe('svgToPng and writeChart', () => {
  it('renders a PNG of the SVG size', () => {
    const svg = lineChartSvg(baseLine);
    const png = svgToPng(svg);
    expect(png.subarray(0, 8).equals(PNG_SIGNATURE)).toBe(true);
    expect(pngSize(png)).toEqual({ width: 900, height: 420 });
    const small = svgToPng(barChartSvg({ title: 't', yLabel: 'y', seriesNames: ['a'], groups: [{ label: 'g', values: [1] }], width: 640, height: 300 }));
    expect(pngSize(small)).toEqual({ width: 640, height: 300 });
  });

  it('renders the text (a font was found)', () => {
    const chart = { ...baseLine, series: [], markers: [] };
    const a = svgToPng(lineChartSvg({ ...chart, title: 'Title one' }));
    const b = svgToPng(lineChartSvg({ ...chart, title: 'Another title' }));
    expect(a.equals(b)).toBe(false);
  });

  it('writes <file>.svg and <file>.png, creating the directory', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'charts-'));
    try {
      const svg = barChartSvg({ title: 'w', yLabel: 'y', seriesNames: ['a'], groups: [{ label: 'g', values: [3] }] });
      const out = writeChart(path.join(dir, 'nested', 'chart'), svg);
      expect(out).toEqual({ svg: path.join(dir, 'nested', 'chart.svg'), png: path.join(dir, 'nested', 'chart.png') });
      expect(readFileSync(out.svg, 'utf8')).toBe(svg);
      const png = readFileSync(out.png);
      expect(png.subarray(0, 8).equals(PNG_SIGNATURE)).toBe(true);
      expect(pngSize(png)).toEqual({ width: 900, height: 420 });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
