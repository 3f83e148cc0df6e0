/**
 * Graceful shutdown (issue 7): SIGTERM to the compiled webhook-delivery while a receiver takes 3 s
 * to answer. Readiness turns false at once, the attempts in flight finish (the receiver's answers
 * are read), the calls not sent yet stay queued for the next worker (held in their job, not
 * attempted), the process exits 0, and nothing is lost, repeated or left active in Redis.
 */
import { buildServices, eventually, startReceiver, startService, type Receiver, type ServiceProcess } from '@eventrelay/testkit';
import { startTestPipeline, trackCall, webhookDestination, type TestPipeline } from '../../../test/support/pipeline';

const SLOW_MS = 3000;
/** Requests the first process has open to the receiver at once: the rest of the job's calls wait. */
const CONCURRENCY = 5;
const CALLS = 8;

describe('webhook-delivery on SIGTERM while a receiver is slow', () => {
  let receiver: Receiver;
  let pipeline: TestPipeline;
  const children: ServiceProcess[] = [];
  const startDelivery = (env: Record<string, string>) =>
    startService('webhook-delivery', {
      REDIS_URL: pipeline.redisUrl,
      EVENTRELAY_PREFIX: pipeline.prefix,
      WEBHOOK_ALLOWED_NETWORKS: '127.0.0.0/8',
      ...env,
    });

  beforeAll(async () => {
    buildServices('webhook-delivery');
    receiver = await startReceiver({ responder: () => ({ status: 200, delayMs: SLOW_MS }) });
    pipeline = await startTestPipeline({
      label: 'shutdown',
      delivery: false,
      destinations: [webhookDestination('dest-slow', [receiver.url])],
    });
  }, 120_000);

  afterAll(async () => {
    await Promise.all(children.map((c) => c.stop('SIGKILL')));
    await pipeline?.close();
    await receiver?.close();
  });

  it('finishes the attempts in flight, leaves the rest queued, exits 0, and loses nothing', async () => {
    const env = {
      DELIVERY_CONCURRENCY: String(CONCURRENCY),
      DELIVERY_MAX_IN_FLIGHT_PER_DESTINATION: String(CONCURRENCY),
      LOG_LEVEL: 'info',
    };
    const first = await startDelivery(env);
    children.push(first);
    const ids = Array.from({ length: CALLS }, (_, i) => `slow-${i}`);
    await pipeline.route(ids.map((id) => trackCall(id)));

    await eventually(() => expect(receiver.requests).toHaveLength(CONCURRENCY), 10_000, 20);
    // One route job, one destination: one delivery job holds all the calls.
    expect(await pipeline.deliverQueue.getActiveCount()).toBe(1);
    const signalledAt = Date.now();
    first.child.kill('SIGTERM');

    // Readiness fails while the attempts finish, so a balancer or Kubernetes stops counting on it.
    await eventually(async () => expect((await fetch(`http://127.0.0.1:${first.port}/readyz`)).status).toBe(503), 2000, 20);
    expect(await first.exited).toEqual({ code: 0, signal: null });
    const exitedAt = Date.now();
    // It waited for the receiver's answers rather than dropping them.
    expect(exitedAt - signalledAt).toBeGreaterThanOrEqual(SLOW_MS - 1000);
    expect(first.output()).toContain('shutdown.done');
    expect(first.output()).not.toContain('shutdown.step_failed');

    // Nothing taken by the stopped process is left active; the calls it never sent wait in their
    // job, unattempted, due at once.
    const counts = await pipeline.deliverQueue.getJobCounts('active', 'wait', 'delayed', 'failed');
    expect(counts).toMatchObject({ active: 0, failed: 0 });
    expect(counts['wait']! + counts['delayed']!).toBe(1);
    const [held] = await pipeline.deliverQueue.getJobs(['wait', 'delayed']);
    const sent = new Set(receiver.requests.map((r) => String(r.headers['x-eventrelay-message-id'])));
    expect(held && 'calls' in held.data ? held.data.calls.map((c) => [c.call.messageId, c.retry]) : held?.data).toEqual(
      ids.filter((id) => !sent.has(id)).map((id) => [id, undefined]),
    );
    expect(receiver.requests).toHaveLength(CONCURRENCY);

    // The next process delivers the rest, and only the rest.
    const second = await startDelivery(env);
    children.push(second);
    await eventually(() => expect(receiver.requests).toHaveLength(CALLS), 15_000, 50);
    await eventually(
      async () =>
        expect(await pipeline.deliverQueue.getJobCounts('active', 'wait', 'delayed', 'failed')).toEqual({
          active: 0,
          wait: 0,
          delayed: 0,
          failed: 0,
        }),
      10_000,
      50,
    );
    const delivered = receiver.requests.map((r) => String(r.headers['x-eventrelay-message-id']));
    expect([...delivered].sort()).toEqual([...ids].sort());
    await second.stop('SIGTERM', 10_000);
    expect(await second.exited).toEqual({ code: 0, signal: null });
    // Each process wrote its buffered attempt log on the way out: one success per call, no repeat.
    const attempts = await pipeline.attempts('dest-slow');
    expect(attempts.map((a) => `${a.messageId}:${a.outcome}`).sort()).toEqual(ids.map((id) => `${id}:success`).sort());
  }, 60_000);
});
