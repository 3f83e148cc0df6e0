import type { Destination } from '@eventrelay/config';
import { configKeys } from '@eventrelay/runtime';
import { deliveryJobId } from '@eventrelay/config';
import { eventually } from '../../../test/support/eventually';
import { startReceiver, type Receiver } from '../../../test/support/receiver';
import { startTestPipeline, trackCall, webhookDestination, type PipelineOptions, type TestPipeline } from '../../../test/support/pipeline';

const SOURCE = 'src-test';

let pipeline: TestPipeline | undefined;
let receiver: Receiver | undefined;

afterEach(async () => {
  await pipeline?.close();
  await receiver?.close();
  pipeline = undefined;
  receiver = undefined;
});

async function start(options: PipelineOptions): Promise<TestPipeline> {
  pipeline = await startTestPipeline({ label: 'router', delivery: false, ...options });
  return pipeline;
}

const hook = (id: string) => `https://${id}.example/hook`;
const dest = (id: string, extra: Partial<Destination> = {}) => webhookDestination(id, [hook(id)], extra);

/** Puts a route job on the queue and waits until the router finished it. */
async function routeAndWait(p: TestPipeline, requestId: string, calls: Parameters<TestPipeline['route']>[0]): Promise<void> {
  await p.route(calls, requestId);
  await waitForRouteJob(p, requestId);
}

async function waitForRouteJob(p: TestPipeline, requestId: string): Promise<void> {
  const state = await eventually(async () => {
    const s = await p.routeQueue.getJobState(requestId);
    expect(['completed', 'failed']).toContain(s);
    return s;
  });
  if (state !== 'completed') throw new Error(`route job ${requestId} failed: ${(await p.routeQueue.getJob(requestId))?.failedReason}`);
}

/** Every delivery job on the queue, as "destinationId/messageId", checked against its deterministic id. */
async function deliveryJobs(p: TestPipeline): Promise<string[]> {
  const jobs = await p.deliverQueue.getJobs(['wait', 'prioritized', 'delayed', 'active', 'completed', 'failed']);
  return jobs
    .map((job) => {
      expect(job.id).toBe(deliveryJobId(job.data.destinationId, job.data.sourceId, job.data.call.messageId));
      expect(job.id).not.toContain(':');
      expect(job.data.sourceId).toBe(SOURCE);
      return `${job.data.destinationId}/${job.data.call.messageId}`;
    })
    .sort();
}

async function pendingDeliveries(p: TestPipeline): Promise<number> {
  const counts = await p.deliverQueue.getJobCounts('wait', 'prioritized', 'delayed', 'active', 'waiting-children');
  return Object.values(counts).reduce((a, b) => a + b, 0);
}

