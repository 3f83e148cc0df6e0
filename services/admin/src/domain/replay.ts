/**
 * Replay: a dead letter goes back on the delivery queue as a job holding just its call, under the
 * letter's id (a second replay of the same letter while the first is still queued is ignored by
 * BullMQ), without retry state: the call gets a fresh retry window and keeps its messageId. The
 * other calls of the job it died in are not touched.
 */
import {
  RequestError,
  type DeadLetter,
  type DeadLetterFilterOf,
  type DeliverJob,
  type Destination,
  type ReplayRequest,
} from '@eventrelay/config';
import { deadLetterFilter, instantField } from './log-filters.js';

export interface ReplayJob {
  readonly jobId: string;
  readonly data: DeliverJob;
}

/** `replayId`: the replay whose progress counts what becomes of the call. */
export function replayJob(letter: DeadLetter, replayId: string): ReplayJob {
  const { sourceId, destinationId, call } = letter.job;
  return { jobId: letter.jobId, data: { destinationId, calls: [{ sourceId, call, replayId }] } };
}

export type ReplaySelection =
  | { readonly kind: 'all' }
  | { readonly kind: 'since'; readonly sinceMs: number }
  | { readonly kind: 'filter'; readonly filter: DeadLetterFilterOf }
  | { readonly kind: 'messages'; readonly messageIds: readonly string[] };

/** The request read as a selection; refused while the destination is off (it would die again). */
export function replaySelection(request: ReplayRequest, destination: Destination): ReplaySelection {
  if (!destination.enabled)
    throw new RequestError(
      'conflict',
      `destination "${destination.id}" is disabled: enable it before replaying, or its messages are dead-lettered again`,
    );
  if (request.messageIds) return { kind: 'messages', messageIds: request.messageIds };
  if (request.since !== undefined) return { kind: 'since', sinceMs: instantField(request.since, 'since') };
  if (request.filter !== undefined) return { kind: 'filter', filter: deadLetterFilter(request.filter, 'filter.') };
  return { kind: 'all' };
}
