/**
 * When a delivery job's requests may start, as far as its destination's rates go: the gate's turn
 * at the adaptive rate (this process), and, for a destination with maxRequestsPerSecond, its
 * requests' slots across every process, taken in Redis from the gate's turn on. A job whose turn
 * is later is parked until then, once, carrying it back (`turnAt`), and takes it without booking
 * again (docs/delivery.md, "Turns, not spinning").
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { DeliverJob } from '@eventrelay/config';
import type { RateReservations } from '../adapters/rate-reservations.js';
import { MAX_PARK_MS, type EntryVerdict } from '../destination-gate.js';

/**
 * How much before its turn a job parked for it is due back: the delayed set returns jobs up to
 * about this late, and one back after the first of the maxRequestsPerSecond slots it holds takes
 * new ones (sent late, its requests would overlap the next job's slots and break the cap).
 */
const TURN_EARLY_MS = 100;

export interface TurnDeps {
  /** The slots of destinations that set maxRequestsPerSecond, shared by every process. */
  readonly rateSlots: Pick<RateReservations, 'reserve'>;
  /** A job whose first slot is further away than this is parked rather than held. */
  readonly maxSlotWaitMs: number;
  readonly clock: () => number;
}

/** `now`: send; `later`: park until `at` (`booked`: its share of the rates is taken, it carries its turn back). */
export type Turn = { readonly kind: 'now' } | { readonly kind: 'later'; readonly at: number; readonly booked: boolean };

/** `verdict`: the gate's, for a job it did not park otherwise; `requests`: what the round sends. */
export async function turnOf(
  deps: TurnDeps,
  data: DeliverJob,
  verdict: EntryVerdict,
  requests: number,
  perSecond: number | undefined,
): Promise<Turn> {
  const now = deps.clock();
  const local = verdict.kind === 'turn' ? verdict.at : undefined;
  const later = (at: number) => ({ kind: 'later', at, booked: true }) as const;
  if (perSecond === undefined || requests === 0) return local === undefined ? { kind: 'now' } : later(local);
  if (data.turnAt !== undefined && now <= data.turnAt) {
    // Its slots were taken with its turn, and start then.
    if (local !== undefined) return later(local);
    if (data.turnAt > now) await sleep(data.turnAt - now);
    return { kind: 'now' };
  }
  const slots = await deps.rateSlots.reserve(data.destinationId, perSecond, requests, MAX_PARK_MS, (local ?? now) - now);
  const first = now + slots.waitMs;
  // More than MAX_PARK_MS of requests already booked: nothing was taken, come back then.
  if (!slots.granted) return { kind: 'later', at: first, booked: false };
  if (local !== undefined || slots.waitMs > deps.maxSlotWaitMs) return later(Math.max(first, local ?? first));
  if (slots.waitMs > 0) await sleep(slots.waitMs);
  return { kind: 'now' };
}

/** When a job parked for `turn` is due back, and the data it carries back (undefined: unchanged). */
export function parkedForTurn(data: DeliverJob, turn: Extract<Turn, { kind: 'later' }>, now: number): { at: number; data?: DeliverJob } {
  if (!turn.booked) return { at: turn.at };
  return { at: Math.max(now, turn.at - TURN_EARLY_MS), data: { ...data, turnAt: turn.at } };
}
