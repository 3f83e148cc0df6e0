/**
 * Per-destination cap on open requests, so that one slow receiver cannot hold every worker slot
 * (BullMQ's open-source edition has no per-group fairness). See docs/delivery.md for the design.
 *
 * Over the cap, a job either waits here for a slot or is parked (put back in the delayed set):
 * - a destination that keeps answering is only busy: the job waits in-process for a slot, which
 *   costs no Redis command and comes within milliseconds, so a single high-volume destination
 *   runs at full speed however many of its jobs a worker holds;
 * - a destination that stopped answering (no request finished for `slowMs` while at the cap, or
 *   its recent attempts take `slowMs` or more) is slow: the job is parked for about as long as
 *   one of its attempts takes, so it comes back roughly when a slot is likely to be free. Jobs
 *   already waiting when it turns slow are parked after waiting `slowMs`.
 * A destination that turns slow can so hold extra worker slots for at most `slowMs`; after that
 * it holds no more than its cap.
 */

/** The longest a job is parked at once, however often it was parked before. */
export const MAX_PARK_MS = 5 * 60 * 1000;

export type GateVerdict = { readonly kind: 'go' } | { readonly kind: 'park'; readonly delayMs: number };

interface Lane {
  inFlight: number;
  /** Oldest first. */
  waiters: { resolve: (v: GateVerdict) => void; since: number; parks: number }[];
  /** Parks waiters that waited `slowMs`; runs only while there are waiters (one timer per lane, not per job). */
  sweep: NodeJS.Timeout | undefined;
  /** Exponentially weighted mean attempt duration, ms. */
  meanMs: number;
  lastFinishedAt: number;
  /** When the lane first parked a job since its last quick attempt: how long it has been stuck. */
  slowSince: number | undefined;
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

  /** `parks`: how often this job was parked before; each park doubles its next delay. */
  enter(destinationId: string, parks = 0): GateVerdict | Promise<GateVerdict> {
    const lane = this.lane(destinationId);
    if (lane.inFlight < this.options.maxInFlight) {
      if (lane.inFlight === 0) lane.lastFinishedAt = this.options.clock();
      lane.inFlight++;
      return { kind: 'go' };
    }
    if (this.isSlow(lane)) return this.park(lane, parks);
    return new Promise<GateVerdict>((resolve) => {
      lane.waiters.push({ resolve, since: this.options.clock(), parks });
      if (!lane.sweep) {
        lane.sweep = setInterval(() => this.sweep(lane), Math.max(10, Math.floor(this.options.slowMs / 10)));
        lane.sweep.unref();
      }
    });
  }

  /** Call once per `go`, when the job's attempts are over. */
  leave(destinationId: string, attemptMs: number): void {
    const lane = this.lane(destinationId);
    lane.meanMs = lane.meanMs === 0 ? attemptMs : lane.meanMs * 0.8 + attemptMs * 0.2;
    lane.lastFinishedAt = this.options.clock();
    if (attemptMs < this.options.slowMs) lane.slowSince = undefined;
    const next = lane.waiters.shift();
    if (next) {
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

  private sweep(lane: Lane): void {
    const now = this.options.clock();
    while (lane.waiters.length > 0 && now - (lane.waiters[0]?.since ?? now) >= this.options.slowMs) {
      const waiter = lane.waiters.shift();
      waiter?.resolve(this.park(lane, waiter.parks));
    }
    if (lane.waiters.length === 0) {
      clearInterval(lane.sweep);
      lane.sweep = undefined;
    }
  }

  private isSlow(lane: Lane): boolean {
    return lane.meanMs >= this.options.slowMs || this.options.clock() - lane.lastFinishedAt >= this.options.slowMs;
  }

  /**
   * About one typical attempt, doubled for every earlier park of the same job, and at least about
   * as long as the destination has been stuck (in doubling steps), up to MAX_PARK_MS: a long
   * backlog on a hung destination then costs Redis a trickle of moves, not one per job per attempt
   * duration, and a job new to a destination hung for minutes is not fetched again every few
   * seconds (each fetch and park costs about what a delivery does; `pnpm bench`, dead-1-of-10).
   */
  private park(lane: Lane, parks: number): GateVerdict {
    const now = this.options.clock();
    lane.slowSince ??= now;
    const typical = Math.min(Math.max(lane.meanMs, this.options.slowMs), this.options.maxParkMs);
    const stuckSteps = Math.floor(Math.log2(Math.max(1, (now - lane.slowSince) / typical)));
    const delayMs = Math.min(MAX_PARK_MS, typical * 2 ** Math.min(Math.max(parks, stuckSteps, 0), 10)) * (0.5 + this.options.random());
    return { kind: 'park', delayMs: Math.round(delayMs) };
  }

  private lane(destinationId: string): Lane {
    let lane = this.lanes.get(destinationId);
    if (!lane) {
      lane = { inFlight: 0, waiters: [], sweep: undefined, meanMs: 0, lastFinishedAt: this.options.clock(), slowSince: undefined };
      this.lanes.set(destinationId, lane);
    }
    return lane;
  }
}
