/**
 * What a job's round leaves: every call of the job ends delivered, dead, or still to go (its
 * retry state updated, or untouched when it was not attempted), and the job comes back when the
 * first call still to go is due. Pure: the worker turns it into the commit.
 */
import type { DeliveryAttempt, DeliveryItem, RetryState } from '@eventrelay/config';
import type { Decision } from './schedule.js';

/**
 * What one run did with one call: a decision; or none, when no URL was due (it waits on), the
 * process is stopping, or the destination turned slow before any of its requests went out
 * (`holdMs`: come back after that long). A call without a decision is exactly as it was.
 */
export interface CallRun {
  readonly item: DeliveryItem;
  readonly decision: Decision | undefined;
  readonly attempts: readonly DeliveryAttempt[];
  readonly holdMs?: number;
}

export interface Settled {
  readonly delivered: readonly CallRun[];
  /** Calls that failed this round and will be tried again (their state is in `pending`). */
  readonly retrying: readonly CallRun[];
  readonly dead: readonly { readonly run: CallRun; readonly state: RetryState; readonly reason: string }[];
  /** The calls the job still holds after the round, each with its state. */
  readonly pending: readonly DeliveryItem[];
  /** When the job should run next; undefined when nothing is pending. */
  readonly nextAt: number | undefined;
  /** Calls in `dead` because the job could hold no more (`HoldCap`). */
  readonly capped: number;
}

/**
 * At most `hold` calls still to go stay in the job; the others, in the job's order, are dead with
 * `reason` (the retry backlog cap, see retry-cap.ts), whether they failed this round or waited.
 */
export interface HoldCap {
  readonly hold: number;
  readonly reason: string;
}

/**
 * `urls`: the destination's URLs as configured now. `breakerOpen`: calls wait unattempted behind
 * the destination's circuit breaker, their windows counting; a call that never had an attempt
 * starts its window now, so that none waits for ever (at its window's end it gets its last
 * attempt, breaker or not).
 */
export function settleRound(calls: readonly CallRun[], urls: readonly string[], now: number, cap?: HoldCap, breakerOpen = false): Settled {
  const delivered: CallRun[] = [];
  const retrying: CallRun[] = [];
  const dead: { run: CallRun; state: RetryState; reason: string }[] = [];
  const pending: DeliveryItem[] = [];
  let capped = 0;
  let nextAt = Number.POSITIVE_INFINITY;
  const hold = cap?.hold ?? Number.POSITIVE_INFINITY;
  const capReason = cap?.reason ?? '';
  for (const c of calls) {
    const d = c.decision;
    if (d === undefined) {
      const item = breakerOpen && !c.item.retry ? { ...c.item, retry: { firstAttemptAt: now, attempt: 0, urls: {} } } : c.item;
      if (pending.length >= hold) {
        // Not attempted this round (not due, or held back): its state is what earlier rounds left.
        dead.push({ run: c, state: c.item.retry ?? { firstAttemptAt: now, attempt: 0, urls: {} }, reason: capReason });
        capped++;
        continue;
      }
      pending.push(item);
      nextAt = Math.min(nextAt, c.holdMs !== undefined ? now + c.holdMs : (nextDue(c.item, urls) ?? now));
    } else if (d.kind === 'delivered') {
      delivered.push(c);
    } else if (d.kind === 'retry') {
      if (pending.length >= hold) {
        dead.push({ run: c, state: d.state, reason: capReason });
        capped++;
        continue;
      }
      retrying.push(c);
      pending.push({ ...c.item, retry: d.state });
      nextAt = Math.min(nextAt, d.at);
    } else {
      dead.push({ run: c, state: d.state, reason: d.reason });
    }
  }
  return { delivered, retrying, dead, pending, nextAt: Number.isFinite(nextAt) ? nextAt : undefined, capped };
}

/** When the first of a waiting call's URLs falls due again (undefined: one is due now). */
function nextDue(item: DeliveryItem, urls: readonly string[]): number | undefined {
  let first: number | undefined;
  for (const url of urls) {
    const s = item.retry?.urls[url];
    if (s === undefined) return undefined;
    if (s.failed) continue;
    first = Math.min(first ?? Number.POSITIVE_INFINITY, s.notBefore ?? 0);
  }
  return first;
}
