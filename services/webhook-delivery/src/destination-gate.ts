/**
 * Per-destination cap on requests, so that one slow receiver cannot hold every worker slot
 * (BullMQ's open-source edition has no per-group fairness). See docs/delivery.md for the design.
 *
 * A delivery job is admitted with the requests it is about to make (its calls times the URLs due):
 * while the destination has fewer than the cap reserved, a job goes at once; over it, the job
 * either waits here for room or is parked (put back in the delayed set):
 * - a destination that keeps answering is only busy: the job waits in-process, which costs no
 *   Redis command and takes milliseconds, so a single high-volume destination runs at full speed
 *   however many of its jobs a worker holds;
 * - a destination that stopped answering (no request finished for `slowMs` while at the cap, or
 *   its recent requests take `slowMs` or more) is slow: the job is parked for about as long as
 *   one of its requests takes, so it comes back roughly when there is likely to be room. Jobs
 *   already waiting when it turns slow are parked after waiting `slowMs`.
 * The requests of admitted jobs then each take one of the cap's places to be sent (`send`), so no
 * more than the cap are ever open to one destination, however many calls a job holds. A
 * destination that turns slow can so hold extra worker slots for at most `slowMs`; after that it
 * holds about cap / (requests per job) + 1 of them.
 */

/** The longest a job is parked at once, however often it was parked before. */
export const MAX_PARK_MS = 5 * 60 * 1000;

export type GateVerdict = { readonly kind: 'go' } | { readonly kind: 'park'; readonly delayMs: number };

/** One of a destination's places per request of an admitted job (see DestinationGate.places). */
export interface RequestPlaces {
  /** undefined: send it; a number: do not (the destination turned slow), come back in that many ms. */
  take(): number | undefined | Promise<number | undefined>;
  /** Once per `take`: `ms` the request's duration, undefined when it was not sent; `placed` whether take gave it a place. */
  give(ms: number | undefined, placed: boolean): void;
  /** When the job's round is over: ends the reservations no request used. */
  done(): void;
}

const GO: GateVerdict = Object.freeze({ kind: 'go' });

interface Lane {
  /** Requests of admitted jobs not yet finished (sent or still to send). */
  inFlight: number;
  /** Oldest first. */
  waiters: { resolve: (v: GateVerdict) => void; since: number; parks: number; requests: number }[];
  /** Requests being sent now, at most maxInFlight. */
  open: number;
  /** Requests of admitted jobs waiting for one of the cap's places, oldest first. */
  sendQueue: { resolve: (v: GateVerdict) => void; parks: number }[];
  /** Parks waiters that waited `slowMs`; runs only while there are waiters (one timer per lane, not per job). */
  sweep: NodeJS.Timeout | undefined;
  /** Exponentially weighted mean request duration, ms. */
  meanMs: number;
  lastFinishedAt: number;
  /** When the lane first parked a job since its last quick attempt: how long it has been stuck. */
  slowSince: number | undefined;
}

export interface GateOptions {
  /** Requests open to one destination at once, and reserved by admitted jobs before a new one goes. */
  readonly maxInFlight: number;
  /** Above this a request counts as slow; also the longest a job waits here before parking. */
  readonly slowMs: number;
  /** Upper bound on the typical duration a park is based on (jitter adds up to half), normally the attempt timeout. */
  readonly maxParkMs: number;
  readonly clock: () => number;
  readonly random: () => number;
}

export class DestinationGate {
  private readonly lanes = new Map<string, Lane>();

  constructor(private readonly options: GateOptions) {}

  /**
   * Admits a job that is about to make `requests` requests; one with none to make (nothing of it
   * is due yet) goes at once and reserves nothing. `parks`: how often this job was parked before;
   * each park doubles its next delay. On `go`, every request is ended with `leave`, and those
   * never sent too.
   */
  enter(destinationId: string, parks = 0, requests = 1): GateVerdict | Promise<GateVerdict> {
    if (requests <= 0) return GO;
    const lane = this.lane(destinationId);
    if (lane.inFlight < this.options.maxInFlight) {
      if (lane.inFlight === 0) lane.lastFinishedAt = this.options.clock();
      lane.inFlight += requests;
      return GO;
    }
    if (this.isSlow(lane)) return this.park(lane, parks);
    return new Promise<GateVerdict>((resolve) => {
      lane.waiters.push({ resolve, since: this.options.clock(), parks, requests });
      if (!lane.sweep) {
        lane.sweep = setInterval(() => this.sweep(lane), Math.max(10, Math.floor(this.options.slowMs / 10)));
        lane.sweep.unref();
      }
    });
  }

