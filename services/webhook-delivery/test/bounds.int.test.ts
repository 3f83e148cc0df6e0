/**
 * What webhook-delivery keeps per destination is bounded, by count and by bytes: past
 * DELIVERY_DEAD_LETTER_MAX_PER_DESTINATION or DELIVERY_DEAD_LETTER_MAX_BYTES_PER_DESTINATION the
 * oldest dead letters are evicted, counted per destination, and the episode is audited once.
 * Past DELIVERY_RETRY_MAX_PER_DESTINATION calls, or DELIVERY_RETRY_MAX_BYTES_PER_DESTINATION bytes
 * of calls, held for a retry, the calls that would be held beyond it are dead-lettered instead,
 * counted and audited the same way; the totals in Redis stay the sums over the deliver jobs (and
 * over the letters) whatever becomes of them (delivered, replayed, dropped, failed).
 */
import type { Job } from 'bullmq';
import type { HeldDeliverJob } from '@eventrelay/config';
import { AuditLog } from '@eventrelay/stores';
import { heldCallBytes } from '../src/domain/retry-cap';
import { eventually, startReceiver } from '@eventrelay/testkit';
import { startTestAdmin } from '../../../test/support/admin';
import { testScope } from '../../../test/support/scope';
import { startTestPipeline, trackCall, webhookDestination, type TestPipeline } from '../../../test/support/pipeline';

