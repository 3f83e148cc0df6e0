/**
 * At-least-once across a crash (docs/spec.md §4: "a worker that dies mid-flight loses nothing").
 * Ingest and router run in this process; webhook-delivery runs as a real child process (the
 * compiled service, as operators run it) against the same prefix. While many deliveries to a slow
 * receiver are in flight the child is SIGKILLed, and a new one is started. Every call must reach
 * the receiver; the ones delivered twice are counted, reported, and may only be calls of jobs
 * that were active in the killed process.
 */
import { buildServices, eventually, startReceiver, startService, type Receiver, type ServiceProcess } from '@eventrelay/testkit';
import { post } from '../../../test/support/ingest';
import { startTestPipeline, webhookDestination, type TestPipeline } from '../../../test/support/pipeline';

const CALLS = 1_000;
const BATCH = 50;
/** Kill once the receiver has seen this many: some, but well before all. */
const KILL_AFTER_RECEIVED = 100;

/** Every child this file started, so afterAll can end them whatever happened. */
const children: ServiceProcess[] = [];

async function startDeliveryChild(prefix: string, redisUrl: string): Promise<ServiceProcess> {
  const child = await startService('webhook-delivery', {
    REDIS_URL: redisUrl,
    EVENTRELAY_PREFIX: prefix,
    WEBHOOK_ALLOWED_NETWORKS: '127.0.0.0/8',
    LOG_LEVEL: 'warn',
  });
  children.push(child);
  return child;
}

describe('webhook-delivery killed mid-flight (SIGKILL) and restarted', () => {
  let receiver: Receiver;
  let pipeline: TestPipeline;
  /** Answer delay chosen for the n-th request the receiver saw. */
  const delays: number[] = [];

  beforeAll(async () => {
    buildServices('webhook-delivery');
    // A slow receiver, so that many deliveries are open when the worker dies.
    receiver = await startReceiver({
      responder: (_req, index) => {
        const delayMs = 200 + Math.floor(Math.random() * 300);
        delays[index] = delayMs;
        return { status: 200, delayMs };
      },
    });
    pipeline = await startTestPipeline({
      label: 'crash',
      ingest: true,
      delivery: false,
      destinations: [webhookDestination('dest-crash', [receiver.url])],
    });
  }, 120_000);

  afterAll(async () => {
    await Promise.all(children.map((c) => c.stop('SIGKILL')));
    await pipeline?.close();
    await receiver?.close();
  });

  it('delivers every call at least once; duplicates only for jobs in flight at the kill', async () => {
    const first = await startDeliveryChild(pipeline.prefix, pipeline.redisUrl);

    const runId = Date.now().toString(36);
    const ids = Array.from({ length: CALLS }, (_, i) => `crash-${runId}-${String(i).padStart(4, '0')}`);
    const sending = (async () => {
      for (let i = 0; i < CALLS; i += BATCH) {
        const batch = ids.slice(i, i + BATCH).map((messageId, j) => ({
          type: 'track',
          messageId,
          userId: `user-${(i + j) % 37}`,
          event: 'Crash Tested',
          properties: { n: i + j },
        }));
        const res = await post(pipeline.ingestUrl, '/v1/batch', { batch }, { writeKey: pipeline.writeKey });
        if (res.status !== 200) throw new Error(`intake answered ${res.status} ${JSON.stringify(res.json)}`);
      }
    })();

    // Kill once the receiver has seen some, while the deliver queue has active jobs.
    await eventually(
      async () => {
        expect(receiver.requests.length).toBeGreaterThanOrEqual(KILL_AFTER_RECEIVED);
        expect(await pipeline.deliverQueue.getActiveCount()).toBeGreaterThan(0);
      },
      30_000,
      10,
    );
    first.child.kill('SIGKILL');
    const killedAt = Date.now();
    expect(await first.exited).toEqual({ code: null, signal: 'SIGKILL' });
    await sending;

    // With no worker alive, the active list is exactly what the dead process held: batch jobs,
    // whose calls are read from their batch, and jobs holding calls to retry.
    const activeAtKill = await pipeline.deliverQueue.getActive(0, -1);
    const inFlightIds = new Set<string>();
    for (const job of activeAtKill) {
      const data = job.data;
      if ('calls' in data) for (const item of data.calls) inFlightIds.add(item.call.messageId);
      else
        for (const call of (await pipeline.batches.readCalls(data.destinationId, data.batch)) ?? [])
          if (call) inFlightIds.add(call.messageId);
    }
    const receivedAtKill = receiver.requests.length;
    const openAtReceiver = receiver.requests.filter((r, i) => r.at + (delays[i] ?? 0) > killedAt).length;
    expect(receivedAtKill).toBeLessThan(CALLS / 2);
    expect(inFlightIds.size).toBeGreaterThan(0);

    await startDeliveryChild(pipeline.prefix, pipeline.redisUrl);
    // Done when every call arrived and the queue holds nothing more: the jobs of the dead process
    // come back only once their locks lapse (~15 s) and a stalled check (every 5 s) sees that.
    await eventually(
      async () => {
        const seen = new Set(receiver.requests.map((r) => r.headers['x-eventrelay-message-id']));
        expect(seen.size).toBe(CALLS);
        const counts = await pipeline.deliverQueue.getJobCounts('active', 'wait', 'delayed', 'prioritized', 'waiting-children');
        expect(counts).toEqual({ active: 0, wait: 0, delayed: 0, prioritized: 0, 'waiting-children': 0 });
      },
      75_000,
      250,
    );

    const counts = new Map<string, number>();
    for (const r of receiver.requests) {
      const id = String(r.headers['x-eventrelay-message-id']);
      counts.set(id, (counts.get(id) ?? 0) + 1);
    }
    const duplicated = [...counts].filter(([, n]) => n > 1).map(([id]) => id);
    console.log(
      `crash test: received ${receivedAtKill} before the kill, ${activeAtKill.length} deliver jobs holding ${inFlightIds.size} calls active in the killed process ` +
        `(${openAtReceiver} requests unanswered at the receiver); after restart ${receiver.requests.length} requests for ${counts.size} messageIds, ` +
        `${duplicated.length} messageIds delivered more than once`,
    );

    expect([...counts.keys()].sort()).toEqual([...ids].sort());
    expect(await pipeline.deliverQueue.getFailedCount()).toBe(0);
    // Duplicates are the price of at-least-once, bounded by what was in flight when the worker died.
    expect(duplicated.length).toBeLessThanOrEqual(inFlightIds.size);
    expect(duplicated.filter((id) => !inFlightIds.has(id))).toEqual([]);
    expect(Math.max(...counts.values())).toBeLessThanOrEqual(2);
  }, 150_000);
});
