/** What one run's receivers got, gathered from the fault-injecting receiver's arrival records as the run goes. */
import type { Arrival } from '@eventrelay/testkit';
import type { Attempt } from './misbehaving.js';

/**
 * What one run's receivers got: per route, how often each call was answered 2xx, when it first
 * arrived and how long after the load generator sent it, and every attempt's answer. Other routes'
 * traffic (a baseline's, a late hung request of an earlier run) is not this run's and is ignored.
 */
export class Arrivals {
  private readonly routes = new Map<string, { delivered: Map<string, number>; first: Arrival[] }>();
  /** Every request recorded, by the status answered ("0" = no answer). */
  readonly statuses: Record<string, number> = {};
  requests = 0;
  /** The first 20 calls answered 2xx more than once, with each 2xx's attempt and arrival, to tell why. */
  readonly duplicateExamples: { route: string; messageId: string; answers: { attempt: number; arrivalMs: number }[] }[] = [];
  /** Every request to a watched route, as it arrived (a misbehaving destination's attempts, one by one). */
  private readonly watched = new Map<string, Attempt[]>();

  constructor(
    private readonly routeNames: readonly string[],
    watch: readonly string[] = [],
  ) {
    for (const r of routeNames) this.routes.set(r, { delivered: new Map(), first: [] });
    for (const r of watch) this.watched.set(r, []);
  }

  add(a: Arrival): void {
    const log = this.routes.get(a.route);
    if (!log) return;
    this.requests++;
    this.statuses[a.status] = (this.statuses[a.status] ?? 0) + 1;
    this.watched.get(a.route)?.push({ arrivalMs: a.arrivalMs, status: a.status });
    if (a.status < 200 || a.status >= 300) return;
    const times = log.delivered.get(a.messageId) ?? 0;
    log.delivered.set(a.messageId, times + 1);
    if (times === 0) return void log.first.push(a);
    const answer = { attempt: a.attempt, arrivalMs: a.arrivalMs };
    const known = this.duplicateExamples.find((d) => d.route === a.route && d.messageId === a.messageId);
    if (known) known.answers.push(answer);
    else if (this.duplicateExamples.length < 20) {
      const first = log.first.find((f) => f.messageId === a.messageId) as Arrival;
      this.duplicateExamples.push({
        route: a.route,
        messageId: a.messageId,
        answers: [{ attempt: first.attempt, arrivalMs: first.arrivalMs }, answer],
      });
    }
  }

  /** First 2xx arrivals of `routes` (all by default). */
  firsts(routes: readonly string[] = this.routeNames): Arrival[] {
    return routes.flatMap((r) => this.routes.get(r)?.first ?? []);
  }

  /** Every request to `route`, when it was watched (empty otherwise). */
  attemptsOf(route: string): readonly Attempt[] {
    return this.watched.get(route) ?? [];
  }

  /** Calls answered 2xx at least once. */
  deliveredCount(): number {
    return this.firsts().length;
  }

  /** First arrivals within [fromMs, toMs) over `routes`. */
  arrivalsBetween(fromMs: number, toMs: number, routes?: readonly string[]): number {
    return this.firsts(routes).filter((a) => a.arrivalMs >= fromMs && a.arrivalMs < toMs).length;
  }

  /** Latency (ms, first 2xx arrival - send) of the calls sent within [fromMs, toMs) over `routes`. */
  latenciesOfSentBetween(fromMs: number, toMs: number, routes?: readonly string[]): number[] {
    return this.firsts(routes)
      .filter((a) => a.sentAtMs >= fromMs && a.sentAtMs < toMs)
      .map((a) => a.arrivalMs - a.sentAtMs);
  }

  /** Per route: messageId → times answered 2xx (for the verification pass). */
  deliveredByRoute(): Map<string, ReadonlyMap<string, number>> {
    return new Map([...this.routes].map(([r, log]) => [r, log.delivered]));
  }

  /** How many calls needed 1, 2, 3, … attempts to their first 2xx. */
  attemptsToDeliver(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const a of this.firsts()) out[a.attempt] = (out[a.attempt] ?? 0) + 1;
    return out;
  }
}
