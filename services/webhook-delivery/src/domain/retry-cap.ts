/**
 * The per-destination caps on calls held for a retry, by count (DELIVERY_RETRY_MAX_PER_DESTINATION)
 * and by bytes (DELIVERY_RETRY_MAX_BYTES_PER_DESTINATION), docs/delivery.md "The retry backlog
 * cap": a receiver refusing for hours at high volume must not grow the deliver jobs without bound,
 * and a count alone lets calls of up to 32 KB each hold gigabytes. Pure: the worker reads the
 * destination's count and bytes and commits the change with the job.
 */
import type { DeliverJob, DeliveryItem } from '@eventrelay/config';
import type { HoldCap } from './settle.js';

/**
 * The calls of a job counted in its destination's retry backlog: what its last commit wrote. A
 * batch job holds none, and a job no commit wrote yet (a replay, an audience identify, a delete
 * notice, a job of a legacy shape) has none of its calls counted.
 */
export function countedCalls(data: DeliverJob): number {
  return 'calls' in data ? (data.counted ?? 0) : 0;
}

/**
 * The bytes of a job's calls counted in its destination's retry backlog, as for `countedCalls`; a
 * job last written before the byte cap existed has none counted, so its next commit counts them all
 * (the total stays the sum over the jobs).
 */
export function countedBytes(data: DeliverJob): number {
  return 'calls' in data ? (data.countedBytes ?? 0) : 0;
}

/**
 * What a call's retry state counts for in its held bytes: about one URL's state (its last error,
 * when it is due again) with the call's first attempt and rounds. A fixed allowance rather than the
 * state's own JSON, which changes from round to round: so a held call counts the same at every
 * commit, and a job still holding the calls it had counted changes nothing in Redis.
 */
export const RETRY_STATE_BYTES = 200;

/**
 * What a call held for a retry counts for: its JSON without its retry state (the call, its source,
 * a replay's id; none of which change while it is held), in UTF-8 bytes, plus RETRY_STATE_BYTES.
 */
export function heldCallBytes(item: DeliveryItem): number {
  const held = item.retry === undefined ? item : { ...item, retry: undefined };
  return Buffer.byteLength(JSON.stringify(held)) + RETRY_STATE_BYTES;
}

/**
 * The bytes a job holding `pending` after its commit counts. A job never gains calls, so one that
 * still holds as many as it had counted, and that is all it had, holds those same calls: its
 * counted bytes stand, unmeasured. Otherwise (calls delivered, dead or newly held; a job no commit
 * wrote yet, or last written before the byte cap) each call still to go is measured (`measure`:
 * heldCallBytes, or the caller's copy of it that measures each call once).
 */
export function heldBytes(data: DeliverJob, pending: readonly DeliveryItem[], measure = heldCallBytes): number {
  if ('calls' in data && data.countedBytes !== undefined && pending.length === countedCalls(data) && pending.length === data.calls.length)
    return data.countedBytes;
  let bytes = 0;
  for (const item of pending) bytes += measure(item);
  return bytes;
}

/**
 * How many of the `pending` calls a job still has to go it may hold after its commit. The calls it
 * already had counted stay held (they are in the destination's count, `current`, already); of
 * those it would newly hold, only as many as leave the count at `max`. `max` 0: no cap.
 */
export function retryHoldLimit(p: {
  readonly pending: number;
  readonly counted: number;
  readonly current: number;
  readonly max: number;
}): number {
  const newly = p.pending - p.counted;
  if (p.max === 0 || newly <= 0) return p.pending;
  return p.counted + Math.min(newly, Math.max(0, p.max - p.current));
}

/**
 * The byte cap's share of the same rule: of the first `upTo` calls still to go (`sizes`, each
 * call's bytes in the job's order), how many the job may hold so that the destination's bytes
 * after its commit stay within `maxBytes`. The job's own counted bytes (`countedBytes`) are in
 * `currentBytes` and are replaced by what it holds now. The calls it had counted stay held
 * whatever their size (they may have been counted by an older measure); the calls after them are
 * held in order until the first that does not fit. `maxBytes` 0: no cap.
 */
export function retryByteLimit(p: {
  readonly sizes: readonly number[];
  readonly upTo: number;
  readonly counted: number;
  readonly countedBytes: number;
  readonly currentBytes: number;
  readonly maxBytes: number;
}): number {
  const upTo = Math.min(p.upTo, p.sizes.length);
  if (p.maxBytes === 0 || upTo <= p.counted) return upTo;
  let bytes = p.currentBytes - p.countedBytes;
  for (let i = 0; i < p.counted; i++) bytes += p.sizes[i] ?? 0;
  let hold = p.counted;
  while (hold < upTo && bytes + (p.sizes[hold] ?? 0) <= p.maxBytes) bytes += p.sizes[hold++] ?? 0;
  return hold;
}

/** The caps in force (0 = that cap is off) and what the destination holds now. */
export interface RetryRoom {
  readonly max: number;
  readonly maxBytes: number;
  readonly current: number;
  readonly currentBytes: number;
}

/** A hold limit from the retry backlog caps, and which of them set it. */
export interface RetryCap extends HoldCap {
  readonly by: 'count' | 'bytes';
}

/**
 * Both caps at once: undefined when the job may hold every call still to go (`sizes`, in the
 * job's order), else how many it holds and the reason its other calls are dead-lettered with,
 * naming the cap that stopped them (the count's when both would).
 */
export function retryHold(
  p: { readonly sizes: readonly number[]; readonly counted: number; readonly countedBytes: number },
  room: RetryRoom,
): RetryCap | undefined {
  const byCount = retryHoldLimit({ pending: p.sizes.length, counted: p.counted, current: room.current, max: room.max });
  const hold = retryByteLimit({ ...p, upTo: byCount, currentBytes: room.currentBytes, maxBytes: room.maxBytes });
  if (hold === p.sizes.length) return undefined;
  return hold < byCount
    ? { hold, by: 'bytes', reason: retryByteCapReason(room.maxBytes) }
    : { hold, by: 'count', reason: retryCapReason(room.max) };
}

/** The dead letters' reason, naming the cap and the variable that sets it. */
export function retryCapReason(max: number): string {
  return `retry backlog cap reached (DELIVERY_RETRY_MAX_PER_DESTINATION=${max})`;
}

/** The dead letters' reason when the byte cap stopped them. */
function retryByteCapReason(maxBytes: number): string {
  return `retry backlog byte cap reached (DELIVERY_RETRY_MAX_BYTES_PER_DESTINATION=${maxBytes})`;
}
