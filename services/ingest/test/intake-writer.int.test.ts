/** The coalescing writer against real Redis: one batch and route job per flush, dedupe, the rate limit's pace, all-or-nothing. */
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { queueCatalog, type NormalizedCall, type RouteJob } from '@eventrelay/config';
import { transactionsOn } from '@eventrelay/runtime';
import { CallBatches } from '@eventrelay/stores';
import { IntakeWriter, MAX_CALLS_PER_FLUSH, type IntakeWriterOptions } from '../src/adapters/intake-writer';
import { deletePrefix, SHARED_REDIS_URL, uniquePrefix } from '@eventrelay/testkit';

const call = (messageId: string): NormalizedCall => ({
  type: 'track',
  event: 'E',
  userId: 'u',
  messageId,
  timestamp: '2026-11-21T09:30:00.000Z',
  receivedAt: '2026-11-21T09:30:00.000Z',
});

describe('IntakeWriter', () => {
  const prefix = uniquePrefix('writer');
  const redis = new Redis(SHARED_REDIS_URL);
  const queue = new Queue<RouteJob>(queueCatalog.route.name, { connection: redis, prefix });
  const batches = new CallBatches(redis, prefix);
  let now = Date.parse('2026-11-21T09:30:00.000Z');
  let serial = 0;
  let writer: IntakeWriter;
  const make = async (extra: Partial<IntakeWriterOptions> = {}) =>
    new IntakeWriter({
      batches,
      transaction: await transactionsOn(queue),
      queue,
      dedupeWindowSeconds: 60,
      flushMs: 0,
      clock: () => now,
      newBatchId: () => `b${++serial}`,
      ...extra,
    });
  /** Every route job on the queue with its batch's calls by source, as messageIds. */
  const jobs = async () => {
    const waiting = await queue.getJobs(['wait'], 0, -1, true);
    const out: [string, [string, string[]][]][] = [];
    for (const j of waiting)
      out.push([
        j.data.batchId,
        (await batches.contents(j.data.batchId)).map((part) => [part.sourceId, part.calls.map((c) => c.messageId)]),
      ]);
    return out;
  };

  beforeAll(async () => {
    writer = await make();
  });
  beforeEach(async () => {
    await queue.drain();
  });
  afterAll(async () => {
    await queue.close();
    await deletePrefix(SHARED_REDIS_URL, prefix);
    redis.disconnect();
  });

  it('writes the requests of one flush, from every source, as one call batch and one route job', async () => {
    const [a, b] = await Promise.all([
      writer.submit({ sourceId: 's1', ratePerSecond: 100, calls: [call('f-1'), call('f-2')] }),
      writer.submit({ sourceId: 's2', ratePerSecond: 100, calls: [call('f-3')] }),
    ]);
    expect(a).toEqual({ kind: 'accepted', enqueued: 2, duplicates: 0, duplicateIndexes: [] });
    expect(b).toEqual({ kind: 'accepted', enqueued: 1, duplicates: 0, duplicateIndexes: [] });
    const queued = await jobs();
    expect(queued).toEqual([
      [
        `b${serial}`,
        [
          ['s1', ['f-1', 'f-2']],
          ['s2', ['f-3']],
        ],
      ],
    ]);
    // The job carries the reference only; the batch holds the calls and their route entries.
    const [job] = await queue.getJobs(['wait']);
    expect(job?.data).toEqual({ batchId: `b${serial}` });
    expect(job?.id).toBe(`b${serial}`);
    const entries = await batches.routeEntries(`b${serial}`);
    expect(entries?.map((e) => [e.index, e.sourceId, e.messageId])).toEqual([
      [0, 's1', 'f-1'],
      [1, 's1', 'f-2'],
      [2, 's2', 'f-3'],
    ]);
  });

  it("numbers the calls source by source and stores each source's calls of the flush as one field", async () => {
    const [a, b, c] = await Promise.all([
      writer.submit({ sourceId: 's1', ratePerSecond: 100, calls: [call('g-1'), call('g-2')] }),
      writer.submit({ sourceId: 's2', ratePerSecond: 100, calls: [call('g-3')] }),
      writer.submit({ sourceId: 's1', ratePerSecond: 100, calls: [call('g-4')] }),
    ]);
    expect([a.kind, b.kind, c.kind]).toEqual(['accepted', 'accepted', 'accepted']);
    const batchId = `b${serial}`;
    expect((await batches.routeEntries(batchId))?.map((e) => [e.index, e.part, e.sourceId, e.messageId])).toEqual([
      [0, 0, 's1', 'g-1'],
      [1, 0, 's1', 'g-2'],
      [2, 0, 's1', 'g-4'],
      [3, 3, 's2', 'g-3'],
    ]);
    const fields = await redis.hgetall(batches.key(batchId));
    expect(Object.keys(fields).sort()).toEqual(['c0', 'c3', 'r']);
    // Deleted when its destinations are done with it; the TTL only bounds what a job that failed for good leaves.
    expect(await redis.ttl(batches.key(batchId))).toBeGreaterThan(29 * 86_400);
    expect((JSON.parse(fields['c0']!) as NormalizedCall[]).map((x) => x.messageId)).toEqual(['g-1', 'g-2', 'g-4']);
  });

  it('stores a messageId submitted twice in the same flush once, and answers both as accepted', async () => {
    const [a, b] = await Promise.all([
      writer.submit({ sourceId: 's1', ratePerSecond: 100, calls: [call('same'), call('other')] }),
      writer.submit({ sourceId: 's1', ratePerSecond: 100, calls: [call('same')] }),
    ]);
    expect(a).toEqual({ kind: 'accepted', enqueued: 2, duplicates: 0, duplicateIndexes: [] });
    expect(b).toEqual({ kind: 'accepted', enqueued: 0, duplicates: 1, duplicateIndexes: [0] });
    expect((await jobs()).map(([, parts]) => parts)).toEqual([[['s1', ['same', 'other']]]]);
  });

  it('stores a call exactly when it claims its messageId: a repeat in a later flush is a duplicate', async () => {
    await writer.submit({ sourceId: 's1', ratePerSecond: 100, calls: [call('claimed')] });
    expect(await redis.ttl(`${prefix}:dedupe:s1:claimed`)).toBeGreaterThan(0);
    const again = await writer.submit({ sourceId: 's1', ratePerSecond: 100, calls: [call('claimed'), call('fresh')] });
    expect(again).toEqual({ kind: 'accepted', enqueued: 1, duplicates: 1, duplicateIndexes: [0] });
    expect((await jobs()).map(([, parts]) => parts)).toEqual([[['s1', ['claimed']]], [['s1', ['fresh']]]]);
  });

  it('scopes dedupe to the source', async () => {
    const r = await writer.submit({ sourceId: 's2', ratePerSecond: 100, calls: [call('same')] });
    expect(r).toEqual({ kind: 'accepted', enqueued: 1, duplicates: 0, duplicateIndexes: [] });
  });

  it('paces calls per source: one second of its limit at once, then its limit evenly; a request over it stores and claims nothing', async () => {
    const submit = (i: number) => writer.submit({ sourceId: 's3', ratePerSecond: 2, calls: [call(`rl-${now}-${i}`)] });
    const paceKey = `${prefix}:pace:s3`;
    const first = await Promise.all([submit(1), submit(2), submit(3)]);
    expect(first.map((r) => r.kind)).toEqual(['accepted', 'accepted', 'rate_limited']);
    // Two calls at 2/s are paid for until a second from now: a third fits 500 ms from now.
    expect(first[2]).toEqual({ kind: 'rate_limited', retryAtMs: now + 500 });
    expect(await redis.get(paceKey)).toBe((now + 1000).toFixed(3));
    expect((await jobs()).flatMap(([, parts]) => parts.flatMap(([, ids]) => ids))).toEqual([`rl-${now}-1`, `rl-${now}-2`]);
    expect(await redis.exists(`${prefix}:dedupe:s3:rl-${now}-3`)).toBe(0);
    // Known to be over until then: answered without asking Redis again.
    now += 499;
    expect(await submit(4)).toEqual({ kind: 'rate_limited', retryAtMs: now + 1 });
    expect(await redis.get(paceKey)).toBe((now + 501).toFixed(3));
    // Then one call per 500 ms, not a second's worth at once.
    now += 1;
    expect((await submit(5)).kind).toBe('accepted');
    expect((await submit(6)).kind).toBe('rate_limited');
    now += 500;
    expect((await submit(7)).kind).toBe('accepted');
  });

  it('counts the calls of a batch: a request that does not fit is refused whole and moves nothing; a smaller one may still fit', async () => {
    const ids = (tag: string, n: number) => Array.from({ length: n }, (_, i) => call(`${tag}-${now}-${i}`));
    const fresh = await make();
    const [a, b, c] = await Promise.all([
      fresh.submit({ sourceId: 's5', ratePerSecond: 5, calls: ids('a', 3) }),
      fresh.submit({ sourceId: 's5', ratePerSecond: 5, calls: ids('b', 3) }),
      fresh.submit({ sourceId: 's5', ratePerSecond: 5, calls: ids('c', 2) }),
    ]);
    // Same flush, 200 ms a call: 3 fit (600 ms), 3 more would make 1,200 ms > 1 s (refused whole), 2 more make 1 s.
    expect([a?.kind, b?.kind, c?.kind]).toEqual(['accepted', 'rate_limited', 'accepted']);
    expect(b).toEqual({ kind: 'rate_limited', retryAtMs: now + 200 });
    expect(await redis.get(`${prefix}:pace:s5`)).toBe((now + 1000).toFixed(3));
    const stored = (await jobs()).flatMap(([, parts]) => parts.flatMap(([, i]) => i));
    expect(stored.sort()).toEqual([...ids('a', 3), ...ids('c', 2)].map((x) => x.messageId).sort());
    expect(await redis.exists(...ids('b', 3).map((x) => `${prefix}:dedupe:s5:${x.messageId}`))).toBe(0);
  });

  it('stores a batch larger than the whole allowance when the source is not ahead of its pace, then waits its time out', async () => {
    now += 1000;
    const fresh = await make();
    const big = Array.from({ length: 7 }, (_, i) => call(`big-${now}-${i}`));
    expect((await fresh.submit({ sourceId: 's6', ratePerSecond: 5, calls: big })).kind).toBe('accepted');
    expect(await redis.get(`${prefix}:pace:s6`)).toBe((now + 1400).toFixed(3));
    expect(await fresh.submit({ sourceId: 's6', ratePerSecond: 5, calls: [call(`after-${now}`)] })).toEqual({
      kind: 'rate_limited',
      retryAtMs: now + 600,
    });
    now += 600;
    expect((await fresh.submit({ sourceId: 's6', ratePerSecond: 5, calls: [call(`later-${now}`)] })).kind).toBe('accepted');
  });

  it("does not limit a request of limit 0 (an operator's call), nor let it move the source's pace", async () => {
    const fresh = await make();
    const paced = Array.from({ length: 5 }, (_, i) => call(`full-${now}-${i}`));
    expect((await fresh.submit({ sourceId: 's7', ratePerSecond: 5, calls: paced })).kind).toBe('accepted');
    const pace = await redis.get(`${prefix}:pace:s7`);
    expect((await fresh.submit({ sourceId: 's7', ratePerSecond: 0, calls: [call(`op-${now}`)] })).kind).toBe('accepted');
    expect(await redis.get(`${prefix}:pace:s7`)).toBe(pace);
  });

  it('waits flushMs for more requests, and flushes at once when a flush holds MAX_CALLS_PER_FLUSH calls', async () => {
    const slow = await make({ flushMs: 60_000 });
    const many = Array.from({ length: MAX_CALLS_PER_FLUSH }, (_, i) => call(`many-${i}`));
    const waiting = slow.submit({ sourceId: 's4', ratePerSecond: 10_000, calls: [call('waits')] });
    await new Promise((r) => setTimeout(r, 50));
    expect(await jobs()).toEqual([]);
    // This one fills the flush: both go now, together, instead of after a minute.
    const [a, b] = await Promise.all([waiting, slow.submit({ sourceId: 's4', ratePerSecond: 10_000, calls: many })]);
    expect([a.kind, b.kind]).toEqual(['accepted', 'accepted']);
    const queued = await jobs();
    expect(queued).toHaveLength(1);
    expect(queued[0]?.[1][0]?.[1]).toHaveLength(MAX_CALLS_PER_FLUSH + 1);
  });

  it('rejects every submission of a flush with service_unavailable when Redis is unreachable, and writes nothing', async () => {
    const lost = new Redis(SHARED_REDIS_URL, { enableOfflineQueue: false, maxRetriesPerRequest: 0, retryStrategy: () => null });
    lost.on('error', () => undefined);
    const lostQueue = new Queue<RouteJob>(queueCatalog.route.name, { connection: lost, prefix });
    lostQueue.on('error', () => undefined);
    const w = new IntakeWriter({
      batches: new CallBatches(lost, prefix),
      transaction: await transactionsOn(lostQueue),
      queue: lostQueue,
      dedupeWindowSeconds: 60,
      flushMs: 0,
      clock: () => now,
    });
    lost.disconnect();
    const results = await Promise.allSettled([
      w.submit({ sourceId: 's', ratePerSecond: 9, calls: [call('x1')] }),
      w.submit({ sourceId: 's', ratePerSecond: 9, calls: [call('x2')] }),
    ]);
    expect(results.map((r) => (r.status === 'rejected' ? (r.reason as { code: string }).code : 'fulfilled'))).toEqual([
      'service_unavailable',
      'service_unavailable',
    ]);
    expect(await redis.exists(`${prefix}:dedupe:s:x1`, `${prefix}:dedupe:s:x2`)).toBe(0);
    expect(await jobs()).toEqual([]);
  });

  describe('durable mode', () => {
    const codes = (results: PromiseSettledResult<unknown>[]) =>
      results.map((r) => (r.status === 'rejected' ? (r.reason as { code: string }).code : 'fulfilled'));

    it('answers once the replicas confirmed, sending WAIT once per flush with the configured count and timeout', async () => {
      const waits: [number, number][] = [];
      const seen: boolean[] = [];
      const w = await make({
        durable: {
          replicas: 2,
          timeoutMs: 250,
          wait: (n, ms) => (waits.push([n, ms]), Promise.resolve(2)),
          observe: (_s, ok) => seen.push(ok),
        },
      });
      const [a, b] = await Promise.all([
        w.submit({ sourceId: 'sd', ratePerSecond: 100, calls: [call('dm-1')] }),
        w.submit({ sourceId: 'sd', ratePerSecond: 100, calls: [call('dm-2')] }),
      ]);
      expect([a.kind, b.kind]).toEqual(['accepted', 'accepted']);
      expect(waits).toEqual([[2, 250]]);
      expect(seen).toEqual([true]);
    });

    it('keeps one flush in flight: what arrives meanwhile is the next flush, and past four flushes of calls waiting, requests are refused at once', async () => {
      // The first WAIT hangs until released (a replica that stopped answering); the others answer at once.
      let release: () => void = () => undefined;
      let waits = 0;
      const w = await make({
        durable: {
          replicas: 1,
          timeoutMs: 1000,
          wait: () => (++waits === 1 ? new Promise<number>((resolve) => (release = () => resolve(1))) : Promise.resolve(1)),
        },
      });
      const pause = () => new Promise((r) => setTimeout(r, 20));
      const first = w.submit({ sourceId: 'sg', ratePerSecond: 1e6, calls: [call('gc-1')] });
      await pause();
      const later = [w.submit({ sourceId: 'sg', ratePerSecond: 1e6, calls: [call('gc-2')] })];
      await pause();
      later.push(w.submit({ sourceId: 'sg', ratePerSecond: 1e6, calls: [call('gc-3')] }));
      await pause();
      // Nothing more was written while the first flush waits.
      expect(waits).toBe(1);
      // Requests of 998, 1000, 1000 and 1000 calls: with gc-2 and gc-3, four flushes' worth.
      for (const [r, n] of [998, 1000, 1000, 1000].entries())
        later.push(w.submit({ sourceId: 'sg', ratePerSecond: 1e6, calls: Array.from({ length: n }, (_, i) => call(`gc-big-${r}-${i}`)) }));
      // Four flushes' worth waiting: refused without waiting or writing.
      await expect(w.submit({ sourceId: 'sg', ratePerSecond: 1e6, calls: [call('gc-over')] })).rejects.toMatchObject({
        code: 'not_replicated',
      });
      release();
      expect((await first).kind).toBe('accepted');
      expect((await Promise.all(later)).map((r) => r.kind)).toEqual(Array(6).fill('accepted'));
      // One flush at a time, each up to MAX_CALLS_PER_FLUSH: gc-2, gc-3 and the 998; then each 1000 alone.
      expect(waits).toBe(5);
      expect(await redis.exists(`${prefix}:dedupe:sg:gc-over`)).toBe(0);
    });

    it('rejects every submission of the flush with not_replicated when fewer replicas confirm, or the WAIT fails; the calls stay stored', async () => {
      const short = await make({ durable: { replicas: 1, timeoutMs: 50, wait: () => Promise.resolve(0) } });
      const broken = await make({ durable: { replicas: 1, timeoutMs: 50, wait: () => Promise.reject(new Error('connection lost')) } });
      const results = await Promise.allSettled([
        short.submit({ sourceId: 'sd', ratePerSecond: 100, calls: [call('dm-3')] }),
        short.submit({ sourceId: 'sd', ratePerSecond: 100, calls: [call('dm-4')] }),
      ]);
      expect(codes(results)).toEqual(['not_replicated', 'not_replicated']);
      expect(codes(await Promise.allSettled([broken.submit({ sourceId: 'sd', ratePerSecond: 100, calls: [call('dm-5')] })]))).toEqual([
        'not_replicated',
      ]);
      // On the primary all the same: they are routed, and a retry is a duplicate.
      expect(await redis.exists(`${prefix}:dedupe:sd:dm-3`, `${prefix}:dedupe:sd:dm-4`, `${prefix}:dedupe:sd:dm-5`)).toBe(3);
    });
  });
});