  /**
   * Takes one of the cap's places for a request of an admitted job: `go` at once while fewer than
   * the cap are open, else when a place comes free. A request still waiting when the destination's
   * requests turn slow is not sent: it gets `park` (its call stays as it was, unattempted, and the
   * job comes back after the delay), so a hung destination never sees a job's queued requests one
   * timeout after another. Each `go` is followed by `sent` when the request is over.
   */
  send(destinationId: string, parks = 0): GateVerdict | Promise<GateVerdict> {
    const lane = this.lane(destinationId);
    if (lane.open < this.options.maxInFlight) {
      lane.open++;
      return GO;
    }
    return new Promise<GateVerdict>((resolve) => lane.sendQueue.push({ resolve, parks }));
  }

  /** A request is over: `attemptMs` its duration (undefined when it was not sent after all); its place goes to the next request waiting. */
  sent(destinationId: string, attemptMs: number | undefined): void {
    const lane = this.lane(destinationId);
    if (attemptMs !== undefined) this.observe(lane, attemptMs);
    lane.open--;
    while (lane.sendQueue.length > 0 && lane.open < this.options.maxInFlight) {
      const next = lane.sendQueue.shift()!;
      if (lane.meanMs >= this.options.slowMs) {
        next.resolve(this.park(lane, next.parks));
        continue;
      }
      lane.open++;
      next.resolve(GO);
    }
  }

  /**
   * Ends `requests` of an admitted job's requests: once per request that was sent (`attemptMs`
   * its duration, which the slow detection follows), and for those it will not send (no duration).
   */
  leave(destinationId: string, attemptMs: number | undefined, requests = 1): void {
    const lane = this.lane(destinationId);
    if (attemptMs !== undefined) this.observe(lane, attemptMs);
    // The lane is kept when idle: forgetting that a destination is slow would let the next burst
    // fill its cap again before it is recognised. Lanes are bounded by the number of destinations.
    lane.inFlight -= requests;
    while (lane.inFlight < this.options.maxInFlight) {
      const next = lane.waiters.shift();
      if (!next) break;
      lane.inFlight += next.requests;
      next.resolve(GO);
    }
  }

  /**
   * The places the requests of a job admitted with `reserved` requests take (`send`, `sent`,
   * `leave`, with the bookkeeping in one spot). Requests beyond the reservation (none, when the
   * round sends what it reserved for) take a place but end no reservation.
   */
  places(destinationId: string, parks: number, reserved: number): RequestPlaces {
    let ended = 0;
    const holdOf = (v: GateVerdict) => (v.kind === 'park' ? v.delayMs : undefined);
    return {
      take: () => {
        const verdict = this.send(destinationId, parks);
        return verdict instanceof Promise ? verdict.then(holdOf) : holdOf(verdict);
      },
      give: (ms, placed) => {
        ended++;
        if (placed) this.sent(destinationId, ms);
        if (ended <= reserved) this.leave(destinationId, undefined);
      },
      done: () => {
        if (reserved > ended) this.leave(destinationId, undefined, reserved - ended);
        ended = Math.max(ended, reserved);
      },
    };
  }

  /** Requests reserved by admitted jobs at this destination (sent or still to send). */
  inFlight(destinationId: string): number {
    return this.lanes.get(destinationId)?.inFlight ?? 0;
  }

  /** Requests open now, by destination (every destination seen since start). */
  *openRequests(): IterableIterator<[string, number]> {
    for (const [id, lane] of this.lanes) yield [id, lane.open];
  }

  /** Requests open to this destination now. */
  open(destinationId: string): number {
    return this.lanes.get(destinationId)?.open ?? 0;
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

  private observe(lane: Lane, attemptMs: number): void {
    lane.meanMs = lane.meanMs === 0 ? attemptMs : lane.meanMs * 0.8 + attemptMs * 0.2;
    lane.lastFinishedAt = this.options.clock();
    if (attemptMs < this.options.slowMs) lane.slowSince = undefined;
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
      lane = {
        inFlight: 0,
        waiters: [],
        open: 0,
        sendQueue: [],
        sweep: undefined,
        meanMs: 0,
        lastFinishedAt: this.options.clock(),
        slowSince: undefined,
      };
      this.lanes.set(destinationId, lane);
    }
    return lane;
  }
}
