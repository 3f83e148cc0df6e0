/**
 * Issue 22's filter cost: the ten rules every destination of the filters10 pipeline phase gets,
 * and the in-process microbenchmark of the router's planRoute (its domain core, as built by
 * `tsc -b`) on one batch, ten destinations without filters against the same ten with the rules.
 */
import { checkConfig, routeEntryOf, type Destination, type NormalizedCall, type RouteEntry } from '../../packages/config/dist/src/index.js';
import { refusalsOf } from '../../services/router/dist/domain/filtering.js';
import { planRoute } from '../../services/router/dist/domain/plan-route.js';
import { trackCall } from './payloads.js';
import { round } from './report.js';
import { DESTINATIONS } from './scenarios.js';
import { stackConfig } from './stack.js';

/**
 * Ten rules of the kinds customers write (destination-filters.schema.json): eight drop/only rules,
 * one of which (properties.internal) makes the router read the whole calls of the batch, and two
 * field rules applied at delivery. The bench's calls (payloads.ts trackCall, and the micro batch's
 * events below) pass them all: both phases deliver the same calls, so the delivery side compares.
 */
export const FILTER_RULES = [
  { name: 'no test events', drop: { field: { path: 'event', matches: 'Test *' } } },
  { name: 'tracked types', only: { field: { path: 'type', in: ['track', 'identify', 'page'] } } },
  { name: 'no internal calls', drop: { field: { path: 'properties.internal', equals: true } } },
  { name: 'sampled users', only: { sample: { percent: 100 } } },
  {
    name: 'no anonymous bots',
    drop: {
      all: [
        { not: { field: { path: 'userId', exists: true } } },
        {
          any: [{ field: { path: 'context.userAgent', contains: 'bot' } }, { field: { path: 'context.userAgent', contains: 'Headless' } }],
        },
      ],
    },
  },
  { name: 'known libraries', only: { field: { path: 'context.library.name', starts_with: 'analytics-' } } },
  {
    name: 'commerce events',
    only: {
      any: [
        { not: { field: { path: 'type', equals: 'track' } } },
        { field: { path: 'event', in: ['Order Completed', 'Order Refunded', 'Product Viewed', 'Checkout Started', 'Cart Viewed'] } },
      ],
    },
  },
  {
    name: 'paid orders',
    drop: { all: [{ field: { path: 'event', equals: 'Order Completed' } }, { not: { field: { path: 'properties.total', gt: 0 } } }] },
  },
  { name: 'no client IP', dropFields: ['context.ip'] },
  { name: 'lean context', keepFields: ['properties', 'context.library', 'context.userAgent'] },
] as const;

/** Events of the micro batch: all in the 'commerce events' list. */
const EVENTS = ['Order Completed', 'Product Viewed', 'Checkout Started', 'Cart Viewed'];

interface MicroVariant {
  /** Median over the rounds of the router CPU µs per call of planRoute (user + system, GC included). */
  readonly usec_per_call: number;
  readonly min_usec_per_call: number;
  readonly rounds: readonly number[];
}

export interface MicroResult {
  readonly calls_per_batch: number;
  readonly destinations: number;
  readonly rules_per_destination: number;
  readonly rounds: number;
  readonly iterations_per_round: number;
  readonly no_filters: MicroVariant;
  /** planRoute with the whole calls already parsed (what it is given after the HMGET). */
  readonly filters: MicroVariant;
  /** The same plus JSON.parse of the batch's stored parts: the CPU of the whole-call read beside the round trip. */
  readonly filters_with_parse: MicroVariant;
}

/** A batch as the router sees it: parts of `partSize` normalized calls (the intake requests), their route entries and stored texts. */
export function microBatch(calls: number, partSize: number) {
  const receivedAt = new Date().toISOString();
  const whole: NormalizedCall[] = Array.from({ length: calls }, (_, i) => {
    const call = trackCall(`m-${i}`, receivedAt) as unknown as NormalizedCall;
    return { ...call, event: EVENTS[i % EVENTS.length], userId: `user-${(i * 7919) % 1000}`, receivedAt, sentAt: receivedAt };
  });
  const entries: RouteEntry[] = whole.map((c, i) => routeEntryOf(c, 'src-0', i, i - (i % partSize)));
  const texts = new Map<number, string>();
  for (let part = 0; part < calls; part += partSize) texts.set(part, JSON.stringify(whole.slice(part, part + partSize)));
  return { whole, entries, texts };
}

