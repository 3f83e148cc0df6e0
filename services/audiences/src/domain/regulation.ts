/**
 * What a regulation does, as data (docs/spec.md §6): which sources it affects, the delete
 * notifications it forwards. Pure.
 */
import { hash } from 'node:crypto';
import { callDeliveryId, type ConfigSnapshot, type DeleteNotice, type RegulationJob } from '@eventrelay/config';
import type { PlannedDelivery } from './membership.js';

export function deletes(job: RegulationJob): boolean {
  return job.request.regulationType !== 'SUPPRESS';
}

export function suppresses(job: RegulationJob): boolean {
  return job.request.regulationType !== 'DELETE';
}

/** The listed sources that still exist, or every source. */
export function affectedSources(job: RegulationJob, snapshot: ConfigSnapshot): string[] {
  return job.request.sourceIds ? job.request.sourceIds.filter((id) => snapshot.sources.has(id)) : [...snapshot.sources.keys()].sort();
}

/**
 * One `delete` per user, affected source and enabled Webhooks destination connected to it. The
 * messageId (per regulation, source and user) is the same whenever the regulation is carried out
 * again (a retried job), so the delivery job ids dedupe; the userId is hashed into it because a
 * messageId travels in a header. The notice names its regulation, whose deletion receipt
 * webhook-delivery keeps up to date (never sent: the delete body has its own keys).
 */
export function deleteNotices(
  job: RegulationJob,
  sourceIds: readonly string[],
  snapshot: ConfigSnapshot,
  userIds: readonly string[],
): PlannedDelivery[] {
  const planned: PlannedDelivery[] = [];
  const destinations = [...snapshot.destinations.values()].filter((d) => d.enabled && d.name === 'Webhooks');
  for (const sourceId of sourceIds) {
    const targets = destinations.filter((d) => d.sourceIds.includes(sourceId));
    for (const userId of userIds) {
      // Per source too: two notices that reach one receiver are two notifications, not a resend.
      const call: DeleteNotice = {
        type: 'delete',
        messageId: `del-${job.id}-${hash('sha256', `${sourceId}\n${userId}`, 'base64url').slice(0, 22)}`,
        userId,
        timestamp: job.createdAt,
        regulationId: job.id,
      };
      for (const d of targets) planned.push({ jobId: callDeliveryId(d.id, sourceId, call.messageId), sourceId, destinationId: d.id, call });
    }
  }
  return planned;
}
