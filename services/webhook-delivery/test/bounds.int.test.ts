/**
 * What webhook-delivery keeps per destination is bounded: past DELIVERY_DEAD_LETTER_MAX_PER_DESTINATION
 * the oldest dead letters are evicted, counted per destination, and the episode is audited once.
 * Past DELIVERY_RETRY_MAX_PER_DESTINATION calls held for a retry, the calls that would be held
 * beyond it are dead-lettered instead, counted and audited the same way; the count in Redis stays
 * the sum over the deliver jobs whatever becomes of them (delivered, replayed, dropped, failed).
 */
import type { Job } from 'bullmq';
import type { HeldDeliverJob } from '@eventrelay/config';
import { AuditLog } from '@eventrelay/stores';
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
});

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

  const metricOf = async (p: TestPipeline, name: string, destinationId: string, labels: Record<string, string> = {}) =>
    (await p.deliveryRegistry.getSingleMetric(name)!.get()).values
      .filter((v) => v.labels.destination === destinationId && Object.entries(labels).every(([k, want]) => v.labels[k] === want))
      .map((v) => v.value);
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
      expect(audit[0]!.details).toEqual({ reason: 'retry backlog cap reached', max: 5, deadLettered: 2 });
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

  it('a deleted destination’s jobs give their count back when they are dropped', async () => {
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
    expect(await heldInJobs(p, 'dest-deleted')).toEqual({ calls: 0, counted: 0 });
    expect(await heldInJobs(p, 'dest-kept')).toEqual({ calls: 3, counted: 3 });
  });

  it('a job BullMQ fails for good gives its count back; retried by an operator, it is counted again', async () => {
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

    // A defect in the job (a retry state the processor cannot read) makes its next run throw.
    await held.updateData({ ...held.data, calls: held.data.calls.map((c) => ({ ...c, retry: { ...c.retry!, urls: null as never } })) });
    await held.promote();
    await eventually(async () => expect(await held.getState()).toBe('failed'));
    await eventually(async () => expect(await p.admin.hexists(heldKey(p), 'dest-f')).toBe(0));
    const failed = (await p.deliverQueue.getJob('job-f')) as Job<HeldDeliverJob>;
    expect(failed.data.counted).toBe(0);

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
    expect(await p.deliverQueue.getJobCounts('failed')).toEqual({ failed: 0 });
  });
});
