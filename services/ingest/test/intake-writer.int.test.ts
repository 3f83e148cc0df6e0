/** The coalescing writer against real Redis: same-tick dedupe, rate windows, all-or-nothing. */
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { queueCatalog, type NormalizedCall, type RouteJob } from '@eventrelay/config';
import { IntakeWriter } from '../src/adapters/intake-writer';
import { SHARED_REDIS_URL, deletePrefix, uniquePrefix } from '../../../test/support/redis';

const call = (messageId: string): NormalizedCall => ({ type: 'track', event: 'E', userId: 'u', messageId, timestamp: '2026-11-21T09:30:00.000Z', receivedAt: '2026-11-21T09:30:00.000Z' });

describe('IntakeWriter', () => {
  const prefix = uniquePrefix('writer');
  const redis = new Redis(SHARED_REDIS_URL);
  const queue = new Queue<RouteJob>(queueCatalog.route.name, { connection: redis, prefix });
  let now = Date.parse('2026-11-21T09:30:00.000Z');
  const markFailures: unknown[] = [];
  const writer = new IntakeWriter({ redis, queue, prefix, dedupeWindowSeconds: 60, clock: () => now, onMarkFailed: (e) => markFailures.push(e) });
  const jobs = async () => (await queue.getJobs(['wait'], 0, -1, true)).map((j) => j.data);

  afterAll(async () => {
    await queue.close();
    await deletePrefix(SHARED_REDIS_URL, prefix);
    redis.disconnect();
  });

  it('enqueues a messageId submitted twice in the same tick once, and answers both as accepted', async () => {
    const [a, b] = await Promise.all([
      writer.submit({ sourceId: 's1', requestId: 'r1', ratePerSecond: 100, calls: [call('same'), call('other')] }),
      writer.submit({ sourceId: 's1', requestId: 'r2', ratePerSecond: 100, calls: [call('same')] }),
    ]);
    expect(a).toEqual({ kind: 'accepted', enqueued: 2, duplicates: 0, duplicateIndexes: [] });
    expect(b).toEqual({ kind: 'accepted', enqueued: 0, duplicates: 1, duplicateIndexes: [0] });
    const queued = await jobs();
    expect(queued.map((j) => [j.requestId, j.calls.map((c) => c.messageId)])).toEqual([['r1', ['same', 'other']]]);
  });

  it('scopes dedupe to the source', async () => {
    const r = await writer.submit({ sourceId: 's2', requestId: 'r3', ratePerSecond: 100, calls: [call('same')] });
    expect(r).toEqual({ kind: 'accepted', enqueued: 1, duplicates: 0, duplicateIndexes: [] });
  });

  it('counts requests per source per second and opens a new window each second', async () => {
    const submit = (i: number) => writer.submit({ sourceId: 's3', requestId: `rl-${now}-${i}`, ratePerSecond: 2, calls: [call(`rl-${now}-${i}`)] });
    const first = await Promise.all([submit(1), submit(2), submit(3)]);
    expect(first.map((r) => r.kind)).toEqual(['accepted', 'accepted', 'rate_limited']);
    expect(first[2]).toEqual({ kind: 'rate_limited', resetAtEpochSeconds: Math.floor(now / 1000) + 1 });
    now += 1000;
    expect((await submit(4)).kind).toBe('accepted');
    expect(markFailures).toEqual([]);
  });

  it('rejects every submission of a flush with service_unavailable when Redis is unreachable', async () => {
    const dead = new Redis('redis://127.0.0.1:1', { enableOfflineQueue: false, maxRetriesPerRequest: 0, lazyConnect: true, retryStrategy: () => null });
    dead.on('error', () => undefined);
    const deadQueue = new Queue<RouteJob>(queueCatalog.route.name, { connection: dead, prefix });
    deadQueue.on('error', () => undefined);
    const w = new IntakeWriter({ redis: dead, queue: deadQueue, prefix, dedupeWindowSeconds: 60, clock: () => now, onMarkFailed: () => undefined });
    const results = await Promise.allSettled([w.submit({ sourceId: 's', requestId: 'x1', ratePerSecond: 9, calls: [call('x1')] }), w.submit({ sourceId: 's', requestId: 'x2', ratePerSecond: 9, calls: [call('x2')] })]);
    expect(results.map((r) => (r.status === 'rejected' ? (r.reason as { code: string }).code : 'fulfilled'))).toEqual(['service_unavailable', 'service_unavailable']);
    dead.disconnect();
  });
});
