/**
 * The per-destination cap on calls held for a retry (DELIVERY_RETRY_MAX_PER_DESTINATION,
 * docs/delivery.md "The retry backlog cap"): a receiver refusing for hours at high volume must not
 * grow the deliver jobs without bound. Pure: the worker reads the destination's count and commits
 * the change with the job.
 */
import type { DeliverJob } from '@eventrelay/config';

/**
 * The calls of a job counted in its destination's retry backlog: what its last commit wrote. A
 * batch job holds none, and a job no commit wrote yet (a replay, an audience identify, a delete
 * notice, a job of a legacy shape) has none of its calls counted.
 */
export function countedCalls(data: DeliverJob): number {
  return 'calls' in data ? (data.counted ?? 0) : 0;
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

/** The dead letters' reason, naming the cap and the variable that sets it. */
export function retryCapReason(max: number): string {
  return `retry backlog cap reached (DELIVERY_RETRY_MAX_PER_DESTINATION=${max})`;
}