describe('delivery bounds', () => {
  const scope = testScope();

  it('dead letters past the cap evict the oldest: counted per destination, one audit entry per episode', async () => {
    const refusing = scope.track(await startReceiver({ responder: () => ({ status: 400 }) }));
    const p = scope.track(
      await startTestPipeline({
        label: 'bounds-dead',
        destinations: [webhookDestination('dest-full', [refusing.url]), webhookDestination('dest-other', [refusing.url])],
        deliveryEnv: { DELIVERY_DEAD_LETTER_MAX_PER_DESTINATION: '3' },
      }),
    );
    await p.route([1, 2, 3, 4, 5].map((n) => trackCall(`m-a${n}`)));
    await eventually(async () => expect(await p.deadLetters('dest-full')).toHaveLength(3));
    await eventually(async () => expect(await p.deadLetters('dest-other')).toHaveLength(3));
    // A later job of the same episode: more evictions, no second audit entry.
    await p.route([6, 7].map((n) => trackCall(`m-b${n}`)));
    await eventually(async () => {
      const evicted = (await p.deliveryRegistry.getSingleMetric('eventrelay_delivery_dead_letters_evicted_total')!.get()).values;
      expect(evicted.filter((v) => v.labels.destination === 'dest-full').map((v) => v.value)).toEqual([4]);
      expect(evicted.filter((v) => v.labels.destination === 'dest-other').map((v) => v.value)).toEqual([4]);
    });
    const ids = (await p.deadLetters('dest-full')).map((l) => l.job.call.messageId);
    expect(ids).toHaveLength(3);
    expect(ids).toEqual(expect.arrayContaining(['m-b6', 'm-b7']));

    const audit = (await new AuditLog(p.admin, p.prefix).page({ limit: 10 })).items;
    // Besides the evictions, the first dead letters of the hour tell operators once per destination.
    expect(audit.map((e) => [e.action, e.targetId, e.tokenId]).sort()).toEqual([
      ['destination.dead_lettering', 'dest-full', 'webhook-delivery'],
      ['destination.dead_lettering', 'dest-other', 'webhook-delivery'],
      ['destination.dead_letters_evicted', 'dest-full', 'webhook-delivery'],
      ['destination.dead_letters_evicted', 'dest-other', 'webhook-delivery'],
    ]);
    expect(audit.find((e) => e.action === 'destination.dead_letters_evicted')!.details).toMatchObject({
      reason: 'dead letter cap reached',
      max: 3,
    });
  });

  it('dead letters past the byte cap evict the oldest too, far below the count cap; the byte total stays exact as letters are replayed', async () => {
    let refusing = true;
    const r = scope.track(await startReceiver({ responder: () => ({ status: refusing ? 400 : 200 }) }));
    const p = scope.track(
      await startTestPipeline({
        label: 'bounds-dead-bytes',
        destinations: [webhookDestination('dest-big', [r.url])],
        // 1 MiB of letters (the least the variable takes); the count cap stays at its 100,000.
        deliveryEnv: { DELIVERY_DEAD_LETTER_MAX_BYTES_PER_DESTINATION: String(MIB) },
      }),
    );
    const admin = scope.track(await startTestAdmin({ prefix: p.prefix }));
    // 40 calls of about 30 KB (the intake takes up to 32 KB a call): about 1.2 MB of letters.
    const ids = Array.from({ length: 40 }, (_, i) => `m-${String(i).padStart(2, '0')}`);
    await p.route(ids.slice(0, 20).map((id) => bigCall(id)));
    await eventually(async () => expect(await p.deadLetters('dest-big')).toHaveLength(20));
    await p.route(ids.slice(20).map((id) => bigCall(id)));
    const evicted = async () => (await metricOf(p, 'eventrelay_delivery_dead_letters_evicted_total', 'dest-big'))[0] ?? 0;
    const kept = await eventually(async () => {
      const letters = await p.deadLetters('dest-big');
      expect(letters.length + (await evicted())).toBe(40);
      return letters;
    });
    // Fewer than 40 were kept: as many as fit in 1 MiB (one more would not), the oldest evicted:
    // every letter of the second job is kept, and only letters of the first went.
    const bytes = await deadBytes(p, 'dest-big');
    expect(bytes.kept).toBe(bytes.actual);
    expect(bytes.actual).toBeLessThanOrEqual(MIB);
    expect(bytes.actual + bytes.actual / kept.length).toBeGreaterThan(MIB);
    expect(kept.length).toBeGreaterThan(20);
    expect(kept.length).toBeLessThan(40);
    expect(kept.map((l) => l.job.call.messageId)).toEqual(expect.arrayContaining(ids.slice(20)));
    expect(await metricOf(p, 'eventrelay_delivery_dead_letter_bytes', 'dest-big')).toEqual([bytes.actual]);
    const audit = (await new AuditLog(p.admin, p.prefix).page({ limit: 10 })).items.find(
      (e) => e.action === 'destination.dead_letters_evicted',
    );
    expect(audit?.details).toEqual({
      reason: 'dead letter byte cap reached',
      max: 100_000,
      maxBytes: MIB,
      evicted: 40 - kept.length,
      bytes: bytes.actual,
    });

    // Replayed and delivered, letters give their bytes back: the total is what is left, to the byte.
    refusing = false;
    const replayed = kept.slice(0, 5).map((l) => l.job.call.messageId);
    expect(await admin.call('POST', '/destinations/dest-big/replay', { messageIds: replayed })).toMatchObject({
      status: 200,
      body: { replayed: 5 },
    });
    await eventually(async () => expect(await p.deadLetters('dest-big')).toHaveLength(kept.length - 5));
    const after = await deadBytes(p, 'dest-big');
    expect(after.kept).toBe(after.actual);
    expect(after.actual).toBeLessThan(bytes.actual);
    expect(await metricOf(p, 'eventrelay_delivery_dead_letter_bytes', 'dest-big')).toEqual([after.actual]);
    // Every one of them: no field, and the gauge reads 0.
    expect(await admin.call('POST', '/destinations/dest-big/replay', { all: true })).toMatchObject({ status: 200 });
    await eventually(async () => expect(await p.deadLetters('dest-big')).toHaveLength(0));
    expect(await deadBytes(p, 'dest-big')).toEqual({ kept: null, actual: 0 });
    expect(await metricOf(p, 'eventrelay_delivery_dead_letter_bytes', 'dest-big')).toEqual([0]);
  });
});

const MIB = 1024 * 1024;

/** A call of about 30 KB. */
function bigCall(messageId: string) {
  return trackCall(messageId, { properties: { blob: 'x'.repeat(30_000) } });
}

const metricOf = async (p: TestPipeline, name: string, destinationId: string, labels: Record<string, string> = {}) =>
  (await p.deliveryRegistry.getSingleMetric(name)!.get()).values
    .filter((v) => v.labels.destination === destinationId && Object.entries(labels).every(([k, want]) => v.labels[k] === want))
    .map((v) => v.value);

/** The byte total of a destination's dead letters as Redis keeps it (`<prefix>:dead-bytes`), and what its letters take. */
async function deadBytes(p: TestPipeline, destinationId: string): Promise<{ kept: number | null; actual: number }> {
  const kept = await p.admin.hget(`${p.prefix}:dead-bytes`, destinationId);
  const letters = Object.values(await p.admin.hgetall(`${p.prefix}:dead-data:${destinationId}`));
  return { kept: kept === null ? null : Number(kept), actual: letters.reduce((n, l) => n + Buffer.byteLength(l), 0) };
}

