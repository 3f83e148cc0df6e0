/**
 * Delivery jobs that hold many calls (docs/delivery.md, "The job model"): every rule of
 * docs/spec.md §4 still holds per call. A job whose calls get mixed outcomes delivers each 2xx once,
 * retries only the calls that failed retryably (in the job, each with its own state), and
 * dead-letters the others one letter each; each call's retry window counts from its own first
 * attempt; and replaying one dead letter out of a batch delivers that call alone.
 */
import type { DeliveryAttempt, HeldDeliverJob } from '@eventrelay/config';
import { callDeliveryId } from '@eventrelay/config';
import { eventually, type ReceivedRequest, type Receiver, startReceiver, sleep } from '@eventrelay/testkit';
import { testScope } from '../../../test/support/scope';
import { startTestAdmin } from '../../../test/support/admin';
import { startTestPipeline, trackCall, webhookDestination, type PipelineOptions, type TestPipeline } from '../../../test/support/pipeline';

/** With random() = 0.999 the backoff after round n is just under BASE_MS * 2^(n-1). */
const BASE_MS = 300;
const random = () => 0.999;
const idOf = (r: ReceivedRequest) => String(r.headers['x-eventrelay-message-id']);
const attemptOf = (r: ReceivedRequest) => Number(r.headers['x-eventrelay-attempt']);

