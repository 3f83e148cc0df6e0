/**
 * GET /admin/v1/stats over real HTTP against real Redis: what the services' counters wrote comes
 * back per destination and source, in the right buckets of the hour and of the day, every
 * configured destination and source listed (zeros when idle), deleted ones not.
 */
import { Redis } from 'ioredis';
import { StatsCounters } from '@eventrelay/stores';
import { startTestAdmin, type TestAdmin } from '../../../test/support/admin';
import { deletePrefix, SHARED_REDIS_URL, uniquePrefix } from '@eventrelay/testkit';

const NOW = Date.UTC(2026, 10, 25, 12, 34, 30);

describe('GET /admin/v1/stats', () => {
  let redis: Redis;
  let prefix: string;
  let admin: TestAdmin;
  let now: number;

  beforeEach(async () => {
    redis = new Redis(SHARED_REDIS_URL, { maxRetriesPerRequest: 1 });
    prefix = uniquePrefix('admin-stats');
    now = NOW;
    admin = await startTestAdmin({ prefix, clock: () => now });
  });
  afterEach(async () => {
    await admin.close();
    await deletePrefix(SHARED_REDIS_URL, prefix);
    redis.disconnect();
  });

  async function configure(): Promise<void> {
    for (const id of ['src_b', 'src_a'])
      expect((await admin.call('POST', '/sources', { id, name: `Source ${id}`, type: 'server' })).status).toBe(201);
    for (const id of ['dst_b', 'dst_a'])
      expect(
        (
          await admin.call('POST', '/destinations', {
            id,
            name: 'Webhooks',
            enabled: true,
            sourceIds: ['src_a'],
            settings: { webhooks: [{ url: 'https://receiver.example/in' }] },
          })
        ).status,
      ).toBe(201);
  }

  it('answers the last hour by minute, with totals, for every destination and source', async () => {
    await configure();
    let at = NOW - 120_000; // two minutes ago
    const counters = new StatsCounters(redis, prefix, { clock: () => at });
    counters.countDestination('dst_a', { delivered: 3, attempts: 4, failed: 1, retrying: 1, lagsMs: [100, 200, 300] });
    counters.countSource('src_a', { accepted: 50, rejected: 10 });
    at = NOW;
    counters.countDestination('dst_a', { dead: 2, attempts: 2, failed: 2 });
    counters.countSource('src_a', { accepted: 10 });
    counters.countDestination('dst_gone', { delivered: 7 }); // not configured: not reported
    await counters.flush();

    const answer = await admin.call('GET', '/stats');
    expect(answer.status).toBe(200);
    const report = answer.body;
    expect(report).toMatchObject({ window: 'hour', bucketSeconds: 60, generatedAt: '2026-11-25T12:34:30.000Z' });
    expect(report.buckets).toHaveLength(60);
    expect(report.buckets.slice(-3)).toEqual(['2026-11-25T12:32:00.000Z', '2026-11-25T12:33:00.000Z', '2026-11-25T12:34:00.000Z']);
    expect(report.destinations.map((d: { id: string }) => d.id)).toEqual(['dst_a', 'dst_b']);
    const [dstA, dstB] = report.destinations;
    expect(dstA).toMatchObject({ id: 'dst_a', name: 'Webhooks', type: 'Webhooks', enabled: true });
    expect(dstA.series.delivered.slice(-3)).toEqual([3, 0, 0]);
    expect(dstA.series.deadLettered.slice(-3)).toEqual([0, 0, 2]);
    expect(dstA.series.lagMsAvg.slice(-3)).toEqual([200, null, null]);
    expect(dstA.series.lagMsMax.slice(-3)).toEqual([300, null, null]);
    expect(dstA.totals).toEqual({
      delivered: 3,
      retrying: 1,
      deadLettered: 2,
      attempts: 6,
      failedAttempts: 3,
      errorRatio: 0.5,
      lagMsAvg: 200,
      lagMsMax: 300,
    });
    expect(dstB.totals).toMatchObject({ delivered: 0, attempts: 0, errorRatio: null, lagMsAvg: null });
    expect(dstB.series.delivered).toEqual(new Array(60).fill(0));
    expect(report.sources.map((s: { id: string; name: string }) => [s.id, s.name])).toEqual([
      ['src_a', 'Source src_a'],
      ['src_b', 'Source src_b'],
    ]);
    expect(report.sources[0].series.accepted.slice(-3)).toEqual([50, 0, 10]);
    expect(report.sources[0].totals).toEqual({ accepted: 60, rejected: 10, callsPerMinute: Math.round((70 / 60) * 1000) / 1000 });

    // A deleted destination is no longer reported.
    expect((await admin.call('DELETE', '/destinations/dst_b')).status).toBe(204);
    expect((await admin.call('GET', '/stats')).body.destinations.map((d: { id: string }) => d.id)).toEqual(['dst_a']);
  });

  it('answers the last day by ten minutes, and refuses an unknown window', async () => {
    await configure();
    let at = NOW - 3 * 3600_000; // three hours ago: out of the hour, in the day
    const counters = new StatsCounters(redis, prefix, { clock: () => at });
    counters.countDestination('dst_a', { delivered: 5, lagsMs: [40] });
    at = NOW;
    counters.countDestination('dst_a', { delivered: 1, lagsMs: [80] });
    await counters.flush();

    const day = await admin.call('GET', '/stats?window=day');
    expect(day.status).toBe(200);
    expect(day.body).toMatchObject({ window: 'day', bucketSeconds: 600 });
    expect(day.body.buckets).toHaveLength(144);
    expect(day.body.buckets.at(-1)).toBe('2026-11-25T12:30:00.000Z');
    const delivered: number[] = day.body.destinations[0].series.delivered;
    expect(delivered).toHaveLength(144);
    expect(delivered.at(-1)).toBe(1);
    expect(delivered.at(-1 - 18)).toBe(5); // 09:30, 18 ten-minute buckets before 12:30
    expect(day.body.destinations[0].totals).toMatchObject({ delivered: 6, lagMsAvg: 60, lagMsMax: 80 });

    const hour = await admin.call('GET', '/stats?window=hour');
    expect(hour.body.destinations[0].totals.delivered).toBe(1);

    const bad = await admin.call('GET', '/stats?window=week');
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe('invalid_request');
  });
});
