/**
 * What one route job becomes: a delivery job per (call, selected destination), and a count of the
 * calls dropped on the way and why, for the log line and the metrics.
 */
import type { DeliverJob, Destination, RouteJob } from '@eventrelay/config';
import { deliveryJobId } from './delivery-job-id.js';
import { selectDestinations } from './select-destinations.js';
import { isSuppressed, type Suppression } from './suppression.js';

export interface PlannedDelivery {
  readonly jobId: string;
  readonly data: DeliverJob;
}

export interface RoutePlan {
  readonly deliveries: PlannedDelivery[];
  readonly suppressed: number;
  /** Calls that no destination takes (none connected, or `integrations` turned them all off). */
  readonly unrouted: number;
}

export function planRoute(job: RouteJob, connected: readonly Destination[], suppressions: ReadonlyMap<string, Suppression>): RoutePlan {
  const deliveries: PlannedDelivery[] = [];
  let suppressed = 0;
  let unrouted = 0;
  for (const call of job.calls) {
    if (isSuppressed(call, job.sourceId, call.userId === undefined ? undefined : suppressions.get(call.userId))) {
      suppressed++;
      continue;
    }
    const targets = selectDestinations(call, connected);
    if (targets.length === 0) unrouted++;
    for (const d of targets) deliveries.push({ jobId: deliveryJobId(d.id, job.sourceId, call.messageId), data: { sourceId: job.sourceId, destinationId: d.id, call } });
  }
  return { deliveries, suppressed, unrouted };
}