describe('router: route jobs → delivery jobs (real Redis)', () => {
  it('plans one delivery job per (call, enabled destination connected to the source)', async () => {
    const p = await start({
      destinations: [dest('d1'), dest('d2'), dest('d-other-source', { sourceIds: ['src-other'] }), dest('d-disabled', { enabled: false })],
    });
    await routeAndWait(p, 'req-1', [trackCall('m-1'), trackCall('m-2')]);
    expect(await deliveryJobs(p)).toEqual(['d1/m-1', 'd1/m-2', 'd2/m-1', 'd2/m-2']);

    const job = await p.deliverQueue.getJob(deliveryJobId('d1', SOURCE, 'm-2'));
    expect(job?.data).toMatchObject({ sourceId: SOURCE, destinationId: 'd1', call: { type: 'track', messageId: 'm-2', userId: 'user-1', event: 'Tested' } });
    expect(job?.data.retry).toBeUndefined();
  });

  it('a destination connected to another source, or disabled, gets nothing', async () => {
    const p = await start({ destinations: [dest('d-other-source', { sourceIds: ['src-other'] }), dest('d-disabled', { enabled: false })] });
    await routeAndWait(p, 'req-1', [trackCall('m-1')]);
    expect(await deliveryJobs(p)).toEqual([]);
  });

  it('honours the integrations object end to end', async () => {
    const p = await start({ destinations: [dest('d1')] });
    await routeAndWait(p, 'req-1', [
      trackCall('none'),
      trackCall('all-off', { integrations: { All: false } }),
      trackCall('all-off-webhooks-on', { integrations: { All: false, Webhooks: true } }),
      trackCall('webhooks-off', { integrations: { Webhooks: false } }),
      trackCall('all-on-webhooks-off', { integrations: { All: true, Webhooks: false } }),
      trackCall('lowercase-off', { integrations: { webhooks: false } }),
      trackCall('options-object', { integrations: { All: false, Webhooks: { anything: 1 } } }),
    ]);
    expect(await deliveryJobs(p)).toEqual(['d1/all-off-webhooks-on', 'd1/lowercase-off', 'd1/none', 'd1/options-object']);
  });

  it('two route jobs carrying the same messageId yield one delivery job', async () => {
    const p = await start({ destinations: [dest('d1'), dest('d2')] });
    await p.route([trackCall('m-1')], 'req-1');
    await p.route([trackCall('m-1'), trackCall('m-2')], 'req-2');
    await waitForRouteJob(p, 'req-1');
    await waitForRouteJob(p, 'req-2');
    expect(await deliveryJobs(p)).toEqual(['d1/m-1', 'd1/m-2', 'd2/m-1', 'd2/m-2']);
  });

  it('the same route job, re-added after it completed and was removed, yields no second delivery job', async () => {
    const p = await start({ destinations: [dest('d1')] });
    await routeAndWait(p, 'req-1', [trackCall('m-1')]);
    expect(await deliveryJobs(p)).toEqual(['d1/m-1']);
    // BullMQ deduplication keeps the id for the router's dedupe window (ROUTER_DEDUPE_WINDOW_S, 1 h)
    const ttl = await p.admin.pttl(`${p.prefix}:deliver:de:${deliveryJobId('d1', SOURCE, 'm-1')}`);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(3_600_000);
    // as removeOnComplete would: the route job id is free again, so the re-add is really processed
    await (await p.routeQueue.getJob('req-1'))!.remove();
    expect(await p.routeQueue.getJobState('req-1')).toBe('unknown');
    await routeAndWait(p, 'req-1', [trackCall('m-1')]);
    expect(await deliveryJobs(p)).toEqual(['d1/m-1']);
  });

  describe('SUPPRESS regulations', () => {
    it('drops the calls of a user suppressed for all sources or for this source', async () => {
      const p = await start({ destinations: [dest('d1')] });
      await p.admin.hset(configKeys(p.prefix).suppressedUsers, {
        'user-all': '{}',
        'user-this-source': JSON.stringify({ sourceIds: [SOURCE] }),
        'user-other-source': JSON.stringify({ sourceIds: ['src-other'] }),
      });
      expect(configKeys(p.prefix).suppressedUsers).toBe(`${p.prefix}:reg:suppressed-users`);
      await p.router.refreshConfig();
      await routeAndWait(p, 'req-1', [
        trackCall('m-all', { userId: 'user-all' }),
        trackCall('m-this', { userId: 'user-this-source' }),
        trackCall('m-other', { userId: 'user-other-source' }),
        trackCall('m-free', { userId: 'user-free' }),
        trackCall('m-all-2', { userId: 'user-all' }),
      ]);
      expect(await deliveryJobs(p)).toEqual(['d1/m-free', 'd1/m-other']);
    });

    it('an unreadable entry still suppresses the user (for every source) and does not fail the route job', async () => {
      const p = await start({ destinations: [dest('d1')] });
      await p.admin.hset(configKeys(p.prefix).suppressedUsers, { 'user-garbled': 'not json', 'user-odd': '{"sourceIds": 7}' });
      await p.router.refreshConfig();
      await routeAndWait(p, 'req-1', [trackCall('m-garbled', { userId: 'user-garbled' }), trackCall('m-odd', { userId: 'user-odd' }), trackCall('m-free', { userId: 'user-free' })]);
      expect(await deliveryJobs(p)).toEqual(['d1/m-free']);
    });

    it('routes the user again once the suppression is lifted', async () => {
      const p = await start({ destinations: [dest('d1')] });
      const key = configKeys(p.prefix).suppressedUsers;
      await p.admin.hset(key, 'user-1', '{}');
      await p.router.refreshConfig();
      await routeAndWait(p, 'req-1', [trackCall('m-1')]);
      expect(await deliveryJobs(p)).toEqual([]);
      await p.admin.hdel(key, 'user-1');
      await p.router.refreshConfig();
      await routeAndWait(p, 'req-2', [trackCall('m-2')]);
      expect(await deliveryJobs(p)).toEqual(['d1/m-2']);
    });
  });

  it('uses a destination added at runtime for the next route job, and stops using one disabled', async () => {
    const p = await start({ destinations: [dest('d1')] });
    await routeAndWait(p, 'req-1', [trackCall('m-1')]);
    expect(await deliveryJobs(p)).toEqual(['d1/m-1']);

    await p.setDestinations([dest('d1'), dest('d2')]);
    await routeAndWait(p, 'req-2', [trackCall('m-2')]);
    expect(await deliveryJobs(p)).toEqual(['d1/m-1', 'd1/m-2', 'd2/m-2']);

    await p.setDestinations([dest('d1', { enabled: false }), dest('d2')]);
    await routeAndWait(p, 'req-3', [trackCall('m-3')]);
    expect(await deliveryJobs(p)).toEqual(['d1/m-1', 'd1/m-2', 'd2/m-2', 'd2/m-3']);
  });
});

describe('router + webhook-delivery: a call routed twice arrives once', () => {
  const messageIdsAt = (r: Receiver) => r.requests.map((req) => req.headers['x-eventrelay-message-id']);

  it('whether the copies overlap or the second comes after the first was delivered', async () => {
    receiver = await startReceiver();
    const p = await start({ delivery: true, destinations: [webhookDestination('d1', [receiver.url])] });

    // two copies in flight at once
    await p.route([trackCall('m-dup')], 'req-1');
    await p.route([trackCall('m-dup')], 'req-2');
    await waitForRouteJob(p, 'req-1');
    await waitForRouteJob(p, 'req-2');
    await receiver.waitFor(1);
    await eventually(async () => expect(await pendingDeliveries(p)).toBe(0));
    expect(messageIdsAt(receiver)).toEqual(['m-dup']);

    // a third copy after the delivery job completed and was removed, with a new call behind it;
    // only the deduplication key can stop it now
    await eventually(async () => expect(await p.deliverQueue.getJob(deliveryJobId('d1', SOURCE, 'm-dup'))).toBeUndefined());
    await routeAndWait(p, 'req-3', [trackCall('m-dup'), trackCall('m-sentinel')]);
    await receiver.waitFor(2);
    await eventually(async () => expect(await pendingDeliveries(p)).toBe(0));
    // once nothing is pending, every delivery that was going to happen has reached the receiver
    expect(messageIdsAt(receiver).sort()).toEqual(['m-dup', 'm-sentinel']);
    const attempts = await p.attempts('d1');
    expect(attempts.filter((a) => a.messageId === 'm-dup')).toHaveLength(1);
  });
});