/** The bench's destinations as the services load them (checkConfig), with or without the rules. */
export function benchDestinations(filters: boolean): Destination[] {
  const urls = Array.from({ length: DESTINATIONS }, (_, i) => `http://127.0.0.1:${9000 + i}/d${i}`);
  // Each destination its own copy of the rules, as a parsed config file has them (compiled once each).
  const config = stackConfig(['micro-key'], urls, 'whsec_micro', filters ? JSON.parse(JSON.stringify(FILTER_RULES)) : undefined);
  return checkConfig(config, 'micro').destinations;
}

const cpuUsec = () => {
  const u = process.cpuUsage();
  return u.user + u.system;
};
const median = (xs: readonly number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

/**
 * planRoute on one batch of `calls` track calls, ten destinations connected to their source: no
 * filters, the ten rules each, and the rules with the parse of the whole calls. Each variant warms
 * up, then runs `rounds` rounds of a fixed number of iterations, the variants interleaved round by
 * round so that other load on the machine falls on all three alike; figures are process CPU time.
 */
export function measurePlanRoute(o: { calls?: number; rounds?: number; roundMs?: number } = {}): MicroResult {
  const calls = o.calls ?? 500;
  const rounds = o.rounds ?? 15;
  const { whole, entries, texts } = microBatch(calls, 20);
  const plain = benchDestinations(false);
  const filtered = benchDestinations(true);
  const none = new Map();
  // Every source feeds profiles, as every source did before only audience-read ones fed them: the
  // figures stay comparable with earlier runs.
  const audienced = new Set(entries.map((e) => e.sourceId));
  let sink = 0;
  const variants = {
    no_filters: () => planRoute(entries, () => plain, none, audienced),
    filters: () =>
      planRoute(
        entries,
        () => filtered,
        none,
        audienced,
        (e, d) => refusalsOf(e, [d], whole[e.index])?.get(d.id),
      ),
    filters_with_parse: () => {
      const parsed = new Map<number, NormalizedCall[]>();
      for (const [part, text] of texts) parsed.set(part, JSON.parse(text) as NormalizedCall[]);
      return planRoute(
        entries,
        () => filtered,
        none,
        audienced,
        (e, d) => refusalsOf(e, [d], parsed.get(e.part)?.[e.index - e.part])?.get(d.id),
      );
    },
  };
  // Every call must reach every destination in all three, or the comparison would be of less work.
  for (const [name, run] of Object.entries(variants)) {
    const plan = run();
    if (plan.routedPairs !== calls * DESTINATIONS)
      throw new Error(
        `micro ${name}: ${plan.routedPairs} of ${calls * DESTINATIONS} (call, destination) pairs routed; the rules drop some`,
      );
  }
  // Warm-up (the JIT) of half a CPU second each, which also times an iteration: a round lasts about roundMs for the slowest variant.
  let slowestUsec = 0;
  for (const run of Object.values(variants)) {
    const start = cpuUsec();
    let n = 0;
    for (; cpuUsec() - start < 500_000; n++) sink += run().routedPairs;
    slowestUsec = Math.max(slowestUsec, 500_000 / n);
  }
  const iterations = Math.max(1, Math.round(((o.roundMs ?? 150) * 1000) / slowestUsec));
  const per: Record<keyof typeof variants, number[]> = { no_filters: [], filters: [], filters_with_parse: [] };
  for (let r = 0; r < rounds; r++)
    for (const [name, run] of Object.entries(variants) as [keyof typeof variants, () => { routedPairs: number }][]) {
      const start = cpuUsec();
      for (let i = 0; i < iterations; i++) sink += run().routedPairs;
      per[name].push((cpuUsec() - start) / (iterations * calls));
    }
  if (sink === 0) throw new Error('micro: nothing routed');
  const variant = (xs: number[]): MicroVariant => ({
    usec_per_call: round(median(xs), 3),
    min_usec_per_call: round(Math.min(...xs), 3),
    rounds: xs.map((x) => round(x, 3)),
  });
  return {
    calls_per_batch: calls,
    destinations: DESTINATIONS,
    rules_per_destination: FILTER_RULES.length,
    rounds,
    iterations_per_round: iterations,
    no_filters: variant(per.no_filters),
    filters: variant(per.filters),
    filters_with_parse: variant(per.filters_with_parse),
  };
}
