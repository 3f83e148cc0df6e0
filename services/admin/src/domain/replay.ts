/**
 * Replay: a dead letter goes back on the delivery queue as a job holding just its call, under the
 * letter's id (a second replay of the same letter while the first is still queued is ignored by
 * BullMQ), without retry state: the call gets a fresh retry window and keeps its messageId. The
 * other calls of the job it died in are not touched.
 */
import { RequestError, type DeadLetter, type DeliverJob, type Destination, type ReplayRequest } from '@eventrelay/config';

export interface ReplayJob {
  readonly jobId: string;
  readonly data: DeliverJob;
}

export function replayJob(letter: DeadLetter): ReplayJob {
  const { sourceId, destinationId, call } = letter.job;
  return { jobId: letter.jobId, data: { destinationId, calls: [{ sourceId, call }] } };
}

export type ReplaySelection =
  | { readonly kind: 'all' }
  | { readonly kind: 'since'; readonly sinceMs: number }
  | { readonly kind: 'messages'; readonly messageIds: readonly string[] };

/** The request read as a selection; refused while the destination is off (it would die again). */
export function replaySelection(request: ReplayRequest, destination: Destination): ReplaySelection {
  if (!destination.enabled)
    throw new RequestError(
      'conflict',
      `destination "${destination.id}" is disabled: enable it before replaying, or its messages are dead-lettered again`,
    );
  if (request.messageIds) return { kind: 'messages', messageIds: request.messageIds };
  if (request.since !== undefined) {
    const sinceMs = parseInstant(request.since);
    const problem = 'must be an ISO 8601 date and time with a zone, e.g. 2026-11-21T09:00:00Z';
    if (sinceMs === undefined) throw new RequestError('invalid_request', `since ${problem}`, [{ field: 'since', message: problem }]);
    return { kind: 'since', sinceMs };
  }
  return { kind: 'all' };
}

const INSTANT = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/i;

/**
 * Epoch ms of an ISO 8601 instant, or undefined. Stricter than Date.parse, which reads a time
 * without a zone as the server's local time and rolls 2026-02-30 over into March.
 */
function parseInstant(text: string): number | undefined {
  const m = INSTANT.exec(text);
  if (!m) return undefined;
  const [year, month, day, hour, minute, second] = [m[1], m[2], m[3], m[4], m[5], m[6] ?? '0'].map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const date = new Date(Date.UTC(year, month - 1, day));
  if (
    date.getUTCFullYear() !== year ||
    date.getUTCMonth() !== month - 1 ||
    date.getUTCDate() !== day ||
    hour > 23 ||
    minute > 59 ||
    second > 59
  )
    return undefined;
  return Date.parse(text);
}
