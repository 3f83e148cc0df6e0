import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import type { ChartData } from '../lib/stats';

/**
 * A value between two empty buckets (one minute with errors or lag in an hour of none) has no
 * neighbour to draw a line to, and uPlot shows no points on a dense series: draw those as points.
 */
const lonePoints: uPlot.Series.Points.Filter = (u, seriesIdx, show) => {
  if (show) return null;
  const ys = u.data[seriesIdx] ?? [];
  const lone: number[] = [];
  ys.forEach((y, i) => {
    if (y != null && ys[i - 1] == null && ys[i + 1] == null) lone.push(i);
  });
  return lone.length > 0 ? lone : null;
};

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
      // A unit after each tick value needs room, or "7500 ms" is cut on the left.
      axes: [{}, { size: unit ? 72 : 50, ...(unit ? { values: (_u, ticks) => ticks.map((t) => `${t}${unit}`) } : {}) }],
      series: [
        {},
        ...lines.map((l) => ({ label: l.label, stroke: l.color, width: 1.5, spanGaps: false, points: { filter: lonePoints, size: 6 } })),
      ],
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
