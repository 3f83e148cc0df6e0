import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import type { ChartData } from '../lib/stats';

export interface Line {
  readonly label: string;
  readonly color: string;
}

/**
 * A uPlot time chart that follows its container's width. The canvas is not readable by screen
 * readers, so `summary` (the totals in words) is given as its accessible name, and a table of
 * totals sits next to it on every screen that draws one.
 */
export function Chart({
  title,
  summary,
  data,
  lines,
  unit,
}: {
  title: string;
  summary: string;
  data: ChartData;
  lines: readonly Line[];
  unit?: string;
}) {
  const box = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);

  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const opts: uPlot.Options = {
      width: Math.max(200, el.clientWidth),
      height: 160,
      legend: { show: true },
      cursor: { drag: { x: false, y: false } },
      scales: { x: { time: true } },
      axes: [{}, { size: 50, ...(unit ? { values: (_u, ticks) => ticks.map((t) => `${t}${unit}`) } : {}) }],
      series: [{}, ...lines.map((l) => ({ label: l.label, stroke: l.color, width: 1.5, spanGaps: false }))],
    };
    const chart = new uPlot(opts, data, el);
    plot.current = chart;
    const resize = new ResizeObserver(() => chart.setSize({ width: Math.max(200, el.clientWidth), height: 160 }));
    resize.observe(el);
    return () => {
      resize.disconnect();
      chart.destroy();
      plot.current = null;
    };
    // The chart is rebuilt only when its shape changes; new data goes through setData below.
  }, [lines.length, unit]);

  useEffect(() => {
    plot.current?.setData(data);
  }, [data]);

  return (
    <figure class="chart">
      <figcaption>{title}</figcaption>
      <div ref={box} role="img" aria-label={`${title}: ${summary}`} />
    </figure>
  );
}
