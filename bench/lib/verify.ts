/**
 * The verification pass that ends every scenario (the pattern Outpost's test suite uses): each call
 * the intake acknowledged must have reached its receiver with a 2xx, or be, by design, in its
 * destination's dead letters. Pure: the bench gathers the three sets, this counts.
 */
import { routeOf, type Scenario } from './scenarios.js';

export interface VerifyInput {
  /** Per destination: the messageIds of every call the intake answered 2xx for. */
  readonly acknowledged: ReadonlyMap<string, readonly string[]>;
  /** Per destination: messageId → how many times the receiver answered it 2xx. */
  readonly delivered: ReadonlyMap<string, ReadonlyMap<string, number>>;
  /** Per destination: the messageIds listed in its dead letters. */
  readonly deadLettered: ReadonlyMap<string, ReadonlySet<string>>;
}

export interface Verdict {
  readonly acknowledged: number;
  /** Acknowledged calls the receiver answered 2xx at least once. */
  readonly delivered: number;
  /** Acknowledged calls not delivered but listed as dead letters. */
  readonly dead_lettered: number;
  /** 2xx answers beyond the first for the same call and destination (at-least-once at work). */
  readonly duplicates: number;
  /** Acknowledged, neither delivered nor dead-lettered. Must be 0. */
  readonly lost: number;
  /** Delivered or dead-lettered calls the load generator never saw acknowledged (a 503 whose write still landed, say). */
  readonly unacknowledged_arrivals: number;
  /** Up to 10 lost messageIds, to look for in the logs and the attempt log. */
  readonly lost_examples: readonly string[];
  readonly by_destination: Readonly<
    Record<string, { acknowledged: number; delivered: number; dead_lettered: number; duplicates: number; lost: number }>
  >;
}

export function verify(input: VerifyInput): Verdict {
  const total = { acknowledged: 0, delivered: 0, dead_lettered: 0, duplicates: 0, lost: 0 };
  let unacknowledged = 0;
  const lostExamples: string[] = [];
  const byDestination: Record<string, Verdict['by_destination'][string]> = {};
  const destinations = new Set([...input.acknowledged.keys(), ...input.delivered.keys(), ...input.deadLettered.keys()]);

  for (const destination of [...destinations].sort()) {
    const acked = input.acknowledged.get(destination) ?? [];
    const arrived = input.delivered.get(destination) ?? new Map<string, number>();
    const dead = input.deadLettered.get(destination) ?? new Set<string>();
    const row = { acknowledged: acked.length, delivered: 0, dead_lettered: 0, duplicates: 0, lost: 0 };
    const ackedSet = new Set(acked);
    for (const id of ackedSet) {
      if ((arrived.get(id) ?? 0) > 0) row.delivered++;
      else if (dead.has(id)) row.dead_lettered++;
      else {
        row.lost++;
        if (lostExamples.length < 10) lostExamples.push(`${destination}:${id}`);
      }
    }
    for (const [id, times] of arrived) {
      if (times > 1) row.duplicates += times - 1;
      if (!ackedSet.has(id)) unacknowledged++;
    }
    for (const id of dead) if (!ackedSet.has(id) && !arrived.has(id)) unacknowledged++;
    // The same messageId acknowledged twice is one call (the intake dedupes it): count it once.
    row.acknowledged = ackedSet.size;
    for (const k of Object.keys(total) as (keyof typeof total)[]) total[k] += row[k];
    byDestination[destination] = row;
  }
  return { ...total, unacknowledged_arrivals: unacknowledged, lost_examples: lostExamples, by_destination: byDestination };
}

/** What the scenario promises beyond "nothing lost": pure. */
export function expectations(
  scenario: Scenario,
  v: Verdict,
  rx: { tlsRequests: number; badSignatures: number; unsigned: number },
): string[] {
  const out: string[] = [];
  const dead = new Set(scenario.deadByDesign);
  for (let i = 0; i < scenario.destinations; i++) {
    const row = v.by_destination[routeOf(i)];
    if (!row || row.acknowledged === 0) continue;
    if (dead.has(i) && row.dead_lettered !== row.acknowledged)
      out.push(`${routeOf(i)}: ${row.dead_lettered} of ${row.acknowledged} dead-lettered, all expected`);
    // Where losing calls is by design (lossReported), the lost are counted apart, not held against the scenario.
    const expected = scenario.lossReported ? row.acknowledged - row.lost : row.acknowledged;
    if (!dead.has(i) && !scenario.disableAtEnd.includes(i) && row.delivered !== expected)
      out.push(`${routeOf(i)}: ${row.delivered} of ${row.acknowledged} delivered, all expected`);
  }
  if (scenario.tls.length > 0 && rx.tlsRequests > 0) out.push(`${rx.tlsRequests} requests reached the self-signed https receiver`);
  if (rx.badSignatures > 0) out.push(`${rx.badSignatures} requests with a bad signature`);
  if (rx.unsigned > 0) out.push(`${rx.unsigned} requests without a signature`);
  return out;
}
