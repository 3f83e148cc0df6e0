/**
 * The scenarios of `pnpm bench` (bench/chaos.bench.ts), as data: what each receiver does, what
 * happens to the system mid-run, and which calls are expected to end as dead letters.
 *
 * Ten destinations, one per source (source i → destination i → receiver listener i, path /d<i>),
 * and the load spread evenly over the sources: the multi-tenant shape webhook platforms run, where
 * one customer's dead receiver must not slow the others. Each destination has its own port, as
 * different customers' receivers have different origins (so no shared connection pool).
 */
import type { Behaviour, ChaosPlan } from '../chaos-receiver/behaviour.js';

export const DESTINATIONS = 10;
export const routeOf = (i: number): string => `d${i}`;
export const destinationIdOf = (i: number): string => `dest-${i}`;
export const sourceIdOf = (i: number): string => `src-${i}`;

export type ScenarioName =
  'healthy' | 'flaky' | 'dead-1-of-10' | 'receiver-down' | 'delivery-killed' | 'redis-restarted' | 'hostile' | 'pipeline';

/** Something done to the system at `atS` seconds into the measured window. */
export type ScenarioEvent =
  | { readonly atS: number; readonly kind: 'receiver-down'; readonly listener: number }
  | { readonly atS: number; readonly kind: 'receiver-up'; readonly listener: number }
  | { readonly atS: number; readonly kind: 'kill-delivery'; readonly restartAfterS: number }
  | { readonly atS: number; readonly kind: 'restart-redis' };

export interface Scenario {
  readonly name: ScenarioName;
  readonly title: string;
  readonly plan: ChaosPlan;
  readonly events: readonly ScenarioEvent[];
  /** Destinations whose receivers do not answer 2xx for a while by design (left out of the saturation window). */
  readonly impaired: readonly number[];
  /** Destinations disabled through the admin API when the load stops, so their backlog ends as dead letters. */
  readonly disableAtEnd: readonly number[];
  /** Destinations whose every call must end as a dead letter (a permanent failure, or disabled at the end); the others must all be delivered. */
  readonly deadByDesign?: readonly number[];
  /** Destinations whose URL is the receiver's https listener (a self-signed certificate). */
  readonly tls?: readonly number[];
  /** Measured window; the receiver-down scenario needs room for 60 s down and the return. */
  readonly measuredS?: number;
  /** Redis with AOF on, of the bench's own (it gets restarted). */
  readonly privateAofRedis?: boolean;
  /** Longest wait after the load for every acknowledged call to be delivered or dead-lettered. */
  readonly settleS: number;
  readonly env?: Readonly<Record<string, string>>;
  /** DESTINATIONS unless set (the pipeline detail mode has one). */
  readonly destinations?: number;
}

export const destinationsOf = (s: Scenario): number => s.destinations ?? DESTINATIONS;

function planOf(behaviours: (i: number) => Behaviour): ChaosPlan {
  return { seed: 8, routes: Object.fromEntries(Array.from({ length: DESTINATIONS }, (_, i) => [routeOf(i), behaviours(i)])) };
}

const allHealthy = planOf(() => ({}));

export const SCENARIOS: readonly Scenario[] = [
  { name: 'healthy', title: '10 destinations, all 2xx', plan: allHealthy, events: [], impaired: [], disableAtEnd: [], settleS: 60 },
  {
    name: 'flaky',
    title: '10% of attempts answer 500, 2% answer 429 with Retry-After: 1',
    plan: planOf(() => ({ fail500: 0.1, fail429: 0.02, retryAfterS: 1 })),
    events: [],
    impaired: [],
    disableAtEnd: [],
    settleS: 120,
  },
  {
    name: 'dead-1-of-10',
    title: 'destination 9 hangs every request past the 5 s timeout',
    plan: planOf((i) => (i === 9 ? { hang: 1 } : {})),
    events: [],
    impaired: [9],
    // What an operator does about a dead receiver: switch the destination off; its backlog is
    // dead-lettered (listed, replayable) instead of probing a hung host for 4 hours.
    disableAtEnd: [9],
    settleS: 400,
  },
  {
    name: 'receiver-down',
    title: "destination 0's receiver refuses connections for 60 s, then comes back",
    plan: allHealthy,
    events: [
      { atS: 5, kind: 'receiver-down', listener: 0 },
      { atS: 65, kind: 'receiver-up', listener: 0 },
    ],
    impaired: [0],
    disableAtEnd: [],
    measuredS: 80,
    // Retries back off exponentially (full jitter): a call that failed 7 or 8 rounds during the 60 s
    // waits up to 128 or 256 s for its next round, so the last arrivals come minutes after the return.
    settleS: 480,
  },
  {
    name: 'delivery-killed',
    title: 'webhook-delivery SIGKILLed mid-run, restarted 1 s later',
    plan: allHealthy,
    events: [{ atS: 8, kind: 'kill-delivery', restartAfterS: 1 }],
    impaired: [],
    disableAtEnd: [],
    settleS: 120,
  },
  {
    name: 'redis-restarted',
    title: 'Redis (AOF on, appendfsync everysec) restarted mid-run',
    plan: allHealthy,
    events: [{ atS: 8, kind: 'restart-redis' }],
    impaired: [],
    disableAtEnd: [],
    privateAofRedis: true,
    settleS: 120,
  },
  {
    name: 'hostile',
    title:
      'd0 self-signed TLS, d1 redirects to the metadata address, d2 bodies slower than the timeout, d3 resets 30%, d4 answers after 200 ms',
    plan: planOf((i) => [{}, { redirect: 1 }, { slowBodyMs: 8000 }, { reset: 0.3 }, { delayMs: 200 }][i] ?? {}),
    tls: [0],
    events: [],
    impaired: [0, 1, 2],
    // Slow bodies time out and are retried for the whole window, like a hung receiver.
    disableAtEnd: [2],
    deadByDesign: [0, 1, 2],
    settleS: 400,
  },
];

/** The pipeline detail mode (`pnpm bench:pipeline`): one source, one destination, all 2xx. */
export const PIPELINE: Scenario = {
  name: 'pipeline',
  title: 'one destination, all 2xx',
  plan: { routes: {} },
  events: [],
  impaired: [],
  disableAtEnd: [],
  settleS: 60,
  destinations: 1,
};

export function scenarioNamed(name: string): Scenario {
  const found = SCENARIOS.find((s) => s.name === name);
  if (!found) throw new Error(`unknown scenario "${name}"; use ${SCENARIOS.map((s) => s.name).join(', ')}`);
  return found;
}
