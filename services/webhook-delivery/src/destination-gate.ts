/**
 * Per-destination cap on requests, so that one slow receiver cannot hold every worker slot
 * (BullMQ's open-source edition has no per-group fairness). See docs/delivery.md for the design.
 *
 * A delivery job is admitted with the requests it is about to make (its calls times the URLs due):
 * while the destination has fewer than the cap reserved, a job goes at once; over it, the job
 * either waits here for room or is parked (put back in the delayed set):
 * - a destination that keeps answering is only busy: the job waits in-process, which costs no
 *   Redis command, in a line served oldest work first that holds about `slowMs` of it; jobs
 *   further down are parked until about their turn (domain/waiting-line.ts), so a single
 *   high-volume destination runs at full speed and holds about `slowMs` of worker slots;
 * - a destination that stopped answering (no request finished for `slowMs` while at the cap, or
 *   most of its recent requests took `slowMs` or more) is slow: the job is parked for about as long as
 *   one of its requests takes, so it comes back roughly when there is likely to be room. Jobs
 *   already waiting when it turns slow are parked after waiting `slowMs`.
 * The requests of admitted jobs then each take one of the cap's places to be sent (`send`), so no
 * more than the cap are ever open to one destination, however many calls a job holds. A
 * destination that turns slow can so hold extra worker slots for at most `slowMs`; after that it
 * holds about cap / (requests per job) + 1 of them.
 *
 * Each lane also keeps the destination's adaptive limit (domain/adaptive-limit.ts: the cap above is
 * its concurrency, and requests start no faster than its rate) and its circuit breaker
 * (domain/breaker.ts: while open, jobs are parked and one request at a time goes as the probe).
 *
 * While a rate is in force, each job books its requests' share of the rate on the lane's ledger
 * (`bookedUntil`). A job whose share starts further off than `slowMs` is not held: it gets
 * `turn`, is parked until then, and comes back carrying its turn, which it then takes without
 * booking again. A backlog behind a rate so costs one park per job, never a cycle of wake-ups.
 * The requests themselves start one at a time at the rate in force when they go (`paceAt`), so
 * that a cut holds at once, not only for jobs booked after it: a job booked before a cut may
 * then find its requests' turns more than `slowMs` off, and those are held back for it (a
 * second park, once per cut).
 */
import { AdaptiveLimit, type LimitCaps } from './domain/adaptive-limit.js';
import type { AnswerSignal } from './domain/answer-signal.js';
import { Breaker, MAX_PROBE_MS, type BreakerChange } from './domain/breaker.js';
import { SlidingCount } from './domain/sliding-count.js';
import { pastHorizon, placeInLine } from './domain/waiting-line.js';

/** The longest a job is parked at once, however often it was parked before. */
export const MAX_PARK_MS = 5 * 60 * 1000;

export type GateVerdict = { readonly kind: 'go' } | { readonly kind: 'park'; readonly delayMs: number };

/**
 * What `enter` answers: besides go and park, `probe` (the destination's breaker is open and this
 * job carries its probe: it sends exactly one request) and a park because the breaker is open.
 */
export type EntryVerdict =
  | GateVerdict
  | { readonly kind: 'probe' }
  | { readonly kind: 'park'; readonly delayMs: number; readonly breaker: true }
  | { readonly kind: 'turn'; readonly at: number };

/**
 * A job parked for its turn comes back carrying it: within this long after the turn it goes
 * without booking again; later, its turn has passed (the queue was slow to return it) and it
 * books anew.
 */
const TURN_GRACE_MS = 1000;

/** What an answer told, for the lane's limit and breaker. */
export interface Answer {
  readonly signal: AnswerSignal;
}

/**
 * A lane is slow once about half of its recent requests took `slowMs` or more (the share an
 * exponentially weighted mean of 0.2 per answer reaches after four slow answers in a row); a
 * timeout now and then among quick answers never gets there.
 */
