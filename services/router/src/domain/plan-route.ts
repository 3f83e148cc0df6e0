/**
 * What one route job becomes: a delivery job per (call, selected destination), what the audiences
 * service needs of its identify and track calls, and a count of the calls dropped on the way and
 * why, for the log line and the metrics.
 */
import { deliveryJobId, type DeliverJob, type Destination, type ProfileCall, type RouteJob } from '@eventrelay/config';
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
  /** (call, enabled connected destination) pairs that a call's `integrations` turned off. */
  readonly turnedOff: number;
  /** Delivery jobs per call, in call order (0 for a suppressed or unrouted call). */
  readonly fanout: number[];
  /** Identify and track calls with a userId, for profiles; suppressed users' calls are not here. */
  readonly profileCalls: ProfileCall[];
}

export function planRoute(job: RouteJob, connected: readonly Destination[], suppressions: ReadonlyMap<string, Suppression>): RoutePlan {
  const deliveries: PlannedDelivery[] = [];
  let suppressed = 0;
  let unrouted = 0;
  let turnedOff = 0;
  const fanout: number[] = [];
  const profileCalls: ProfileCall[] = [];
  const enabled = connected.filter((d) => d.enabled).length;
  for (const call of job.calls) {
    if (isSuppressed(call, job.sourceId, call.userId === undefined ? undefined : suppressions.get(call.userId))) {
      suppressed++;
      fanout.push(0);
      continue;
    }
    const profileCall = toProfileCall(call);
    if (profileCall) profileCalls.push(profileCall);
    const targets = selectDestinations(call, connected);
    if (targets.length === 0) unrouted++;
    turnedOff += enabled - targets.length;
    fanout.push(targets.length);
    for (const d of targets) deliveries.push({ jobId: deliveryJobId(d.id, job.sourceId, call.messageId), data: { sourceId: job.sourceId, destinationId: d.id, call } });
  }
  return { deliveries, suppressed, unrouted, turnedOff, fanout, profileCalls };
}

// Anonymous calls feed no profile: audiences are delivered by userId (identity resolution of
// anonymousIds is out of scope, docs/audiences.md).
function toProfileCall(call: RouteJob['calls'][number]): ProfileCall | undefined {
  if (call.userId === undefined || call.userId === '') return undefined;
  const base = { messageId: call.messageId, userId: call.userId, timestamp: call.timestamp };
  if (call.type === 'identify') return { type: 'identify', ...base, ...(call.traits ? { traits: call.traits } : {}) };
  if (call.type === 'track' && call.event !== undefined) return { type: 'track', ...base, event: call.event };
  return undefined;
}
