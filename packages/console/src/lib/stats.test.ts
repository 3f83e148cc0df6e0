import {
  errorChart,
  formatMs,
  formatRatio,
  lagChart,
  needsAttention,
  outcomeChart,
  sourceChart,
  type DestinationStats,
  type Stats,
} from './stats';

const destination: DestinationStats = {
  id: 'dst_1',
  name: 'Webhooks',
  type: 'Webhooks',
  enabled: true,
  series: {
    delivered: [1, 5, 0],
    retrying: [0, 1, 0],
    deadLettered: [0, 0, 2],
    attempts: [1, 10, 0],
    failedAttempts: [0, 3, 0],
    lagMsAvg: [12, null, 40],
    lagMsMax: [20, null, 90],
  },
  totals: { delivered: 6, retrying: 1, deadLettered: 2, attempts: 11, failedAttempts: 3, errorRatio: 3 / 11, lagMsAvg: 26, lagMsMax: 90 },
};

const stats: Stats = {
  window: 'hour',
  bucketSeconds: 60,
  generatedAt: '2026-01-01T00:03:00.000Z',
  buckets: ['2026-01-01T00:00:00.000Z', '2026-01-01T00:01:00.000Z', '2026-01-01T00:02:00.000Z'],
  destinations: [destination],
  sources: [
    { id: 'src_1', name: 'Web', series: { accepted: [4], rejected: [1] }, totals: { accepted: 4, rejected: 1, callsPerMinute: 1.67 } },
  ],
};

const T0 = Date.parse('2026-01-01T00:00:00.000Z') / 1000;

describe('stats as chart series', () => {
  it('puts the outcomes on Unix-second buckets', () => {
    expect(outcomeChart(stats, destination)).toEqual([
      [T0, T0 + 60, T0 + 120],
      [1, 5, 0],
      [0, 1, 0],
      [0, 0, 2],
    ]);
  });

  it('computes the error ratio per bucket in percent, with no point where nothing was attempted', () => {
    expect(errorChart(stats, destination)[1]).toEqual([0, 30, null]);
  });

  it('keeps lag gaps as null so the line breaks', () => {
    expect(lagChart(stats, destination).slice(1)).toEqual([
      [12, null, 40],
      [20, null, 90],
    ]);
  });

  it('pads a series shorter than the window at the start', () => {
    expect(sourceChart(stats, stats.sources[0]!).slice(1)).toEqual([
      [0, 0, 4],
      [0, 0, 1],
    ]);
  });

  it('formats totals and flags destinations that need attention', () => {
    expect(formatRatio(null)).toBe('—');
    expect(formatRatio(3 / 11)).toBe('27.3 %');
    expect(formatMs(26.4)).toBe('26 ms');
    expect(formatMs(12_345)).toBe('12.3 s');
    expect(needsAttention(destination)).toBe(true);
    expect(needsAttention({ ...destination, totals: { ...destination.totals, deadLettered: 0, errorRatio: 0.01 } })).toBe(false);
  });
});
