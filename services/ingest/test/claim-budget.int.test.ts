/**
 * A source's claim budget in the intake step, against real Redis: a request whose claims could take
 * the source past its budget is refused whole, duplicates cost nothing, other sources in the same
 * flush are untouched, and the bytes come back once the claims' window has passed.
 */
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { queueCatalog, type NormalizedCall, type RouteJob } from '@eventrelay/config';
import { transactionsOn } from '@eventrelay/runtime';
import { CallBatches, CLAIM_OVERHEAD_BYTES } from '@eventrelay/stores';
import { IntakeWriter } from '../src/adapters/intake-writer';
import { deletePrefix, SHARED_REDIS_URL, uniquePrefix } from '@eventrelay/testkit';

const WINDOW_S = 240;
const T0 = Date.parse('2026-11-29T09:30:00.000Z');

const call = (messageId: string): NormalizedCall => ({
  type: 'track',
  event: 'E',
  userId: 'u',
  messageId,
  timestamp: '2026-11-29T09:30:00.000Z',
  receivedAt: '2026-11-29T09:30:00.000Z',
});

describe('claim budgets in the intake step', () => {
  const prefix = uniquePrefix('budget');
  const redis = new Redis(SHARED_REDIS_URL);
  const queue = new Queue<RouteJob>(queueCatalog.route.name, { connection: redis, prefix });
  const batches = new CallBatches(redis, prefix);
  let now = T0;
  let writer: IntakeWriter;
  let serial = 0;
  /** What one claim of `source` with a messageId of `idLength` characters costs the budget. */
  const claimCost = (source: string, idLength: number) => CLAIM_OVERHEAD_BYTES + `${prefix}:dedupe:${source}:`.length + idLength;
  const ids = (tag: string, n: number) => Array.from({ length: n }, (_, i) => `${tag}-${String(i).padStart(4, '0')}`);
  const submit = (sourceId: string, messageIds: string[], budgetBytes: number | undefined) =>
    writer.submit({
      sourceId,
      ratePerSecond: 1_000_000,
      ...(budgetBytes !== undefined ? { budgetBytes } : {}),
      calls: messageIds.map(call),
    });

  beforeAll(async () => {
    writer = new IntakeWriter({
      batches,
      transaction: await transactionsOn(queue),
      queue,
      dedupeWindowSeconds: WINDOW_S,
      flushMs: 0,
      clock: () => now,
      newBatchId: () => `b${++serial}`,
    });
  });
  afterAll(async () => {
    await queue.close();
    await deletePrefix(SHARED_REDIS_URL, prefix);
    redis.disconnect();
  });

  it('refuses whole the request that could take a source past its budget, and only that source', async () => {
    now = T0;
    // Room for exactly ten claims of 7-character ids ("fa-0000").
    const budget = 10 * claimCost('src-flood', 7);
    expect(await submit('src-flood', ids('fa', 6), budget)).toMatchObject({ kind: 'accepted', enqueued: 6 });
    // Five more would make eleven: refused whole, in the same flush as a quiet source's request.
    const [refused, quiet] = await Promise.all([submit('src-flood', ids('fb', 5), budget), submit('src-quiet', ids('qa', 5), budget)]);
    expect(refused).toEqual({ kind: 'over_budget', freesAtEpochSeconds: expect.any(Number) });
    expect(quiet).toMatchObject({ kind: 'accepted', enqueued: 5 });
    // Nothing of the refused request was claimed: its ids are fresh once there is room.
    expect(await redis.exists(`${prefix}:dedupe:src-flood:fb-0000`)).toBe(0);
    expect(await batches.claimBytes('src-flood')).toBe(6 * claimCost('src-flood', 7));
    // Four fit exactly.
    now += 1000;
    expect(await submit('src-flood', ids('fb', 4), budget)).toMatchObject({ kind: 'accepted', enqueued: 4 });
    expect(await batches.claimBytes('src-flood')).toBe(budget);
  });

  it('counts only the claims made: repeated messageIds cost nothing', async () => {
    now = T0 + 10_000;
    const budget = 3 * claimCost('src-dups', 7);
    expect(await submit('src-dups', ['d-00001', 'd-00002'], budget)).toMatchObject({ kind: 'accepted', enqueued: 2 });
    // A batch could cost three claims, and two are repeats: it fits, and costs one.
    now += 1000;
    expect(await submit('src-dups', ['d-00001', 'd-00002', 'd-00003'], budget)).toMatchObject({
      kind: 'accepted',
      enqueued: 1,
      duplicates: 2,
    });
    expect(await batches.claimBytes('src-dups')).toBe(budget);
  });

  it('says when room comes back, answers the rest of that second without Redis, and frees the bytes once the window has passed', async () => {
    now = T0 + 20_000;
    const budget = 2 * claimCost('src-full', 7);
    expect(await submit('src-full', ['f-00001', 'f-00002'], budget)).toMatchObject({ kind: 'accepted' });
    now += 1000;
    const refused = await submit('src-full', ['f-00003'], budget);
    if (refused.kind !== 'over_budget') throw new Error(`expected over_budget, got ${refused.kind}`);
    // The claims went to the bucket of T0 + 20 s; the window is 240 s in buckets of 10 s.
    expect(refused.freesAtEpochSeconds).toBe(Math.floor(T0 / 1000) + 30 + WINDOW_S);
    // The same second: refused from memory, so even a budget raised meanwhile waits for the next second.
    expect(await submit('src-full', ['f-00003'], budget * 10)).toMatchObject({ kind: 'over_budget' });
    // Still full just before the bucket is freed; free once it is.
    now = (refused.freesAtEpochSeconds - 1) * 1000;
    expect(await submit('src-full', ['f-00003'], budget)).toMatchObject({ kind: 'over_budget' });
    now = refused.freesAtEpochSeconds * 1000;
    expect(await submit('src-full', ['f-00003'], budget)).toMatchObject({ kind: 'accepted', enqueued: 1 });
    expect(await batches.claimBytes('src-full')).toBe(claimCost('src-full', 7));
  });

  it('keeps no budget hash for a source without a budget', async () => {
    now = T0 + 30_000;
    expect(await submit('src-free', ids('xa', 50), undefined)).toMatchObject({ kind: 'accepted', enqueued: 50 });
    expect(await redis.exists(batches.budgetKey('src-free'))).toBe(0);
  });
});
