/**
 * Jobs in the shapes written before jobs carried batches, still queued when a deployment upgrades
 * (a route job per intake request holding its calls; a delivery job per call, maybe retrying):
 * the new router and webhook-delivery deliver them, each call once, keeping a retry's state.
 */
import { queueCatalog, type DeliverJob, type RouteJob } from '@eventrelay/config';
import { eventually, type ReceivedRequest, startReceiver } from '@eventrelay/testkit';
import { testScope } from '../../../test/support/scope';
import { startTestPipeline, trackCall, webhookDestination } from '../../../test/support/pipeline';

const idOf = (r: ReceivedRequest) => String(r.headers['x-eventrelay-message-id']);

describe('jobs queued before jobs carried batches', () => {
  const scope = testScope();

  it('are delivered after the upgrade: old route jobs through the router, old delivery jobs with their retry state', async () => {
    const r = scope.track(await startReceiver());
    const p = scope.track(
      await startTestPipeline({ label: 'upgrade', destinations: [webhookDestination('d-old', [r.url], { sharedSecret: 's3cret' })] }),
    );
    // As the old ingest wrote them: the calls in the job.
    const oldRoute = { sourceId: p.source.id, requestId: 'req-old-1', calls: [trackCall('old-r-1'), trackCall('old-r-2')] };
    await p.routeQueue.add(queueCatalog.route.jobName, oldRoute as unknown as RouteJob, { jobId: 'req-old-1' });
    // As the old router wrote them, one of them retrying already (two rounds made).
    const retry = {
      firstAttemptAt: Date.now() - 60_000,
      attempt: 2,
      urls: { [r.url]: { lastError: 'HTTP 503', notBefore: Date.now() - 1 } },
    };
    await p.deliverQueue.add(
      queueCatalog.deliver.jobName,
      { sourceId: p.source.id, destinationId: 'd-old', call: trackCall('old-d-1'), retry } as unknown as DeliverJob,
      { jobId: 'd-old-x1' },
    );
    await p.deliverQueue.add(
      queueCatalog.deliver.jobName,
      { sourceId: p.source.id, destinationId: 'd-old', call: trackCall('old-d-2') } as unknown as DeliverJob,
      { jobId: 'd-old-x2' },
    );

    await r.waitFor(4);
    await eventually(async () =>
      expect(await p.deliverQueue.getJobCounts('wait', 'delayed', 'active', 'failed')).toEqual({
        wait: 0,
        delayed: 0,
        active: 0,
        failed: 0,
      }),
    );
    expect(r.requests.map(idOf).sort()).toEqual(['old-d-1', 'old-d-2', 'old-r-1', 'old-r-2']);
    const attemptOf = (id: string) => r.requests.find((q) => idOf(q) === id)?.headers['x-eventrelay-attempt'];
    expect(attemptOf('old-d-1')).toBe('3');
    expect(attemptOf('old-d-2')).toBe('1');
    expect(attemptOf('old-r-1')).toBe('1');
    for (const q of r.requests) expect(q.headers['x-signature']).toMatch(/^[0-9a-f]{40}$/);
    expect(await p.routeQueue.getJobCounts('wait', 'active', 'failed')).toEqual({ wait: 0, active: 0, failed: 0 });
  });
});
