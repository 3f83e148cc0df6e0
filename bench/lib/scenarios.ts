/**
 * The scenarios of `pnpm bench:chaos`, as data: what each receiver does, what happens to the
 * system mid-run, and which calls are expected to end as dead letters.
 *
 * Ten destinations, one per source (source i → destination i → receiver listener i, path /d<i>),
 * and the load spread evenly over the sources: the multi-tenant shape webhook platforms run, where
 * one customer's dead receiver must not slow the others. Each destination has its own port, as
 * different customers' receivers have different origins (so no shared connection pool).
 */
import type { Behaviour, ChaosPlan } from '@eventrelay/testkit';

export const DESTINATIONS = 10;
export const routeOf = (i: number): string => `d${i}`;

/** Something done to the system at `atS` seconds into the measured window. */
export type ScenarioEvent = { readonly atS: number } & (
  | { readonly kind: 'receiver-down' | 'receiver-up'; readonly listener: number }
  /** The listener's route answers every request 503 (up, but not serving), or as the scenario's plan says again. */
  | { readonly kind: 'receiver-unavailable' | 'receiver-available'; readonly listener: number }
  | { readonly kind: 'kill-delivery'; readonly restartAfterS: number }
  | { readonly kind: 'restart-redis' }
  | { readonly kind: 'kill-redis'; readonly restartAfterS: number }
  /** SIGKILL the primary; the Sentinel promotes the replica; the old primary starts again `restartAfterS` after the kill. */
  | { readonly kind: 'failover-redis'; readonly restartAfterS: number }
);

export interface Scenario {
  readonly name: string;
  readonly title: string;
  readonly plan: ChaosPlan;
  readonly events: readonly ScenarioEvent[];
  /** Destinations whose receivers do not answer 2xx for a while by design (left out of the saturation window). */
  readonly impaired: readonly number[];
  /** Destinations disabled through the admin API when the load stops, so their backlog ends as dead letters. */
  readonly disableAtEnd: readonly number[];
  /** Destinations whose every call must end as a dead letter; the others (but those disabled) must all be delivered. */
  readonly deadByDesign: readonly number[];
  /** Destinations whose URL is the receiver's https listener (a self-signed certificate). */
  readonly tls: readonly number[];
  /** Measured window, when not BENCH_DURATION_S. */
  readonly measuredS?: number;
  /** Redis with AOF on, of the bench's own (it gets restarted or killed). */
  readonly privateAofRedis?: boolean;
  /** A primary, its replica and a Sentinel of the bench's own (AOF on, everysec); every process finds the primary through the Sentinel. */
  readonly replicated?: boolean;
  /** Settings of the system under test that differ from the defaults, as an operator would set them for this load. */
  readonly env?: Readonly<Record<string, string>>;
  /** Acknowledged calls may be lost by design (asynchronous replication): counted and reported, not a failure. */
  readonly lossReported?: boolean;
  /**
   * The one destination that misbehaves while the nine others are healthy (throttling, flapping):
   * its every attempt is recorded, and its figures (attempts per delivered call, 429 share, time to
   * recover) and the nine others' throughput against the healthy scenario are reported apart.
   */
  readonly misbehaving?: number;
  /**
   * In the fixed mode, calls sent to destination i for each call sent to a destination not listed
   * (1): the others still get BENCH_RATE / 10 each, as in healthy, so the offered rate grows by the
   * extra. At saturation every destination gets the same share.
   */
  readonly fixedLoadWeights?: Readonly<Record<number, number>>;
  /** One source (all the load) connected to every destination: each call goes to all of them (fixed mode). */
  readonly oneSource?: boolean;
  /**
   * Issue 32: this source, a web source with the defaults of its type, is flooded from the measured
   * window's start to its end (flood.ts) while the load generator sends to the others only.
   */
  readonly flood?: { readonly source: number; readonly connections: number };
  /** Redis of the bench's own, without persistence, with this maxmemory (MB) and noeviction. */
  readonly redisMaxmemoryMb?: number;
  /** The modes it runs in, when not every one (the soak is healthy's alone). */
  readonly modes?: readonly ('fixed' | 'saturation')[];
  /** Longest wait after the load for every acknowledged call to be delivered or dead-lettered. */
  readonly settleS: number;
  readonly destinations: number;
}

const planOf = (behaviours: (i: number) => Behaviour): ChaosPlan => ({
  seed: 8,
  routes: Object.fromEntries(Array.from({ length: DESTINATIONS }, (_, i) => [routeOf(i), behaviours(i)])),
});
const scenario = (s: Partial<Scenario> & Pick<Scenario, 'name' | 'title'>): Scenario => ({
  plan: planOf(() => ({})),
  ...{ events: [], impaired: [], disableAtEnd: [], deadByDesign: [], tls: [], settleS: 120, destinations: DESTINATIONS },
  ...s,
});