/** The calls a destination's deliver jobs hold and have counted, summed over the jobs (what the count must equal). */
async function heldInJobs(p: TestPipeline, destinationId: string): Promise<{ calls: number; counted: number }> {
  const jobs = await p.deliverQueue.getJobs(['delayed', 'wait', 'active', 'prioritized']);
  let calls = 0;
  let counted = 0;
  for (const job of jobs) {
    if (job.data.destinationId !== destinationId || !('calls' in job.data)) continue;
    calls += job.data.calls.length;
    counted += job.data.counted ?? 0;
  }
  return { calls, counted };
}

/** The bytes of the calls a destination's deliver jobs hold, measured, and as the jobs have them counted. */
async function heldBytesInJobs(p: TestPipeline, destinationId: string): Promise<{ bytes: number; counted: number }> {
  const jobs = await p.deliverQueue.getJobs(['delayed', 'wait', 'active', 'prioritized']);
  let bytes = 0;
  let counted = 0;
  for (const job of jobs) {
    if (job.data.destinationId !== destinationId || !('calls' in job.data)) continue;
    bytes += job.data.calls.reduce((n, item) => n + heldCallBytes(item), 0);
    counted += job.data.countedBytes ?? 0;
  }
  return { bytes, counted };
}

/** The count in Redis, sampled every few milliseconds while the test runs: the highest seen. */
function sampleHeld(p: TestPipeline, destinationId: string): { readonly max: number; stop(): void } {
  const state = { max: 0, stop: () => clearInterval(timer) };
  const timer = setInterval(() => {
    void p.admin.hget(`${p.prefix}:retry-held`, destinationId).then(
      (n) => (state.max = Math.max(state.max, Number(n ?? 0))),
      () => undefined,
    );
  }, 5);
  return state;
}

