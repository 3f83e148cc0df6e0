/**
 * The route worker's processor: one route job (an accepted intake request) in, its delivery jobs
 * out in one addBulk. A failure (Redis) throws, and BullMQ retries the whole route job; the
 * delivery job ids make that repeat harmless.
 */
import type { Job, Queue } from 'bullmq';
import { queueCatalog, type DeliverJob, type Destination, type NormalizedCall, type ProfileJob, type RouteJob } from '@eventrelay/config';
import type { Logger } from '@eventrelay/runtime';
import { planRoute } from './domain/plan-route.js';
import type { Suppression } from './domain/suppression.js';
import type { RouterMetrics } from './metrics.js';

export interface RouteDeps {
  readonly destinations: { forSource(sourceId: string): readonly Destination[] };
  readonly suppressions: { lookup(calls: readonly NormalizedCall[]): Promise<ReadonlyMap<string, Suppression>> };
  readonly deliverQueue: Pick<Queue<DeliverJob>, 'addBulk'>;
  /** The audiences service's feed; absent when profiles are off (ROUTER_FEED_PROFILES=false). */
  readonly profileQueue?: Pick<Queue<ProfileJob>, 'add'>;
  /** How long a delivery job id blocks a repeat of it. */
  readonly dedupeWindowMs: number;
  readonly metrics: RouterMetrics;
  readonly logger: Logger;
  readonly clock: () => number;
}

export function createRouteProcessor(deps: RouteDeps): (job: Job<RouteJob>) => Promise<void> {
  const { metrics } = deps;
  return async (job) => {
    const started = deps.clock();
    const route = job.data;
    const plan = planRoute(route, deps.destinations.forSource(route.sourceId), await deps.suppressions.lookup(route.calls));
    const writes: Promise<unknown>[] = [];
    if (plan.deliveries.length > 0) {
      writes.push(
        deps.deliverQueue.addBulk(
          plan.deliveries.map((d) => ({
            name: queueCatalog.deliver.jobName,
            data: d.data,
            opts: { jobId: d.jobId, deduplication: { id: d.jobId, ttl: deps.dedupeWindowMs } },
          })),
        ),
      );
    }
    // The same job id when a route job is retried; the profile store also applies each messageId
    // once, for a retry that comes after this job was already processed and removed.
    if (deps.profileQueue && plan.profileCalls.length > 0) writes.push(deps.profileQueue.add(queueCatalog.profile.jobName, { sourceId: route.sourceId, calls: plan.profileCalls }, { jobId: `p-${route.requestId}` }));
    await Promise.all(writes);
    const routed = route.calls.length - plan.suppressed - plan.unrouted;
    metrics.calls.inc({ result: 'routed' }, routed);
    if (plan.suppressed > 0) {
      metrics.calls.inc({ result: 'suppressed' }, plan.suppressed);
      metrics.filtered.inc({ reason: 'suppression' }, plan.suppressed);
    }
    if (plan.turnedOff > 0) metrics.filtered.inc({ reason: 'integrations' }, plan.turnedOff);
    for (const n of plan.fanout) metrics.fanout.observe(n);
    if (plan.unrouted > 0) metrics.calls.inc({ result: 'unrouted' }, plan.unrouted);
    metrics.deliveries.inc(plan.deliveries.length);
    const ms = deps.clock() - started;
    metrics.routeSeconds.observe(ms / 1000);
    deps.logger.info(
      { requestId: route.requestId, sourceId: route.sourceId, calls: route.calls.length, deliveries: plan.deliveries.length, suppressed: plan.suppressed, unrouted: plan.unrouted, attempt: job.attemptsMade + 1, ms },
      'call.routed',
    );
  };
}