/** Durable mode: a 200 waits until the replica holds the calls. */
const DURABLE_MODE = { INGEST_DURABLE_REPLICAS: '1' } as const;

/** The throttled destination's rate limit (issue 21): beyond it, 429 with Retry-After: 1. */
const THROTTLE_PER_S = 200;
/** Flapping: the receiver answers 503 for `downS`, then 2xx for `upS`, `cycles` times, from `fromS` into the measured window. */
export const FLAP = { fromS: 5, downS: 20, upS: 20, cycles: 3 } as const;

/** `listener` unavailable (503) for `downS`, then back for `upS`, `cycles` times from `fromS`: the window ends after the last up phase. */
export function flapEvents(listener: number, f: { fromS: number; downS: number; upS: number; cycles: number } = FLAP): ScenarioEvent[] {
  return Array.from({ length: f.cycles }, (_, k) => {
    const at = f.fromS + k * (f.downS + f.upS);
    return [
      { atS: at, kind: 'receiver-unavailable', listener },
      { atS: at + f.downS, kind: 'receiver-available', listener },
    ] as const;
  }).flat();
}

export const SCENARIOS: readonly Scenario[] = [
  scenario({ name: 'healthy', title: '10 destinations, all 2xx', settleS: 60 }),
  scenario({
    name: 'flaky',
    title: '10% of attempts answer 500, 2% answer 429 with Retry-After: 1',
    plan: planOf(() => ({ fail500: 0.1, fail429: 0.02, retryAfterS: 1 })),
  }),
  scenario({
    // Issue 31: the ordinary production receiver, mostly healthy with errors of every kind at
    // random; the receiver-friendly controls must serve it at full speed.
    name: 'noisy-errors',
    title: '5% of attempts answer 503, 2% 429 with Retry-After: 1, 3% hang past the 5 s timeout, at random',
    plan: planOf(() => ({ unavailable: 0.05, fail429: 0.02, retryAfterS: 1, hang: 0.03 })),
  }),
  scenario({
    // Issue 32: a public write key in hostile hands. Source 0 is a web source with its type's
    // defaults (1,000 calls/s, 10% of maxmemory for its claims); it is flooded with unique
    // messageIds at full speed while the nine others send at the fixed rate. They must not notice.
    name: 'noisy-neighbour',
    title: 'source 0 (web) flooded with unique messageIds and 512-character userIds at full speed; Redis maxmemory 64 MB',
    flood: { source: 0, connections: 4 },
    redisMaxmemoryMb: 64,
    impaired: [0],
    // "The others at a fixed rate" has no saturation counterpart.
    modes: ['fixed'],
    // Long enough for the flood to reach its budget at its rate limit (about 35 s) and be refused for it.
    measuredS: 60,
  }),
  scenario({
    name: 'dead-1-of-10',
    title: 'destination 9 hangs every request past the 5 s timeout',
    plan: planOf((i) => (i === 9 ? { hang: 1 } : {})),
    impaired: [9],
    // What an operator does about a dead receiver: switch the destination off; its backlog is
    // dead-lettered (listed, replayable) instead of probing a hung host for 4 hours.
    disableAtEnd: [9],
    settleS: 400,
  }),
  scenario({
    name: 'receiver-down',
    title: "destination 0's receiver refuses connections for 60 s, then comes back",
    events: [
      { atS: 5, kind: 'receiver-down', listener: 0 },
      { atS: 65, kind: 'receiver-up', listener: 0 },
    ],
    impaired: [0],
    measuredS: 80,
    // The scenario is about coming back from an outage, not about the retry backlog cap (tested in
    // domain/retry-cap.test.ts and bounds.int.test.ts). At healthy saturation here a 60 s outage of
    // one destination in ten holds about 70,000 calls of about 1 KB: more than the default 64 MiB,
    // about a minute at 1,000 calls/s. With the default, how fast the machine ran decided whether
    // calls were dead-lettered; so the cap is raised, as docs/runbook.md allows when Redis has room.
    env: { DELIVERY_RETRY_MAX_BYTES_PER_DESTINATION: String(256 * 2 ** 20) },
    // Retries back off exponentially (full jitter): a call that failed 7 or 8 rounds during the 60 s
    // waits up to 128 or 256 s for its next round, so the last arrivals come minutes after the return.
    settleS: 480,
  }),
  scenario({
    // Issue 21: a receiver with a rate limit. In the fixed mode it is offered 3 times a healthy
    // destination's share (300 calls/s at the default 1,000 calls/s: 1.5x its limit), or the limit
    // would never be reached; at saturation its even share is already far above it.
    name: 'throttling',
    title: `destination 0 admits ${THROTTLE_PER_S} requests/s and answers 429 with Retry-After: 1 above it`,
    plan: planOf((i) => (i === 0 ? { ratePerS: THROTTLE_PER_S, retryAfterS: 1 } : {})),
    impaired: [0],
    misbehaving: 0,
    fixedLoadWeights: { 0: 3 },
    // The backlog above the limit drains at the limit once the load stops: at saturation tens of thousands of calls.
    settleS: 600,
  }),
  scenario({
    // Issue 21: a receiver that keeps going away and coming back (503, not a refused connection:
    // the load balancer answers while the application behind it is down).
    name: 'flapping',
    title: `destination 0 answers 503 for ${FLAP.downS} s, then 2xx for ${FLAP.upS} s, ${FLAP.cycles} times`,
    events: flapEvents(0),
    impaired: [0],
    misbehaving: 0,
    measuredS: FLAP.fromS + FLAP.cycles * (FLAP.downS + FLAP.upS),
    // As receiver-down: calls that failed many rounds wait minutes for their next one.
    settleS: 480,
  }),
  scenario({
    name: 'delivery-killed',
    title: 'webhook-delivery SIGKILLed mid-run, restarted 1 s later',
    events: [{ atS: 8, kind: 'kill-delivery', restartAfterS: 1 }],
  }),
  scenario({
    name: 'redis-restarted',
    title: 'Redis (AOF on, appendfsync everysec) restarted mid-run',
    events: [{ atS: 8, kind: 'restart-redis' }],
    privateAofRedis: true,
  }),
  scenario({
    // A process kill, not a host crash: the AOF writes Redis made before the SIGKILL stay in the
    // page cache, so even with everysec every acknowledged call must survive.
    name: 'redis-killed',
    title: 'Redis (AOF on, appendfsync everysec) SIGKILLed mid-run, restarted 1 s later',
    events: [{ atS: 8, kind: 'kill-redis', restartAfterS: 1 }],
    privateAofRedis: true,
  }),
  // Durable mode's cost: the same healthy load on a primary with a replica, without and with it.
  scenario({ name: 'replicated', title: '10 destinations, all 2xx; Redis primary + replica + Sentinel', replicated: true, settleS: 60 }),
  scenario({
    name: 'durable',
    title: 'as replicated, in durable mode (every 200 waits until the replica holds the calls)',
    replicated: true,
    env: DURABLE_MODE,
    settleS: 60,
  }),
  scenario({
    // Asynchronous replication: what the primary acknowledged and had not yet sent to the replica
    // when it died is gone. The number is reported, not hidden.
    name: 'redis-failover',
    title: 'Redis primary SIGKILLed mid-run, the Sentinel promotes the replica; the old primary is back as its replica 5 s later',
    events: [{ atS: 8, kind: 'failover-redis', restartAfterS: 5 }],
    replicated: true,
    lossReported: true,
    // Long enough to see durable mode serve again: a returning primary is made a replica only after
    // it has reported the wrong role for about 8 s (Sentinel's own guard), then it syncs.
    measuredS: 40,
  }),
  scenario({
    name: 'redis-failover-durable',
    title: 'as redis-failover, in durable mode: nothing answered 200 may be lost',
    events: [{ atS: 8, kind: 'failover-redis', restartAfterS: 5 }],
    replicated: true,
    env: DURABLE_MODE,
    measuredS: 40,
  }),
  scenario({
    name: 'hostile',
    title:
      'd0 self-signed TLS, d1 redirects to the metadata address, d2 bodies slower than the timeout, d3 resets 30%, d4 answers after 200 ms',
    plan: planOf((i) => [{}, { redirect: 1 }, { slowBodyMs: 8000 }, { reset: 0.3 }, { delayMs: 200 }][i] ?? {}),
    tls: [0],
    impaired: [0, 1, 2],
    // Slow bodies time out and are retried for the whole window, like a hung receiver.
    disableAtEnd: [2],
    deadByDesign: [0, 1, 2],
    settleS: 400,
  }),
];

/** The pipeline detail mode (`pnpm bench:pipeline`): one source, one destination, all 2xx. */
export const PIPELINE = scenario({
  name: 'pipeline',
  title: 'one destination, all 2xx',
  plan: { routes: {} },
  settleS: 60,
  destinations: 1,
});

/** The filter phases of the pipeline mode (pipeline.ts): one source, ten destinations, all 2xx. */
export const PIPELINE_FANOUT = scenario({
  name: 'pipeline-fanout',
  title: 'one source to ten destinations, all 2xx',
  plan: { routes: {} },
  settleS: 60,
  oneSource: true,
});

export function scenarioNamed(name: string): Scenario {
  const found = SCENARIOS.find((s) => s.name === name.trim());
  if (!found) throw new Error(`unknown scenario "${name}"; use ${SCENARIOS.map((s) => s.name).join(', ')}`);
  return found;
}
