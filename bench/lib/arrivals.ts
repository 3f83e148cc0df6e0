/**
 * What one run's receivers got, gathered from the chaos receiver's records as the run goes: per
 * destination route, how often each call was answered 2xx, when it first arrived and how long after
 * the load generator sent it, plus every attempt's answer. Pure data, no I/O.
 */

/** One request as the chaos receiver recorded it (the fields the bench reads). */
export interface Arrival {
  readonly route: string;
  readonly messageId: string;
  readonly arrivalMs: number;
  /** From the call's properties.sentAtMs; NaN when absent. */
  readonly sentAtMs: number;
  readonly attempt: number;
  /** HTTP status answered, 0 when the request was hung, reset or abandoned. */
  readonly status: number;
}

interface RouteLog {
  readonly delivered: Map<string, number>;
  /** First 2xx of each call: arrival time and latency (arrival - sent), in arrival order. */
  readonly firstArrivalMs: number[];
  readonly firstSentAtMs: number[];
  /** The attempt number of each call's first 2xx. */
  readonly firstAttempt: number[];
}

export class Arrivals {
  readonly routes = new Map<string, RouteLog>();
  /** Every request recorded, by the status answered ("0" = no answer). */
  readonly statuses: Record<string, number> = {};
  requests = 0;
  /** The first few calls answered 2xx more than once, with each 2xx's attempt number and arrival, to tell why. */
  readonly duplicateExamples: { route: string; messageId: string; answers: { attempt: number; arrivalMs: number }[] }[] = [];

  constructor(private readonly routeNames: readonly string[]) {
    for (const r of routeNames) this.routes.set(r, { delivered: new Map(), firstArrivalMs: [], firstSentAtMs: [], firstAttempt: [] });
  }

  add(a: Arrival): void {
    const log = this.routes.get(a.route);
    // Another route's traffic (a baseline, a late hung request of an earlier run) is not this run's.
    if (!log) return;
    this.requests++;
    this.statuses[a.status] = (this.statuses[a.status] ?? 0) + 1;
    if (a.status < 200 || a.status >= 300) return;
    const times = log.delivered.get(a.messageId) ?? 0;
    log.delivered.set(a.messageId, times + 1);
    if (times > 0) {
      this.noteDuplicate(log, a);
      return;
    }
    log.firstArrivalMs.push(a.arrivalMs);
    log.firstSentAtMs.push(a.sentAtMs);
    log.firstAttempt.push(a.attempt);
  }

  private noteDuplicate(log: RouteLog, a: Arrival): void {
    const known = this.duplicateExamples.find((d) => d.route === a.route && d.messageId === a.messageId);
    if (known) known.answers.push({ attempt: a.attempt, arrivalMs: a.arrivalMs });
    else if (this.duplicateExamples.length < 20) {
      // `delivered` iterates in insertion order, the order of the first-arrival arrays: a scan, for at most 20 examples.
      let i = 0;
      for (const id of log.delivered.keys()) {
        if (id === a.messageId) break;
        i++;
      }
      const first = { attempt: log.firstAttempt[i] ?? 0, arrivalMs: log.firstArrivalMs[i] ?? NaN };
      this.duplicateExamples.push({
        route: a.route,
        messageId: a.messageId,
        answers: [first, { attempt: a.attempt, arrivalMs: a.arrivalMs }],
      });
    }
  }

  /** Calls answered 2xx at least once, over `routes` (all by default). */
  deliveredCount(routes: readonly string[] = this.routeNames): number {
    let n = 0;
    for (const r of routes) n += this.routes.get(r)?.delivered.size ?? 0;
    return n;
  }

  /** First arrivals within [fromMs, toMs) over `routes`. */
  arrivalsBetween(fromMs: number, toMs: number, routes: readonly string[] = this.routeNames): number {
    let n = 0;
    for (const r of routes) for (const t of this.routes.get(r)?.firstArrivalMs ?? []) if (t >= fromMs && t < toMs) n++;
    return n;
  }

  /** Latency (ms, first 2xx arrival - send) of the calls sent within [fromMs, toMs) over `routes`. */
  latenciesOfSentBetween(fromMs: number, toMs: number, routes: readonly string[] = this.routeNames): Float64Array {
    const out: number[] = [];
    for (const r of routes) {
      const log = this.routes.get(r);
      if (!log) continue;
      log.firstSentAtMs.forEach((sent, i) => {
        if (sent >= fromMs && sent < toMs) out.push((log.firstArrivalMs[i] as number) - sent);
      });
    }
    return Float64Array.from(out);
  }

  /** Every first arrival time over `routes`. */
  *firstArrivals(routes: readonly string[] = this.routeNames): Iterable<number> {
    for (const r of routes) yield* this.routes.get(r)?.firstArrivalMs ?? [];
  }

  /** Per route: messageId → times answered 2xx (for the verification pass). */
  deliveredByRoute(): Map<string, ReadonlyMap<string, number>> {
    return new Map([...this.routes].map(([r, log]) => [r, log.delivered]));
  }

  /** How many calls needed 1, 2, 3, … attempts to their first 2xx. */
  attemptsToDeliver(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const log of this.routes.values()) for (const a of log.firstAttempt) out[a] = (out[a] ?? 0) + 1;
    return out;
  }
}