describe('the retry backlog cap (DELIVERY_RETRY_MAX_PER_DESTINATION)', () => {
  const scope = testScope();
  const random = () => 0.999;
  const CAP_REASON = 'retry backlog cap reached (DELIVERY_RETRY_MAX_PER_DESTINATION=5)';
  /** Quick retries (at most 400 ms apart), one job at a time: the cap is then exact (no concurrent commits to overshoot it). */
  const quickRetries = { DELIVERY_RETRY_BASE_MS: '100', DELIVERY_RETRY_MAX_MS: '400', DELIVERY_CONCURRENCY: '1' };

  // The keys as docs/delivery.md and the runbook name them.
  const heldKey = (p: TestPipeline) => `${p.prefix}:retry-held`;

  it('dead-letters the calls beyond the cap: the count never passes it, counted and audited once per episode, back to 0 once delivered', async () => {
    let failing = true;
    const delivered = new Set<string>();
    const r = scope.track(
      await startReceiver({
        responder: (req) => {
          if (failing) return { status: 503 };
          delivered.add(String(req.headers['x-eventrelay-message-id']));
          return { status: 200 };
        },
      }),
    );
    const p = scope.track(
      await startTestPipeline({
        label: 'retry-cap',
        random,
        destinations: [webhookDestination('dest-cap', [r.url])],
        deliveryEnv: { ...quickRetries, DELIVERY_RETRY_MAX_PER_DESTINATION: '5' },
      }),
    );
    const admin = scope.track(await startTestAdmin({ prefix: p.prefix }));
    const sampler = sampleHeld(p, 'dest-cap');
    try {
      // Three calls held: room for two more.
      await p.route(['a1', 'a2', 'a3'].map((id) => trackCall(id)));
      await eventually(async () => expect(await p.admin.hget(heldKey(p), 'dest-cap')).toBe('3'));
      // Four more: the first two are held, the last two of the job dead-lettered.
      await p.route(['b1', 'b2', 'b3', 'b4'].map((id) => trackCall(id)));
      await eventually(async () => expect((await p.deadLetters('dest-cap')).map((l) => l.job.call.messageId).sort()).toEqual(['b3', 'b4']));
      expect(await p.admin.hget(heldKey(p), 'dest-cap')).toBe('5');
      // At the cap: every call newly failing is dead-lettered, in the same episode.
      await p.route(['c1', 'c2'].map((id) => trackCall(id)));
      const letters = await eventually(async () => {
        const found = await p.deadLetters('dest-cap');
        expect(found).toHaveLength(4);
        return found;
      });
      expect(letters.map((l) => l.job.call.messageId).sort()).toEqual(['b3', 'b4', 'c1', 'c2']);
      for (const l of letters) expect(l).toMatchObject({ lastError: CAP_REASON, attempts: 1, urls: [{ url: r.url, error: 'HTTP 503' }] });

      // The count is exactly what the jobs hold, and the calls held are the first seven minus the two capped.
      expect(await p.admin.hget(heldKey(p), 'dest-cap')).toBe('5');
      expect(await heldInJobs(p, 'dest-cap')).toEqual({ calls: 5, counted: 5 });
      expect(await metricOf(p, 'eventrelay_delivery_retry_capped_total', 'dest-cap')).toEqual([4]);
      expect(await metricOf(p, 'eventrelay_delivery_retry_held', 'dest-cap')).toEqual([5]);
      const audit = (await new AuditLog(p.admin, p.prefix).page({ limit: 10 })).items;
      expect(audit.map((e) => [e.action, e.targetId, e.tokenId])).toEqual([
        ['destination.retry_backlog_capped', 'dest-cap', 'webhook-delivery'],
        ['destination.dead_lettering', 'dest-cap', 'webhook-delivery'],
      ]);
      expect(audit[0]!.details).toEqual({ reason: 'retry backlog cap reached', max: 5, maxBytes: 64 * MIB, deadLettered: 2 });
      expect(await p.admin.ttl(`${p.prefix}:retry-capping:dest-cap`)).toBeGreaterThan(0);

      // The receiver recovers: everything held is delivered, and the count's field is gone.
      failing = false;
      await eventually(async () => expect(await heldInJobs(p, 'dest-cap')).toEqual({ calls: 0, counted: 0 }), 15_000);
      expect(await p.admin.hexists(heldKey(p), 'dest-cap')).toBe(0);
      expect(await metricOf(p, 'eventrelay_delivery_retry_held', 'dest-cap')).toEqual([0]);

      // Replayed dead letters are jobs no commit wrote yet: counted at their first commit, given back when delivered.
      failing = true;
      expect(await admin.call('POST', '/destinations/dest-cap/replay', { messageIds: ['b3', 'c1'] })).toMatchObject({
        status: 200,
        body: { replayed: 2 },
      });
      await eventually(async () => expect(await heldInJobs(p, 'dest-cap')).toEqual({ calls: 2, counted: 2 }));
      expect(await p.admin.hget(heldKey(p), 'dest-cap')).toBe('2');
      failing = false;
      await eventually(async () => expect(await heldInJobs(p, 'dest-cap')).toEqual({ calls: 0, counted: 0 }), 15_000);
      expect(await p.admin.hexists(heldKey(p), 'dest-cap')).toBe(0);
      expect([...delivered].sort()).toEqual(['a1', 'a2', 'a3', 'b1', 'b2', 'b3', 'c1']);
    } finally {
      sampler.stop();
    }
    expect(sampler.max).toBe(5);
    // One episode: the replays found room and capped nothing.
    const capped = (await new AuditLog(p.admin, p.prefix).page({ limit: 10 })).items.filter(
      (e) => e.action === 'destination.retry_backlog_capped',
    );
    expect(capped).toHaveLength(1);
    expect(await metricOf(p, 'eventrelay_delivery_retry_capped_total', 'dest-cap')).toEqual([4]);
  });

  it('holds calls up to the byte cap far below the count cap: the rest are dead-lettered, the bytes in Redis are what the jobs hold, back to none once delivered', async () => {
    let failing = true;
    const delivered = new Set<string>();
    const r = scope.track(
      await startReceiver({
        responder: (req) => {
          if (failing) return { status: 503 };
          delivered.add(String(req.headers['x-eventrelay-message-id']));
          return { status: 200 };
        },
      }),
    );
    // Retries far away: each call is attempted once and held until the test moves the clock.
    let offsetMs = 0;
    const p = scope.track(
      await startTestPipeline({
        label: 'retry-cap-bytes',
        random,
        clock: () => Date.now() + offsetMs,
        destinations: [webhookDestination('dest-bytes', [r.url])],
        // 1 MiB of held calls (the least the variable takes); the count cap stays at its 100,000.
        deliveryEnv: { DELIVERY_RETRY_BASE_MS: '600000', DELIVERY_CONCURRENCY: '1', DELIVERY_RETRY_MAX_BYTES_PER_DESTINATION: String(MIB) },
      }),
    );
    const bytesKey = `${p.prefix}:retry-held-bytes`;
    // 20 calls of about 30 KB: about 600 KB held.
    const ids = Array.from({ length: 40 }, (_, i) => `r-${String(i).padStart(2, '0')}`);
    await p.route(ids.slice(0, 20).map((id) => bigCall(id)));
    await eventually(async () => expect(await heldInJobs(p, 'dest-bytes')).toEqual({ calls: 20, counted: 20 }));
    const first = await heldBytesInJobs(p, 'dest-bytes');
    expect(first.counted).toBe(first.bytes);
    expect(Number(await p.admin.hget(bytesKey, 'dest-bytes'))).toBe(first.bytes);

    // 20 more: the first of them are held while the bytes fit, the rest of the job dead-lettered.
    await p.route(ids.slice(20).map((id) => bigCall(id)));
    const letters = await eventually(async () => {
      const found = await p.deadLetters('dest-bytes');
      expect(found.length).toBeGreaterThan(0);
      expect(found.length + (await heldInJobs(p, 'dest-bytes')).calls).toBe(40);
      return found;
    });
    const held = await heldInJobs(p, 'dest-bytes');
    expect(held.counted).toBe(held.calls);
    expect(await p.admin.hget(`${p.prefix}:retry-held`, 'dest-bytes')).toBe(String(held.calls));
    expect(letters.map((l) => l.job.call.messageId).sort()).toEqual(ids.slice(held.calls));
    // Attempted once, or (the breaker opened after the first job's 503s) held back unattempted.
    for (const l of letters) expect(l.lastError).toBe(`retry backlog byte cap reached (DELIVERY_RETRY_MAX_BYTES_PER_DESTINATION=${MIB})`);
    // The bytes in Redis are exactly what the jobs hold, within the cap, and the next call would not have fit.
    const bytes = await heldBytesInJobs(p, 'dest-bytes');
    expect(bytes.counted).toBe(bytes.bytes);
    expect(Number(await p.admin.hget(bytesKey, 'dest-bytes'))).toBe(bytes.bytes);
    expect(bytes.bytes).toBeLessThanOrEqual(MIB);
    expect(bytes.bytes + bytes.bytes / held.calls).toBeGreaterThan(MIB);
    expect(await metricOf(p, 'eventrelay_delivery_retry_held_bytes', 'dest-bytes')).toEqual([bytes.bytes]);
    expect(await metricOf(p, 'eventrelay_delivery_retry_capped_total', 'dest-bytes')).toEqual([letters.length]);
    const audit = (await new AuditLog(p.admin, p.prefix).page({ limit: 10 })).items.filter(
      (e) => e.action === 'destination.retry_backlog_capped',
    );
    expect(audit.map((e) => e.details)).toEqual([
      { reason: 'retry backlog byte cap reached', max: 100_000, maxBytes: MIB, deadLettered: letters.length },
    ]);

    // The receiver recovers: everything held is delivered, and the bytes' field is gone.
    failing = false;
    offsetMs = 700_000;
    for (const job of await p.deliverQueue.getJobs(['delayed'])) await job.promote();
    await eventually(async () => expect(await heldInJobs(p, 'dest-bytes')).toEqual({ calls: 0, counted: 0 }), 15_000);
    expect(await p.admin.hexists(bytesKey, 'dest-bytes')).toBe(0);
    expect(await metricOf(p, 'eventrelay_delivery_retry_held_bytes', 'dest-bytes')).toEqual([0]);
    expect([...delivered].sort()).toEqual(ids.slice(0, held.calls));
  });

  it('a deleted destination’s jobs give their count and bytes back when they are dropped', async () => {
    const r = scope.track(await startReceiver({ responder: () => ({ status: 503 }) }));
    const kept = webhookDestination('dest-kept', [r.url]);
    const p = scope.track(
      await startTestPipeline({
        label: 'retry-cap-deleted',
        random,
        destinations: [kept, webhookDestination('dest-deleted', [r.url])],
        deliveryEnv: quickRetries,
      }),
    );
    await p.route(['d1', 'd2', 'd3'].map((id) => trackCall(id)));
    await eventually(async () =>
      expect(await p.admin.hgetall(heldKey(p))).toEqual({
        'dest-kept': '3',
        'dest-deleted': '3',
      }),
    );
    await p.setDestinations([kept]);
    await eventually(async () =>
      expect(await metricOf(p, 'eventrelay_delivery_messages_total', 'dest-deleted', { result: 'dropped' })).toEqual([3]),
    );
    await eventually(async () => expect(await p.admin.hgetall(heldKey(p))).toEqual({ 'dest-kept': '3' }));
    expect(Object.keys(await p.admin.hgetall(`${p.prefix}:retry-held-bytes`))).toEqual(['dest-kept']);
    expect(await heldInJobs(p, 'dest-deleted')).toEqual({ calls: 0, counted: 0 });
    expect(await heldInJobs(p, 'dest-kept')).toEqual({ calls: 3, counted: 3 });
  });

  it('a job BullMQ fails for good gives its count and bytes back; retried by an operator, it is counted again', async () => {
    let failing = true;
    const r = scope.track(await startReceiver({ responder: () => ({ status: failing ? 503 : 200 }) }));
    // Retries far away: the job waits in the delayed set until the test moves the clock and promotes it.
    let offsetMs = 0;
    const p = scope.track(
      await startTestPipeline({
        label: 'retry-cap-failed',
        random,
        clock: () => Date.now() + offsetMs,
        destinations: [webhookDestination('dest-f', [r.url])],
        deliveryEnv: { DELIVERY_RETRY_BASE_MS: '600000' },
      }),
    );
    const calls = ['f1', 'f2', 'f3'].map((id) => ({ sourceId: p.source.id, call: trackCall(id) }));
    // Added without BullMQ attempts: its first failure is its last.
    await p.deliverQueue.add('deliver', { destinationId: 'dest-f', calls }, { jobId: 'job-f' });
    const delayedJob = () =>
      eventually(async () => {
        const job = (await p.deliverQueue.getJob('job-f')) as Job<HeldDeliverJob> | undefined;
        expect(await job?.getState()).toBe('delayed');
        return job!;
      });
    const held = await delayedJob();
    expect(held.data.counted).toBe(3);
    expect(await p.admin.hget(heldKey(p), 'dest-f')).toBe('3');
    const heldBytes = held.data.calls.reduce((n, item) => n + heldCallBytes(item), 0);
    expect(held.data.countedBytes).toBe(heldBytes);
    expect(await p.admin.hget(`${p.prefix}:retry-held-bytes`, 'dest-f')).toBe(String(heldBytes));

    // A defect in the job (a retry state the processor cannot read) makes its next run throw.
    await held.updateData({ ...held.data, calls: held.data.calls.map((c) => ({ ...c, retry: { ...c.retry!, urls: null as never } })) });
    await held.promote();
    await eventually(async () => expect(await held.getState()).toBe('failed'));
    await eventually(async () => expect(await p.admin.hexists(heldKey(p), 'dest-f')).toBe(0));
    expect(await p.admin.hexists(`${p.prefix}:retry-held-bytes`, 'dest-f')).toBe(0);
    const failed = (await p.deliverQueue.getJob('job-f')) as Job<HeldDeliverJob>;
    expect(failed.data.counted).toBe(0);
    expect(failed.data.countedBytes).toBe(0);

    // The defect fixed, the operator retries it: counted again at its commit, given back once delivered.
    await failed.updateData({ ...failed.data, calls });
    await failed.retry('failed');
    await eventually(async () => expect(await p.admin.hget(heldKey(p), 'dest-f')).toBe('3'));
    expect(await heldInJobs(p, 'dest-f')).toEqual({ calls: 3, counted: 3 });
    failing = false;
    offsetMs = 700_000;
    await (await delayedJob()).promote();
    await eventually(async () => expect(await heldInJobs(p, 'dest-f')).toEqual({ calls: 0, counted: 0 }));
    expect(await p.admin.hexists(heldKey(p), 'dest-f')).toBe(0);
    expect(await p.admin.hexists(`${p.prefix}:retry-held-bytes`, 'dest-f')).toBe(0);
    expect(await p.deliverQueue.getJobCounts('failed')).toEqual({ failed: 0 });
  });
});