const SLOW_SHARE = 0.5;

/** The window over which a busy lane's rate of admissions is measured. */
const RATE_WINDOW_MS = 1000;

/**
 * The longest a job past a busy line's horizon is parked: should the lane speed up, it is back in
 * the line soon (it rejoins at its place, by age); should it not, it is parked again, once more.
 */
const MAX_TURN_PARK_MS = 5000;

/** A job within a busy line's horizon waits at most this many times `slowMs` before it is parked. */
const LINE_WAIT_SLOW_MS = 2;

/**
 * How long a job waits for an open breaker when it does not carry the probe: it is woken when the
 * breaker closes, so this only bounds the wait should this process not see the close (it stopped).
 */
const BREAKER_PARK_MS = 60_000;

/** One of a destination's places per request of an admitted job (see DestinationGate.places). */
export interface RequestPlaces {
  /** undefined: send it; a number: do not (the destination turned slow), come back in that many ms. */
  take(): number | undefined | Promise<number | undefined>;
  /**
   * Once per `take`: `ms` the request's duration, undefined when it was not sent; `placed` whether
   * take gave it a place; `answer` what came back, when it was sent.
   */
  give(ms: number | undefined, placed: boolean, answer?: Answer): void;
  /** When the job's round is over: ends the reservations no request used. */
  done(): void;
}

const GO: GateVerdict = Object.freeze({ kind: 'go' });

interface Lane {
  /** Requests of admitted jobs not yet finished (sent or still to send). */
  inFlight: number;
  /** Oldest work first (domain/waiting-line.ts). */
  waiters: { resolve: (v: GateVerdict) => void; since: number; parks: number; requests: number; queuedAt: number }[];
  /** Requests admitted from the line over the last second (counted from when it formed): the rate it moves at. */
  readonly admitted: SlidingCount;
  /** Since when jobs have been waiting without a break (the sweep's start). */
  lineSince: number;
  /** Requests being sent now, at most maxInFlight. */
  open: number;
  /** Requests of admitted jobs waiting for one of the cap's places, oldest first. */
  sendQueue: { resolve: (v: GateVerdict) => void; parks: number }[];
  /** Parks waiters (see `sweep`); runs only while there are waiters (one timer per lane, not per job). */
  sweep: NodeJS.Timeout | undefined;
  /** Exponentially weighted mean request duration, ms: how long a park lasts. */
  meanMs: number;
  /** Exponentially weighted share of requests that took `slowMs` or more: whether the lane is slow (one timeout among quick answers is not). */
  slowShare: number;
  lastFinishedAt: number;
  /** When the lane first parked a job since its last quick attempt: how long it has been stuck. */
  slowSince: number | undefined;
  readonly limit: AdaptiveLimit;
  readonly breaker: Breaker;
  /** Until when the limit's rate is promised to jobs admitted or parked for their turn (the ledger of turns). */
  bookedUntil: number;
  /** The earliest the next request may start at the limit's rate. */
  paceAt: number;
  /** A job parked to carry the next probe is due back before this; later jobs wait longer. */
  carrierUntil: number;
}

export interface GateOptions {
  /** Requests open to one destination at once, and reserved by admitted jobs before a new one goes. */
  readonly maxInFlight: number;
  /** Above this a request counts as slow; also how long a job waits here before parking (twice that in a busy line). */
  readonly slowMs: number;
  /** Upper bound on the typical duration a park is based on (jitter adds up to half), normally the attempt timeout. */
  readonly maxParkMs: number;
  readonly clock: () => number;
  readonly random: () => number;
}

/** What the gate reads of a job beyond its requests. */
export interface JobAtGate {
  /** The destination's limits now (its settings may have changed since the lane was made). */
  readonly caps?: LimitCaps;
  /** The turn the job was parked for (see TURN_GRACE_MS), if any. */
  readonly turnAt?: number;
  /** When the job's work was queued: its place in the line of a busy destination. */
  readonly queuedAt?: number;
}

