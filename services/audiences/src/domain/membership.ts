/**
 * Audience membership as data: which audiences a profile belongs in now, and the identify call
 * that tells a destination about a change (docs/spec.md §5). Pure.
 */
import { callDeliveryId, traitKey, type Audience, type DeliveryItem, type Destination, type NormalizedCall } from '@eventrelay/config';
import { meets } from './evaluate.js';
import { viewThrough, type Profile } from './profile.js';

export interface Desired {
  readonly audienceId: string;
  readonly member: boolean;
}

/** Membership in each audience as the profile stands at `now` (no profile: in none). */
export function desiredMembership(profile: Profile | undefined, audiences: readonly Audience[], now: number): Desired[] {
  return audiences.map((a) => {
    const view = profile && viewThrough(profile, a.sourceIds);
    return { audienceId: a.id, member: view !== undefined && meets(a.condition, view, now) };
  });
}

/** A committed change of membership, waiting in the outbox until its calls are queued. */
export interface Transition {
  readonly audienceId: string;
  readonly userId: string;
  readonly member: boolean;
  /** Unique per change; the identify's messageId derives from it, so a re-queue is deduplicated. */
  readonly transitionId: string;
  /** Epoch ms of the change: the identify's timestamp. */
  readonly at: number;
}

/** The source id membership calls are delivered under (attempt log, dead letters, logs). */
export function audienceSourceId(audienceId: string): string {
  return `audience:${audienceId}`;
}

export function membershipCall(audience: Audience, t: Transition): NormalizedCall {
  const key = traitKey(audience.name);
  const at = new Date(t.at).toISOString();
  return {
    type: 'identify',
    messageId: `aud-${t.transitionId}`,
    userId: t.userId,
    traits: { [key]: t.member },
    // Segment Personas' shape, which receivers written for it already read.
    context: { personas: { computation_class: 'audience', computation_id: audience.id, computation_key: key } },
    timestamp: at,
    receivedAt: at,
  };
}

/** One call for one destination, under the id that makes queuing it twice deliver it once. */
export interface PlannedDelivery {
  readonly jobId: string;
  readonly sourceId: string;
  readonly destinationId: string;
  readonly call: DeliveryItem['call'];
}

/** One delivery per enabled destination of the audience; a disabled or deleted one gets nothing. */
export function membershipDeliveries(audience: Audience, t: Transition, destinations: ReadonlyMap<string, Destination>): PlannedDelivery[] {
  const targets = audience.destinationIds.map((id) => destinations.get(id)).filter((d): d is Destination => d?.enabled === true);
  if (targets.length === 0) return [];
  const call = membershipCall(audience, t);
  const sourceId = audienceSourceId(audience.id);
  return targets.map((d) => ({ jobId: callDeliveryId(d.id, sourceId, call.messageId), sourceId, destinationId: d.id, call }));
}
