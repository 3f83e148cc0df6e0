import { batchDeliveryJobId, queueCatalog, type Destination, type NormalizedCall, type RouteJob } from '@eventrelay/config';
import { configKeys } from '@eventrelay/stores';
import { eventually, type Receiver, startReceiver } from '@eventrelay/testkit';
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
async function routeAndWait(p: TestPipeline, batchId: string, calls: Parameters<TestPipeline['route']>[0]): Promise<void> {
  await p.route(calls, batchId);
  await waitForRouteJob(p, batchId);
}

async function waitForRouteJob(p: TestPipeline, batchId: string): Promise<void> {
  const state = await eventually(async () => {
    const s = await p.routeQueue.getJobState(batchId);
    // A finished route job is removed at once (removeOnComplete), so "unknown" is done too.
    expect(['completed', 'failed', 'unknown']).toContain(s);
    return s;
  });
  if (state === 'failed') throw new Error(`route job ${batchId} failed: ${(await p.routeQueue.getJob(batchId))?.failedReason}`);
}

/**
 * Every (destination, call) pair the delivery jobs on the queue hold, as "destinationId/messageId",
 * read from each job's call batch; each job checked against its deterministic id.
 */
async function deliveryJobs(p: TestPipeline): Promise<string[]> {
  const jobs = await p.deliverQueue.getJobs(['wait', 'prioritized', 'delayed', 'active', 'completed', 'failed']);
  const pairs: string[] = [];
  for (const job of jobs) {
    const data = job.data;
    if (!('batch' in data)) throw new Error(`expected a batch job, got ${JSON.stringify(data)}`);
    expect(job.id).toBe(batchDeliveryJobId(data.destinationId, data.batch.id));
    expect(job.id).not.toContain(':');
    for (const part of data.batch.parts) expect(part.sourceId).toBe(SOURCE);
    for (const call of (await p.batches.readCalls(data.destinationId, data.batch)) ?? [])
      pairs.push(`${data.destinationId}/${call?.messageId}`);
  }
  return pairs.sort();
}

async function pendingDeliveries(p: TestPipeline): Promise<number> {
  const counts = await p.deliverQueue.getJobCounts('wait', 'prioritized', 'delayed', 'active', 'waiting-children');
  return Object.values(counts).reduce((a, b) => a + b, 0);
}

