/**
 * Per-destination cap on open requests, so that one slow receiver cannot hold every worker slot
 * (BullMQ's open-source edition has no per-group fairness). See docs/delivery.md for the design.
 *
 * Over the cap, a job either waits here for a slot or is parked (put back in the delayed set):
 * - a destination that keeps answering is only busy: the job waits in-process for a slot, which
 *   costs no Redis command and frees quickly;
 * - a destination that stopped answering (no request finished for `slowMs` while at the cap, or
 *   its recent attempts take `slowMs` or more) is slow: the job is parked for about as long as
 *   one of its attempts takes, so it comes back roughly when a slot is likely to be free.
 * Waiters per destination are capped as well, so a destination holds at most twice its cap in
 * worker slots however its jobs arrive.
 */

export type GateVerdict = { readonly kind: 'go' } | { readonly kind: 'park'; readonly delayMs: number };

interface Lane {
  inFlight: number;
  waiters: { resolve: (v: GateVerdict) => void; timer: NodeJS.Timeout }[];
  /** Exponentially weighted mean attempt duration, ms. */
  meanMs: number;
  lastFinishedAt: number;
}

export interface GateOptions {
  readonly maxInFlight: number;
  /** Above this an attempt counts as slow; also the longest a job waits here before parking. */
  readonly slowMs: number;
  /** Upper bound on the typical duration a park is based on (jitter adds up to half), normally the attempt timeout. */
  readonly maxParkMs: number;
  readonly clock: () => number;
  readonly random: () => number;
}

export class DestinationGate {
  private readonly lanes = new Map<string, Lane>();

  constructor(private readonly options: GateOptions) {}

  enter(destinationId: string): GateVerdict | Promise<GateVerdict> {
    const lane = this.lane(destinationId);
    if (lane.inFlight < this.options.maxInFlight) {
      if (lane.inFlight === 0) lane.lastFinishedAt = this.options.clock();
      lane.inFlight++;
      return { kind: 'go' };
    }
    if (this.isSlow(lane) || lane.waiters.length >= this.options.maxInFlight) return this.park(lane);
    return new Promise<GateVerdict>((resolve) => {
      const waiter = {
        resolve,
        timer: setTimeout(() => {
          lane.waiters.splice(lane.waiters.indexOf(waiter), 1);
          resolve(this.park(lane));
        }, this.options.slowMs),
      };
      lane.waiters.push(waiter);
    });
  }

  /** Call once per `go`, when the job's attempts are over. */
  leave(destinationId: string, attemptMs: number): void {
    const lane = this.lane(destinationId);
    lane.meanMs = lane.meanMs === 0 ? attemptMs : lane.meanMs * 0.8 + attemptMs * 0.2;
    lane.lastFinishedAt = this.options.clock();
    const next = lane.waiters.shift();
    if (next) {
      clearTimeout(next.timer);
      next.resolve({ kind: 'go' });
      return;
    }
    // The lane is kept when idle: forgetting that a destination is slow would let the next burst
    // fill its cap again before it is recognised. Lanes are bounded by the number of destinations.
    lane.inFlight--;
  }

  inFlight(destinationId: string): number {
    return this.lanes.get(destinationId)?.inFlight ?? 0;
  }

  private isSlow(lane: Lane): boolean {
    return lane.meanMs >= this.options.slowMs || this.options.clock() - lane.lastFinishedAt >= this.options.slowMs;
  }

  private park(lane: Lane): GateVerdict {
    const typical = Math.min(Math.max(lane.meanMs, this.options.slowMs), this.options.maxParkMs);
    return { kind: 'park', delayMs: Math.round(typical * (0.5 + this.options.random())) };
  }

  private lane(destinationId: string): Lane {
    let lane = this.lanes.get(destinationId);
    if (!lane) {
      lane = { inFlight: 0, waiters: [], meanMs: 0, lastFinishedAt: this.options.clock() };
      this.lanes.set(destinationId, lane);
    }
    return lane;
  }
}
