import type { Destination, Source } from '@eventrelay/config';
import { buildStatsReport, planWindow } from './stats';

const NOW = Date.UTC(2026, 10, 25, 12, 34, 56, 789);
const source = (id: string, name = id): Source => ({ id, name, type: 'server', writeKey: `wk_${id}_0000000` });
const destination = (id: string, enabled = true): Destination => ({
  id,
  name: 'Webhooks',
  enabled,
  sourceIds: [],
  settings: { webhooks: [{ url: 'https://a.example/in' }] },
});
const none = { destinations: [], sources: [] };

describe('planWindow', () => {
  it('covers the last hour as 60 one-minute buckets, the current minute last', () => {
    const plan = planWindow('hour', NOW);
    expect(plan).toMatchObject({ window: 'hour', resolution: '1m', bucketSeconds: 60 });
    expect(plan.buckets).toHaveLength(60);
    expect(plan.buckets.at(-1)).toBe(Math.floor(NOW / 60_000));
    expect(plan.buckets[0]).toBe(Math.floor(NOW / 60_000) - 59);
    const report = buildStatsReport(plan, [], none, NOW);
    expect(report.buckets.at(-1)).toBe('2026-11-25T12:34:00.000Z');
    expect(report.buckets[0]).toBe('2026-11-25T11:35:00.000Z');
  });

  it('covers the last day as 144 ten-minute buckets, the current one last', () => {
    const plan = planWindow('day', NOW);
    expect(plan).toMatchObject({ window: 'day', resolution: '10m', bucketSeconds: 600 });
    expect(plan.buckets).toHaveLength(144);
    const report = buildStatsReport(plan, [], none, NOW);
    expect(report.buckets.at(-1)).toBe('2026-11-25T12:30:00.000Z');
    expect(report.buckets[0]).toBe('2026-11-24T12:40:00.000Z');
    expect(report.generatedAt).toBe('2026-11-25T12:34:56.789Z');
  });
});

describe('buildStatsReport', () => {
  it('merges bucket fields into series and totals per destination', () => {
    const plan = planWindow('hour', NOW);
    const raw: Record<string, string>[] = plan.buckets.map(() => ({}));
    raw[57] = {
      'd:d1:delivered': '3',
      'd:d1:attempts': '4',
      'd:d1:failed': '1',
      'd:d1:retrying': '1',
      'd:d1:lagSum': '300',
      'd:d1:lagCount': '3',
      'd:d1:lagMax': '150',
    };
    raw[59] = {
      'd:d1:delivered': '1',
      'd:d1:attempts': '4',
      'd:d1:failed': '3',
      'd:d1:dead': '2',
      'd:d1:lagSum': '500',
      'd:d1:lagCount': '1',
      'd:d1:lagMax': '500',
    };
    const [d1] = buildStatsReport(plan, raw, { destinations: [destination('d1')], sources: [] }, NOW).destinations;
    expect(d1).toMatchObject({ id: 'd1', name: 'Webhooks', type: 'Webhooks', enabled: true });
    expect(d1?.series.delivered.slice(56)).toEqual([0, 3, 0, 1]);
    expect(d1?.series.deadLettered.slice(56)).toEqual([0, 0, 0, 2]);
    expect(d1?.series.retrying.slice(56)).toEqual([0, 1, 0, 0]);
    expect(d1?.series.failedAttempts.slice(56)).toEqual([0, 1, 0, 3]);
    expect(d1?.series.lagMsAvg.slice(56)).toEqual([null, 100, null, 500]);
    expect(d1?.series.lagMsMax.slice(56)).toEqual([null, 150, null, 500]);
    for (const series of Object.values(d1?.series ?? {})) expect(series).toHaveLength(60);
    expect(d1?.totals).toEqual({
      delivered: 4,
      retrying: 1,
      deadLettered: 2,
      attempts: 8,
      failedAttempts: 4,
      errorRatio: 0.5,
      lagMsAvg: 200,
      lagMsMax: 500,
    });
  });

  it('lists every configured destination and source by id, zeros when idle, and ignores deleted ones', () => {
    const plan = planWindow('day', NOW);
    const raw = plan.buckets.map(() => ({ 'd:gone:delivered': '9', 's:gone:accepted': '9' }));
    const report = buildStatsReport(
      plan,
      raw,
      { destinations: [destination('d2', false), destination('d1')], sources: [source('s2', 'Two'), source('s1', 'One')] },
      NOW,
    );
    expect(report.destinations.map((d) => [d.id, d.enabled])).toEqual([
      ['d1', true],
      ['d2', false],
    ]);
    expect(report.destinations[0]?.totals).toEqual({
      delivered: 0,
      retrying: 0,
      deadLettered: 0,
      attempts: 0,
      failedAttempts: 0,
      errorRatio: null,
      lagMsAvg: null,
      lagMsMax: null,
    });
    expect(report.destinations[0]?.series.delivered).toEqual(new Array(144).fill(0));
    expect(report.sources).toEqual([
      {
        id: 's1',
        name: 'One',
        series: { accepted: new Array(144).fill(0), rejected: new Array(144).fill(0) },
        totals: { accepted: 0, rejected: 0, callsPerMinute: 0 },
      },
      {
        id: 's2',
        name: 'Two',
        series: { accepted: new Array(144).fill(0), rejected: new Array(144).fill(0) },
        totals: { accepted: 0, rejected: 0, callsPerMinute: 0 },
      },
    ]);
  });

  it("gives a source's calls per minute over the whole window", () => {
    const hour = planWindow('hour', NOW);
    const raw: Record<string, string>[] = hour.buckets.map(() => ({ 's:s1:accepted': '2' }));
    raw[0] = { 's:s1:accepted': '2', 's:s1:rejected': '60' };
    const [s1] = buildStatsReport(hour, raw, { destinations: [], sources: [source('s1')] }, NOW).sources;
    expect(s1?.totals).toEqual({ accepted: 120, rejected: 60, callsPerMinute: 3 });
    expect(s1?.series.rejected.slice(0, 2)).toEqual([60, 0]);

    const day = planWindow('day', NOW);
    const [s1Day] = buildStatsReport(day, [{ 's:s1:accepted': '1440' }], { destinations: [], sources: [source('s1')] }, NOW).sources;
    expect(s1Day?.totals.callsPerMinute).toBe(1);
    expect(s1Day?.series.accepted.slice(0, 2)).toEqual([1440, 0]);
  });
});