describe('delivery jobs holding many calls', () => {
  const scope = testScope();
  async function receiver(...args: Parameters<typeof startReceiver>): Promise<Receiver> {
    return scope.track(await startReceiver(...args));
  }
  async function pipeline(options: PipelineOptions): Promise<TestPipeline> {
    return scope.track(
      await startTestPipeline({ random, ...options, deliveryEnv: { DELIVERY_RETRY_BASE_MS: String(BASE_MS), ...options.deliveryEnv } }),
    );
  }

  it('mixed outcomes in one job (200, 500 then 200, 404): each 2xx once, only the 500s retried, one dead letter per 404', async () => {
    const failedOnce = new Set<string>();
    const r = await receiver({
      responder: (req) => {
        const id = idOf(req);
        if (id.startsWith('gone-')) return { status: 404 };
        if (id.startsWith('flaky-') && !failedOnce.has(id)) {
          failedOnce.add(id);
          return { status: 500 };
        }
        return { status: 200 };
      },
    });
    const p = await pipeline({ label: 'batch-mixed', destinations: [webhookDestination('dest-mixed', [r.url])] });
    const ok = ['ok-1', 'ok-2', 'ok-3', 'ok-4'];
    const flaky = ['flaky-1', 'flaky-2', 'flaky-3'];
    const gone = ['gone-1', 'gone-2'];
    // Interleaved, so the outcomes are spread over the job.
    const ids = ['ok-1', 'flaky-1', 'gone-1', 'ok-2', 'flaky-2', 'ok-3', 'gone-2', 'flaky-3', 'ok-4'];
    await p.route(
      ids.map((id) => trackCall(id)),
      'mixed',
    );

    // First round: every call once, at attempt 1.
    await r.waitFor(ids.length);
    // After it: the job holds the three 500s alone, each with its own retry state, and the batch is released.
    const held = await eventually(async () => {
      const [job] = await p.deliverQueue.getJobs(['delayed', 'wait', 'active']);
      expect(job && 'calls' in job.data).toBe(true);
      return job!.data as HeldDeliverJob;
    });
    expect(held.calls.map((c) => c.call.messageId)).toEqual(flaky);
    for (const c of held.calls) expect(c.retry).toMatchObject({ attempt: 1, urls: { [r.url]: { lastError: 'HTTP 500' } } });
    expect(await p.admin.exists(p.batches.key('mixed'))).toBe(0);

    // Second round: the 500s again (attempt 2), nothing else.
    await r.waitFor(ids.length + flaky.length);
    await eventually(async () =>
      expect(await p.deliverQueue.getJobCounts('wait', 'delayed', 'active')).toEqual({ wait: 0, delayed: 0, active: 0 }),
    );
    await sleep(3 * BASE_MS);
    const seen = r.requests.map((q) => `${idOf(q)}#${attemptOf(q)}`);
    expect(seen.slice(0, ids.length).sort()).toEqual(ids.map((id) => `${id}#1`).sort());
    expect(seen.slice(ids.length).sort()).toEqual(flaky.map((id) => `${id}#2`).sort());

    // Dead letters: one per 404, with its own attempt count and error; none for the others.
    const letters = await eventually(async () => {
      const found = await p.deadLetters('dest-mixed');
      expect(found).toHaveLength(gone.length);
      return found;
    });
    expect(letters.map((l) => l.job.call.messageId).sort()).toEqual(gone);
    for (const l of letters) {
      expect(l).toMatchObject({
        jobId: callDeliveryId('dest-mixed', 'src-test', l.job.call.messageId),
        attempts: 1,
        lastError: `${r.url}: HTTP 404`,
        job: { sourceId: 'src-test', destinationId: 'dest-mixed' },
      });
    }

    // The attempt log: one entry per attempt per call.
    const attempts = await p.attempts('dest-mixed');
    const byCall = (id: string) => attempts.filter((a: DeliveryAttempt) => a.messageId === id).map((a) => `${a.attempt}:${a.outcome}`);
    for (const id of ok) expect(byCall(id)).toEqual(['1:success']);
    for (const id of flaky) expect(byCall(id).sort()).toEqual(['1:retryable', '2:success']);
    for (const id of gone) expect(byCall(id)).toEqual(['1:permanent']);
  });

  it('counts each call’s retry window from its own first attempt, within one job', async () => {
    const r = await receiver({ responder: () => ({ status: 503 }) });
    const p = await pipeline({
      label: 'batch-window',
      destinations: [webhookDestination('dest-window', [r.url])],
      deliveryEnv: { RETRY_WINDOW_MS: '60000' },
    });
    const now = Date.now();
    const state = (firstAttemptAt: number) => ({
      firstAttemptAt,
      attempt: 3,
      urls: { [r.url]: { lastError: 'HTTP 503', notBefore: now - 1 } },
    });
    // Two calls retried together: one first tried two minutes ago (its window has passed), one just now.
    await p.deliverQueue.add('deliver', {
      destinationId: 'dest-window',
      calls: [
        { sourceId: 'src-test', call: trackCall('old'), retry: state(now - 120_000) },
        { sourceId: 'src-test', call: trackCall('young'), retry: state(now - 1_000) },
      ],
    });
    await r.waitFor(2);
    const [letter] = await eventually(async () => {
      const found = await p.deadLetters('dest-window');
      expect(found).toHaveLength(1);
      return found;
    });
    expect(letter?.job.call.messageId).toBe('old');
    expect(letter?.lastError).toMatch(/^retry window of 1 min passed/);
    expect(letter?.attempts).toBe(4);
    // The young one goes on, alone, at attempt 5 next.
    const held = await eventually(async () => {
      const [job] = await p.deliverQueue.getJobs(['delayed', 'wait']);
      expect(job).toBeDefined();
      return job!.data as HeldDeliverJob;
    });
    expect(held.calls.map((c) => [c.call.messageId, c.retry?.attempt, c.retry?.firstAttemptAt])).toEqual([['young', 4, now - 1_000]]);
  });

  it('replaying one dead letter out of a batch delivers only that call', async () => {
    let accept = false;
    const r = await receiver({ responder: () => ({ status: accept ? 200 : 404 }) });
    const p = await pipeline({ label: 'batch-replay', destinations: [webhookDestination('dest-replay', [r.url])] });
    const admin = scope.track(await startTestAdmin({ prefix: p.prefix }));
    const ids = ['r-1', 'r-2', 'r-3'];
    await p.route(
      ids.map((id) => trackCall(id)),
      'replayed',
    );
    await r.waitFor(3);
    await eventually(async () => expect(await p.deadLetters('dest-replay')).toHaveLength(3));

    accept = true;
    const answer = await admin.call('POST', '/destinations/dest-replay/replay', { messageIds: ['r-2'] });
    expect(answer).toMatchObject({ status: 200, body: { replayed: 1, notFound: [] } });
    await r.waitFor(4);
    await eventually(async () =>
      expect(await p.deliverQueue.getJobCounts('wait', 'delayed', 'active')).toEqual({ wait: 0, delayed: 0, active: 0 }),
    );
    await sleep(500);
    expect(
      r.requests.slice(3).map((q) => `${idOf(q)}#${attemptOf(q)}#${q.headers['x-signature'] === undefined ? 'unsigned' : 'signed'}`),
    ).toEqual(['r-2#1#unsigned']);
    expect((await p.deadLetters('dest-replay')).map((l) => l.job.call.messageId).sort()).toEqual(['r-1', 'r-3']);
  });
});