describe('router: route jobs → delivery jobs (real Redis)', () => {
  it('plans one delivery job per enabled destination connected to the source, holding its calls by reference', async () => {
    const p = await start({
      destinations: [dest('d1'), dest('d2'), dest('d-other-source', { sourceIds: ['src-other'] }), dest('d-disabled', { enabled: false })],
    });
    await routeAndWait(p, 'req-1', [trackCall('m-1'), trackCall('m-2')]);
    expect(await deliveryJobs(p)).toEqual(['d1/m-1', 'd1/m-2', 'd2/m-1', 'd2/m-2']);

    const job = await p.deliverQueue.getJob(batchDeliveryJobId('d1', 'req-1'));
    expect(job?.data).toEqual({ destinationId: 'd1', batch: { id: 'req-1', parts: [{ part: 0, sourceId: SOURCE, indexes: [0, 1] }] } });
    // The batch keeps the calls as ingest stored them (one field per request), and now names the
    // destinations holding it instead of the route entries.
    const batch = await p.admin.hgetall(p.batches.key('req-1'));
    expect(Object.keys(batch).sort()).toEqual(['c0', 'd:d1', 'd:d2', 'h']);
    expect((JSON.parse(batch['c0']!) as NormalizedCall[])[1]).toMatchObject({
      type: 'track',
      messageId: 'm-2',
      userId: 'user-1',
      event: 'Tested',
    });
    expect(batch['h']).toBe('2');
  });

  it('deletes a batch no destination takes as soon as it is routed', async () => {
    const p = await start({ destinations: [dest('d-disabled', { enabled: false })] });
    await routeAndWait(p, 'req-1', [trackCall('m-1')]);
    expect(await p.admin.exists(p.batches.key('req-1'))).toBe(0);
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

  it('a messageId in two route jobs (a request seen twice) is routed once: the second batch never stored it', async () => {
    const p = await start({ destinations: [dest('d1'), dest('d2')] });
    await p.route([trackCall('m-1')], 'req-1');
    await p.route([trackCall('m-1'), trackCall('m-2')], 'req-2');
    await waitForRouteJob(p, 'req-1');
    await waitForRouteJob(p, 'req-2');
    expect(await deliveryJobs(p)).toEqual(['d1/m-1', 'd1/m-2', 'd2/m-1', 'd2/m-2']);
  });

  it('the same route job, run again after it completed and was removed, adds nothing: its batch is marked routed', async () => {
    const p = await start({ destinations: [dest('d1')] });
    await routeAndWait(p, 'req-1', [trackCall('m-1')]);
    expect(await deliveryJobs(p)).toEqual(['d1/m-1']);
    expect(await p.admin.hexists(p.batches.key('req-1'), 'r')).toBe(0);
    // As a retry after the router died between its MULTI and finishing the job would: same id, same batch.
    await p.routeQueue.add(queueCatalog.route.jobName, { batchId: 'req-1' }, { jobId: 'req-1' });
    await waitForRouteJob(p, 'req-1');
    expect(await deliveryJobs(p)).toEqual(['d1/m-1']);
    expect(await p.deliverQueue.count()).toBe(1);
  });

  // No refreshConfig() after a suppression is written: each route job reads the list itself.
  describe('SUPPRESS regulations', () => {
    it('drops the calls of a user suppressed for all sources or for this source', async () => {
      const p = await start({ destinations: [dest('d1')] });
      await p.admin.hset(configKeys(p.prefix).suppressedUsers, {
        'user-all': '{}',
        'user-this-source': JSON.stringify({ sourceIds: [SOURCE] }),
        'user-other-source': JSON.stringify({ sourceIds: ['src-other'] }),
      });
      expect(configKeys(p.prefix).suppressedUsers).toBe(`${p.prefix}:reg:suppressed-users`);
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
      await routeAndWait(p, 'req-1', [
        trackCall('m-garbled', { userId: 'user-garbled' }),
        trackCall('m-odd', { userId: 'user-odd' }),
        trackCall('m-free', { userId: 'user-free' }),
      ]);
      expect(await deliveryJobs(p)).toEqual(['d1/m-free']);
    });

    it('routes the user again once the suppression is lifted', async () => {
      const p = await start({ destinations: [dest('d1')] });
      const key = configKeys(p.prefix).suppressedUsers;
      await p.admin.hset(key, 'user-1', '{}');
      await routeAndWait(p, 'req-1', [trackCall('m-1')]);
      expect(await deliveryJobs(p)).toEqual([]);
      await p.admin.hdel(key, 'user-1');
      await routeAndWait(p, 'req-2', [trackCall('m-2')]);
      expect(await deliveryJobs(p)).toEqual(['d1/m-2']);
    });

    it('a route job queued before jobs carried batches drops a suppressed user’s calls too', async () => {
      const p = await start({ destinations: [dest('d1')] });
      await p.admin.hset(configKeys(p.prefix).suppressedUsers, 'user-gone', '{}');
      const legacy = { sourceId: SOURCE, requestId: 'req-old', calls: [trackCall('m-gone', { userId: 'user-gone' }), trackCall('m-kept')] };
      await p.routeQueue.add(queueCatalog.route.jobName, legacy as unknown as RouteJob, { jobId: 'req-old' });
      await waitForRouteJob(p, 'req-old');
      const jobs = await p.deliverQueue.getJobs(['wait', 'prioritized', 'delayed', 'active']);
      expect(jobs.map((j) => j.data)).toEqual([{ destinationId: 'd1', calls: [{ sourceId: SOURCE, call: legacy.calls[1] }] }]);
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

    // a third copy after the delivery job completed and was removed, with a new call behind it
    await routeAndWait(p, 'req-3', [trackCall('m-dup'), trackCall('m-sentinel')]);
    await receiver.waitFor(2);
    await eventually(async () => expect(await pendingDeliveries(p)).toBe(0));
    // once nothing is pending, every delivery that was going to happen has reached the receiver
    expect(messageIdsAt(receiver).sort()).toEqual(['m-dup', 'm-sentinel']);
    const attempts = await p.attempts('d1');
    expect(attempts.filter((a) => a.messageId === 'm-dup')).toHaveLength(1);
  });

  it('a route job processed twice, after its calls were delivered, delivers each call once', async () => {
    receiver = await startReceiver();
    const p = await start({
      delivery: true,
      destinations: [webhookDestination('d1', [receiver.url]), webhookDestination('d2', [receiver.url])],
    });
    const ids = ['t-1', 't-2', 't-3'];
    await routeAndWait(
      p,
      'req-twice',
      ids.map((id) => trackCall(id)),
    );
    await receiver.waitFor(6);
    await eventually(async () => expect(await pendingDeliveries(p)).toBe(0));
    // Every destination released the batch after its round: it is gone.
    await eventually(async () => expect(await p.admin.exists(p.batches.key('req-twice'))).toBe(0));
    await p.routeQueue.add(queueCatalog.route.jobName, { batchId: 'req-twice' }, { jobId: 'req-twice' });
    await waitForRouteJob(p, 'req-twice');
    await routeAndWait(p, 'req-sentinel', [trackCall('sentinel')]);
    await receiver.waitFor(8);
    await eventually(async () => expect(await pendingDeliveries(p)).toBe(0));
    expect(
      messageIdsAt(receiver)
        .filter((id) => id !== 'sentinel')
        .sort(),
    ).toEqual([...ids, ...ids].sort());
  });
});