export type BreakerListener = (destinationId: string, change: Exclude<BreakerChange, undefined>, breaker: Breaker) => void;

export class DestinationGate {
  private readonly lanes = new Map<string, Lane>();
  private readonly listeners: BreakerListener[] = [];

  constructor(private readonly options: GateOptions) {}

  /**
   * Admits a job that is about to make `requests` requests; one with none to make (nothing of it
   * is due yet) goes at once and reserves nothing. `parks`: how often this job was parked before;
   * each park doubles its next delay. On `go`, every request is ended with `leave`, and those
   * never sent too.
   */
  enter(destinationId: string, parks = 0, requests = 1, job: JobAtGate = {}): EntryVerdict | Promise<EntryVerdict> {
    const { caps, turnAt, queuedAt } = job;
    if (requests <= 0) return GO;
    const lane = this.lane(destinationId);
    if (caps) lane.limit.setCaps(caps);
    const now = this.options.clock();
    const admission = lane.breaker.admit(now);
    if (admission.kind === 'probe') {
      lane.inFlight += 1;
      return { kind: 'probe' };
    }
    if (admission.kind === 'wait') return { kind: 'park', delayMs: this.breakerPark(lane, admission.probeAt, now), breaker: true };
    const rate = lane.limit.rate;
    if (Number.isFinite(rate)) {
      const carried = turnAt !== undefined && now <= turnAt + TURN_GRACE_MS;
      if (carried && turnAt - now > this.options.slowMs) return { kind: 'turn', at: turnAt };
      if (!carried) {
        // Its share of the rate, after those already booked: a job whose share starts further off
        // than `slowMs` is parked until then instead of holding a worker slot.
        const start = Math.max(now, lane.bookedUntil);
        lane.bookedUntil = start + (requests / rate) * 1000;
        if (start - now > this.options.slowMs) return { kind: 'turn', at: Math.round(start) };
      }
    }
    if (lane.inFlight < lane.limit.concurrency) {
      if (lane.inFlight === 0) lane.lastFinishedAt = this.options.clock();
      lane.inFlight += requests;
      return GO;
    }
    if (this.isSlow(lane)) return this.park(lane, parks);
    return new Promise<GateVerdict>((resolve) => {
      // BullMQ reads a job without a timestamp as NaN, which would sort nowhere.
      const at = queuedAt !== undefined && Number.isFinite(queuedAt) ? queuedAt : now;
      lane.waiters.splice(placeInLine(lane.waiters, at), 0, { resolve, since: now, parks, requests, queuedAt: at });
      if (!lane.sweep) {
        lane.lineSince = now;
        lane.admitted.clear();
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
    if (lane.open < lane.limit.concurrency) {
      lane.open++;
      return GO;
    }
    return new Promise<GateVerdict>((resolve) => lane.sendQueue.push({ resolve, parks }));
  }

  /**
   * A request is over: `attemptMs` its duration (undefined when it was not sent after all), `answer`
   * what came back (for the limit and the breaker; `probe` when it was the breaker's probe); its
   * place goes to the next request waiting.
   */
  sent(destinationId: string, attemptMs: number | undefined, answer?: Answer, probe = false): void {
    const lane = this.lane(destinationId);
    if (attemptMs !== undefined) this.observe(lane, attemptMs);
    if (answer) this.answered(destinationId, lane, answer, probe);
    else if (probe) lane.breaker.probeNotSent();
    lane.open--;
    while (lane.sendQueue.length > 0 && lane.open < lane.limit.concurrency) {
      const next = lane.sendQueue.shift()!;
      if (lane.slowShare >= SLOW_SHARE) {
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
    while (lane.inFlight < lane.limit.concurrency) {
      const next = lane.waiters.shift();
      if (!next) break;
      lane.inFlight += next.requests;
      lane.admitted.add(this.options.clock(), next.requests);
      next.resolve(GO);
    }
  }

  /**
   * The places the requests of a job admitted with `reserved` requests take (`send`, `sent`,
   * `leave`, with the bookkeeping in one spot). Requests beyond the reservation (none, when the
   * round sends what it reserved for) take a place but end no reservation.
   * `mode`: `probe` for the breaker's probe (its first answer; any others are last attempts);
   * `last` for calls at their retry window's end, whose last attempt goes even while the breaker
   * is open (as docs/spec.md §4 gives every call one at its deadline); their answers count as any
   * other (a 2xx closes the breaker).
   */
  places(destinationId: string, parks: number, reserved: number, mode: 'normal' | 'probe' | 'last' = 'normal'): RequestPlaces {
    const probe = mode === 'probe';
    let ended = 0;
    const lane = this.lane(destinationId);
    const paced = (v: GateVerdict): number | undefined | Promise<number | undefined> => {
      if (v.kind === 'park') return v.delayMs;
      // Admitted before the breaker opened: the request is not sent, the job is parked.
      if (mode === 'normal' && lane.breaker.state !== 'closed') {
        this.sent(destinationId, undefined);
        return this.breakerPark(lane, lane.breaker.probeAt, this.options.clock());
      }
      if (mode !== 'normal') return undefined;
      const wait = this.pace(lane);
      if (wait === undefined || wait instanceof Promise) return wait;
      this.sent(destinationId, undefined);
      return wait;
    };
    return {
      take: () => {
        const verdict = this.send(destinationId, parks);
        return verdict instanceof Promise ? verdict.then(paced) : paced(verdict);
      },
      give: (ms, placed, answer) => {
        ended++;
        // The first answer is the probe's; a probe round's others are last attempts (probeRound).
        const probeAnswer = probe && ended === 1;
        if (placed) this.sent(destinationId, ms, answer, probeAnswer);
        else if (probeAnswer) lane.breaker.probeNotSent();
        if (ended <= reserved) this.leave(destinationId, undefined);
      },
      done: () => {
        if (reserved > ended) this.leave(destinationId, undefined, reserved - ended);
        ended = Math.max(ended, reserved);
      },
    };
  }

  /** Reserves a job's last attempts (see `places`, mode `last`) whatever the breaker says. */
  reserveLast(destinationId: string, requests: number): void {
    this.lane(destinationId).inFlight += requests;
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

  /** Every destination's adaptive limit and breaker (every destination seen since start). */
  *limits(): IterableIterator<[string, { readonly limit: AdaptiveLimit; readonly breaker: Breaker }]> {
    for (const [id, lane] of this.lanes) yield [id, lane];
  }

  /** The breaker of a destination (a closed one for a destination not seen yet). */
  breaker(destinationId: string): Breaker {
    return this.lane(destinationId).breaker;
  }

  /** Called on every breaker change, in the call that observed the answer. */
  onBreakerChange(listener: BreakerListener): void {
    this.listeners.push(listener);
  }

  /**
   * The job whose probe failed carries the next one: it comes back at the returned time, and
   * jobs parked meanwhile wait longer (they are woken when the breaker closes).
   */
  carryNextProbe(destinationId: string): number {
    const lane = this.lane(destinationId);
    lane.carrierUntil = lane.breaker.probeAt + 2 * MAX_PROBE_MS;
    return lane.breaker.probeAt;
  }

  /**
   * A job settled (nothing left to send) while the breaker is open: it may have been the one due
   * back for the next probe, so the next job parked takes that on (at worst two come back for it).
   */
  releaseCarrier(destinationId: string): void {
    const lane = this.lanes.get(destinationId);
    if (lane && lane.breaker.state !== 'closed') lane.carrierUntil = 0;
  }

  private answered(destinationId: string, lane: Lane, answer: Answer, probe: boolean): void {
    const now = this.options.clock();
    const before = lane.limit.rate;
    lane.limit.observe(answer.signal, now);
    // A cut spreads what is booked but not started yet at the new rate, for the jobs booking next.
    const after = lane.limit.rate;
    if (after < before && Number.isFinite(before) && lane.bookedUntil > now)
      lane.bookedUntil = now + ((lane.bookedUntil - now) * before) / after;
    const change = lane.breaker.observe(answer.signal, now, probe);
    if (change === undefined) return;
    // A receiver that just came back gets the destination's full limits: its waiting calls are
    // all due, and it says soon enough (429, 503, timeouts) if that is too much.
    if (change === 'closed') lane.limit.reset();
    lane.carrierUntil = 0;
    for (const listener of this.listeners) listener(destinationId, change, lane.breaker);
  }

  /**
   * How long a job waits while the breaker is open: the first one parked after a probe is
   * scheduled comes back for that probe (it carries it); the others wait about BREAKER_PARK_MS,
   * however new the outage, and are woken when it closes: back sooner, a job would only be parked
   * again, each round costing about a delivery (docs/delivery.md, "One probe at a time").
   */
  private breakerPark(lane: Lane, probeAt: number, now: number): number {
    if (lane.breaker.state === 'open' && lane.carrierUntil <= now) {
      lane.carrierUntil = probeAt + 2 * MAX_PROBE_MS;
      return Math.round(Math.max(0, probeAt - now) + 20 + this.options.random() * 200);
    }
    return Math.round(BREAKER_PARK_MS * (0.5 + this.options.random()));
  }

  /**
   * A request's turn at the limit's rate: undefined, go now; a promise, go when it settles; a
   * number, the turn is further off than `slowMs`: not sent, come back in that many ms. Turns are
   * fixed times, one apart: a timer that fires late sends its request late but moves no later
   * turn, so the requests of any second stay within the rate's (what maxRequestsPerSecond's slots
   * in Redis, taken the same way, need across processes).
   */
  private pace(lane: Lane): undefined | number | Promise<undefined> {
    const rate = lane.limit.rate;
    if (!Number.isFinite(rate)) return undefined;
    const now = this.options.clock();
    const start = Math.max(now, lane.paceAt);
    const wait = start - now;
    if (wait > this.options.slowMs) return Math.round(wait);
    lane.paceAt = start + 1000 / rate;
    return wait === 0 ? undefined : new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), wait));
  }

  /**
   * A slow lane parks the jobs that waited `slowMs`. A busy one keeps waiting the jobs it admits
   * within `slowMs` at the rate it admits them, and parks the rest until about their turn (5 s at
   * most at a time), and any that waited twice `slowMs` all the same; before
   * that rate is known, it parks those that waited `slowMs` for about one attempt, whatever their
   * earlier parks (a job woken after an outage has many, from the breaker, and was parked for
   * minutes behind a backlog that took seconds).
   */
  private sweep(lane: Lane): void {
    const now = this.options.clock();
    const slow = this.isSlow(lane);
    // The rate once the line has waited `slowMs` (or the window, if shorter): over less, a line
    // that just formed (a breaker that just closed) would be spread over minutes.
    const measuredMs = Math.min(RATE_WINDOW_MS, now - lane.lineSince);
    const measured = !slow && measuredMs >= Math.min(RATE_WINDOW_MS, this.options.slowMs);
    const perSecond = measured ? (lane.admitted.total(now) * 1000) / measuredMs : 0;
    const parked = new Map<number, GateVerdict>();
    for (const { index, turnInMs } of pastHorizon(lane.waiters, perSecond, this.options.slowMs))
      parked.set(index, { kind: 'park', delayMs: this.turnPark(turnInMs) });
    // In a moving line, twice as long: should the rate overstate how fast it moves, no job holds a
    // worker slot for long.
    const maxWaitMs = (perSecond > 0 ? LINE_WAIT_SLOW_MS : 1) * this.options.slowMs;
    lane.waiters.forEach((w, index) => {
      if (!parked.has(index) && now - w.since >= maxWaitMs) parked.set(index, this.park(lane, slow ? w.parks : 0));
    });
    if (parked.size > 0) {
      const waiters = lane.waiters;
      lane.waiters = waiters.filter((_, index) => !parked.has(index));
      for (const [index, verdict] of parked) waiters[index]?.resolve(verdict);
    }
    if (lane.waiters.length === 0) {
      clearInterval(lane.sweep);
      lane.sweep = undefined;
    }
  }

  private observe(lane: Lane, attemptMs: number): void {
    const slow = attemptMs >= this.options.slowMs ? 1 : 0;
    // The first duration stands for them all until there are more (a receiver hung from the start).
    lane.slowShare = lane.meanMs === 0 ? slow : lane.slowShare * 0.8 + slow * 0.2;
    lane.meanMs = lane.meanMs === 0 ? attemptMs : lane.meanMs * 0.8 + attemptMs * 0.2;
    lane.lastFinishedAt = this.options.clock();
    if (attemptMs < this.options.slowMs) lane.slowSince = undefined;
  }

  private isSlow(lane: Lane): boolean {
    return lane.slowShare >= SLOW_SHARE || this.options.clock() - lane.lastFinishedAt >= this.options.slowMs;
  }

  /**
   * About one typical attempt, doubled for every earlier park of the same job, and at least about
   * as long as the destination has been stuck (in doubling steps), up to MAX_PARK_MS: a long
   * backlog on a hung destination then costs Redis a trickle of moves, not one per job per attempt
   * duration, and a job new to a destination hung for minutes is not fetched again every few
   * seconds (each fetch and park costs about what a delivery does; `pnpm bench`, dead-1-of-10).
   * A job's own parks double it at most once past what the stuck time gives: they count every
   * park (the breaker's too), and a job parked ten times through an outage, meeting a lane slow for
   * a second after it, was parked for minutes (flapping at saturation, issue 31).
   */
  private park(lane: Lane, parks: number): GateVerdict {
    const now = this.options.clock();
    lane.slowSince ??= now;
    const typical = Math.min(Math.max(lane.meanMs, this.options.slowMs), this.options.maxParkMs);
    const stuckSteps = Math.floor(Math.log2(Math.max(1, (now - lane.slowSince) / typical)));
    const doublings = Math.max(stuckSteps, Math.min(parks, stuckSteps + 1));
    const delayMs = Math.min(MAX_PARK_MS, typical * 2 ** Math.min(doublings, 10)) * (0.5 + this.options.random());
    return { kind: 'park', delayMs: Math.round(delayMs) };
  }

  /** A park until about a turn `turnInMs` off, spread so that the jobs parked together do not all come back at once. */
  private turnPark(turnInMs: number): number {
    return Math.round(Math.min(MAX_TURN_PARK_MS, turnInMs) * (0.75 + 0.5 * this.options.random()));
  }

  private lane(destinationId: string): Lane {
    let lane = this.lanes.get(destinationId);
    if (!lane) {
      lane = {
        inFlight: 0,
        waiters: [],
        admitted: new SlidingCount(RATE_WINDOW_MS / 10, 10),
        lineSince: 0,
        open: 0,
        sendQueue: [],
        sweep: undefined,
        meanMs: 0,
        slowShare: 0,
        lastFinishedAt: this.options.clock(),
        slowSince: undefined,
        limit: new AdaptiveLimit({ maxConcurrency: this.options.maxInFlight, maxRate: Number.POSITIVE_INFINITY }),
        breaker: new Breaker(),
        bookedUntil: 0,
        paceAt: 0,
        carrierUntil: 0,
      };
      this.lanes.set(destinationId, lane);
    }
    return lane;
  }
}
