/**
 * Replay: a dead letter goes back on the delivery queue as the job it was, under the same job id
 * (the job itself finished when it was dead-lettered, so the id is free, and a second replay of
 * the same letter while the first is still queued is ignored by BullMQ), without its retry state:
 * the message gets a fresh retry window and keeps its messageId.
 */
import { RequestError, type DeadLetter, type DeliverJob, type Destination, type ReplayRequest } from '@eventrelay/config';

export interface ReplayJob {
  readonly jobId: string;
  readonly data: DeliverJob;
}

export function replayJob(letter: DeadLetter): ReplayJob {
  const { retry: _retry, ...data } = letter.job;
  return { jobId: letter.jobId, data };
}

export type ReplaySelection = { readonly kind: 'all' } | { readonly kind: 'since'; readonly sinceMs: number } | { readonly kind: 'messages'; readonly messageIds: readonly string[] };

/** The request read as a selection; refused while the destination is off (it would die again). */
export function replaySelection(request: ReplayRequest, destination: Destination): ReplaySelection {
  if (!destination.enabled) throw new RequestError('conflict', `destination "${destination.id}" is disabled: enable it before replaying, or its messages are dead-lettered again`);
  if (request.messageIds) return { kind: 'messages', messageIds: request.messageIds };
  if (request.since !== undefined) {
    const sinceMs = Date.parse(request.since);
    if (!/^\d{4}-\d{2}-\d{2}T/.test(request.since) || Number.isNaN(sinceMs)) throw new RequestError('invalid_request', 'since must be an ISO 8601 date and time, e.g. 2026-11-21T09:00:00Z', [{ field: 'since', message: 'must be an ISO 8601 date and time, e.g. 2026-11-21T09:00:00Z' }]);
    return { kind: 'since', sinceMs };
  }
  return { kind: 'all' };
}
