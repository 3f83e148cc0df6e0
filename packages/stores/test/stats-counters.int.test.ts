/**
 * The stats counters against real Redis: counts land in the bucket of the time they were counted,
 * at both resolutions; lag keeps a sum, a count and a maximum; every bucket expires; and a flush is
 * one Redis command however much it carries (watched with MONITOR, filtered by this test's prefix).
 */
import { Redis } from 'ioredis';
import { keyspace } from '@eventrelay/config';
import { STATS_RESOLUTIONS, StatsCounters } from '../src/stats-counters';
import { deletePrefix, eventually, SHARED_REDIS_URL, uniquePrefix } from '@eventrelay/testkit';

// 00:09:30 UTC: the next minute is in the next ten-minute bucket too.
const T0 = Date.UTC(2026, 0, 1, 0, 9, 30);
const minute = (t: number) => Math.floor(t / 60_000);
const tenMinutes = (t: number) => Math.floor(t / 600_000);

describe('StatsCounters', () => {
  let redis: Redis;
  let prefix: string;
  let now: number;
  const clock = () => now;

  beforeEach(() => {
    redis = new Redis(SHARED_REDIS_URL, { maxRetriesPerRequest: 1 });
    prefix = uniquePrefix('stats');
    now = T0;
  });
  afterEach(async () => {
    await deletePrefix(SHARED_REDIS_URL, prefix);
    redis.disconnect();
  });

  it('with shards, counts each destination and source on its own shard and reads them merged', async () => {
    const keys = keyspace(prefix, 4);
    try {
      const stats = new StatsCounters(redis, keys, { clock });
      const ids = Array.from({ length: 12 }, (_, i) => `dst_${i}`);
      for (const id of ids) stats.countDestination(id, { delivered: 1 });
      stats.countSource('src_a', { accepted: 3 });
      await stats.flush();
      const [bucket] = await stats.read('1m', [minute(T0)]);
      expect(bucket).toEqual({ ...Object.fromEntries(ids.map((id) => [`d:${id}:delivered`, '1'])), 's:src_a:accepted': '3' });
      // Each count is in its id's shard, and nothing is at home.
      for (const id of ids) expect(await redis.hget(`${keys.destinationPrefix(id)}:stats:1m:${minute(T0)}`, `d:${id}:delivered`)).toBe('1');
      expect(new Set(ids.map((id) => keys.deliverShardOf(id))).size).toBeGreaterThan(1);
      expect(await redis.exists(`${prefix}:stats:1m:${minute(T0)}`)).toBe(0);
    } finally {
      for (const shard of keys.prefixes) await deletePrefix(SHARED_REDIS_URL, shard);
    }
  });

  it('counts in the buckets of the time counted, one-minute and ten-minute', async () => {
    const stats = new StatsCounters(redis, prefix, { clock });
    stats.countDestination('dst_a', { delivered: 2, attempts: 3, failed: 1, retrying: 1 });
    stats.countSource('src_a', { accepted: 5, rejected: 1 });
    now += 60_000;
    stats.countDestination('dst_a', { delivered: 1, attempts: 1, dead: 4 });
    stats.countDestination('dst_b', { attempts: 2, failed: 2 });
    stats.countSource('src_a', { accepted: 7 });
    await stats.flush();

    const [first, second] = await stats.read('1m', [minute(T0), minute(T0) + 1]);
    expect(first).toEqual({
      'd:dst_a:delivered': '2',
      'd:dst_a:attempts': '3',
      'd:dst_a:failed': '1',
      'd:dst_a:retrying': '1',
      's:src_a:accepted': '5',
      's:src_a:rejected': '1',
    });
    expect(second).toEqual({
      'd:dst_a:delivered': '1',
      'd:dst_a:attempts': '1',
      'd:dst_a:dead': '4',
      'd:dst_b:attempts': '2',
      'd:dst_b:failed': '2',
      's:src_a:accepted': '7',
    });
    // 00:09 and 00:10 are in two ten-minute buckets; a bucket before them is empty.
    expect(await stats.read('10m', [tenMinutes(T0) - 1, tenMinutes(T0), tenMinutes(T0) + 1])).toEqual([{}, first, second]);

    // Counts of later flushes in the same minute add up.
    stats.countDestination('dst_a', { delivered: 10 });
    await stats.flush();
    expect((await stats.read('1m', [minute(now)]))[0]?.['d:dst_a:delivered']).toBe('11');
    expect((await stats.read('10m', [tenMinutes(now)]))[0]?.['d:dst_a:delivered']).toBe('11');
  });

  it('keeps the lag as a sum, a count and the largest, across flushes and writers', async () => {
    const one = new StatsCounters(redis, prefix, { clock });
    const other = new StatsCounters(redis, prefix, { clock });
    one.countDestination('dst_a', { delivered: 2, lagsMs: [100.4, 300] });
    await one.flush();
    one.countDestination('dst_a', { delivered: 1, lagsMs: [50] });
    other.countDestination('dst_a', { delivered: 1, lagsMs: [250] });
    await Promise.all([one.flush(), other.flush()]);
    const [bucket] = await one.read('1m', [minute(T0)]);
    expect(bucket).toMatchObject({ 'd:dst_a:lagSum': '700', 'd:dst_a:lagCount': '4', 'd:dst_a:lagMax': '300' });

    other.countDestination('dst_a', { delivered: 1, lagsMs: [900] });
    await other.flush();
    expect((await one.read('10m', [tenMinutes(T0)]))[0]).toMatchObject({ 'd:dst_a:lagCount': '5', 'd:dst_a:lagMax': '900' });
  });

  it('writes what is counted on its own once started, and at close', async () => {
    const stats = new StatsCounters(redis, prefix, { clock, flushMs: 20 });
    stats.start();
    stats.countSource('src_a', { accepted: 2 });
    await eventually(async () => expect((await stats.read('1m', [minute(T0)]))[0]).toEqual({ 's:src_a:accepted': '2' }));
    stats.countSource('src_a', { rejected: 1 });
    await stats.close();
    expect((await stats.read('1m', [minute(T0)]))[0]).toEqual({ 's:src_a:accepted': '2', 's:src_a:rejected': '1' });
  });

  it('keeps a bounded number of keys, each expiring within its retention', async () => {
    const stats = new StatsCounters(redis, prefix, { clock });
    // 200 flushes over 100 minutes.
    for (let i = 0; i < 200; i++) {
      stats.countDestination('dst_a', { delivered: 1, attempts: 1 });
      await stats.flush();
      now += 30_000;
    }
    const oneMinute = await redis.keys(`${prefix}:stats:1m:*`);
    const tenMinute = await redis.keys(`${prefix}:stats:10m:*`);
    expect(oneMinute).toHaveLength(101); // 00:09 to 01:49
    expect(tenMinute).toHaveLength(11); // 00:09 to 01:49
    for (const [keys, resolution] of [
      [oneMinute, '1m'],
      [tenMinute, '10m'],
    ] as const) {
      for (const key of keys) {
        const ttl = await redis.ttl(key);
        expect(ttl).toBeGreaterThan(0);
        expect(ttl).toBeLessThanOrEqual(STATS_RESOLUTIONS[resolution].retentionSeconds);
      }
    }
    expect(STATS_RESOLUTIONS['1m'].retentionSeconds).toBeGreaterThanOrEqual(3600 + 60);
    expect(STATS_RESOLUTIONS['10m'].retentionSeconds).toBeGreaterThanOrEqual(86_400 + 600);
  });

  it('writes a flush as one Redis command, however many counts and buckets it carries', async () => {
    const stats = new StatsCounters(redis, prefix, { clock });
    // The first flush may load the script (EVALSHA answered NOSCRIPT, then EVAL): not counted.
    stats.countSource('src_warm', { accepted: 1 });
    await stats.flush();

    const monitor = await redis.monitor();
    const seen: string[][] = [];
    // The commands a script runs are reported too, with the source "lua": only what clients sent counts.
    monitor.on('monitor', (_time: string, args: string[], source: string) => {
      if (source !== 'lua' && args.some((a) => a.startsWith(prefix))) seen.push(args);
    });
    try {
      for (let flush = 0; flush < 3; flush++) {
        for (let call = 0; call < 500; call++) {
          stats.countDestination(`dst_${call % 7}`, { delivered: 1, attempts: 2, failed: 1, lagsMs: [call] });
          stats.countSource(`src_${call % 3}`, { accepted: 1 });
          if (call === 250) now += 60_000; // this flush spans a minute boundary
        }
        await stats.flush();
      }
      // MONITOR reports in order: once the marker is seen, every flush before it has been.
      const marker = `${prefix}:marker`;
      await redis.get(marker);
      await eventually(() => expect(seen.some((args) => args.includes(marker))).toBe(true));
      const flushes = seen.filter((args) => !args.includes(marker));
      expect(flushes.map((args) => args[0]?.toLowerCase())).toEqual(['evalsha', 'evalsha', 'evalsha']);
      // Each carries two minutes: their one-minute and ten-minute buckets.
      expect(flushes.map((args) => Number(args[2]))).toEqual([4, 4, 4]);
    } finally {
      monitor.disconnect();
    }
    const [bucket] = await stats.read('1m', [minute(T0) + 3]);
    expect(bucket?.['d:dst_0:delivered']).toBeDefined();
  });
});
