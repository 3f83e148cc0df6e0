/**
 * The filter cost report of `pnpm bench:pipeline` (issue 22): the router's CPU per routed call
 * with ten destinations on one source, without filters (fanout10) and with ten rules on each
 * (filters10), both at the same fixed rate in the same bench run, their difference per call and
 * per call × destination against the target; the same for webhook-delivery per delivered call
 * (the field rules apply there; informational); and the in-process planRoute figures. Pure.
 */
import type { MicroResult } from './filters.js';
import { fmtFixed, fmtInt, round, roundOrNull, table, verdict } from './report.js';

/** Issue 22: "under 10 µs added per call × destination", as a difference against a baseline of the same run. */
const FILTER_TARGET_USEC_PER_CALL_X_DESTINATION = 10;

/** What the report reads of a pipeline phase's figures (RunResult). */
export interface FilterPhase {
  readonly measured_s: number;
  readonly offered_calls_per_s?: number | null;
  readonly accepted_calls_per_s: number;
  /** (call, destination) pairs: first 2xx arrivals per second over the ten receivers. */
  readonly delivered_calls_per_s: number;
  readonly latency_ms: { readonly p99: number | null };
  /** % of one core per process over the measured window. */
  readonly cpu_pct: Readonly<Record<string, number>>;
  readonly verification?: { readonly acknowledged: number; readonly delivered: number; readonly lost: number; readonly duplicates: number };
  readonly detail?: {
    readonly redis: { readonly cpu_usec_per_call: number | null; readonly by_command: readonly { command: string; calls: number }[] };
    /** The services' own counters over the window (router_routed_calls: calls routed). */
    readonly service_counters: Readonly<Record<string, number>> | null;
  };
}

/** CPU µs of `proc` over the window per unit of work (`units` in the window); undefined without a reading. */
function cpuUsecPer(r: FilterPhase, proc: string, units: number): number | undefined {
  const pct = r.cpu_pct[proc];
  return pct === undefined || units <= 0 ? undefined : ((pct / 100) * 1e6 * r.measured_s) / units;
}

/**
 * One phase's figures: router, ingest and Redis per call routed in the window (the router's own
 * count, else the calls accepted), webhook-delivery per (call, destination) delivered in it.
 */
export function phaseFigures(r: FilterPhase) {
  const deliveries = r.delivered_calls_per_s * r.measured_s;
  const calls = r.detail?.service_counters?.['router_routed_calls'] || r.accepted_calls_per_s * r.measured_s;
  const per = (proc: string) => roundOrNull(cpuUsecPer(r, proc, calls), 2);
  const perDelivery = (proc: string) => roundOrNull(cpuUsecPer(r, proc, deliveries), 2);
  // Redis CPU over the window is the detail's per delivered call times the deliveries.
  const redisUsec = r.detail?.redis.cpu_usec_per_call == null ? undefined : r.detail.redis.cpu_usec_per_call * deliveries;
  const hmget = r.detail?.redis.by_command.find((c) => c.command === 'hmget')?.calls;
  return {
    offered_calls_per_s: r.offered_calls_per_s ?? null,
    accepted_calls_per_s: r.accepted_calls_per_s,
    delivered_per_s: r.delivered_calls_per_s,
    routed_calls_per_s: round(calls / r.measured_s, 1),
    p99_ms: r.latency_ms.p99,
    router_usec_per_call: per('router'),
    /** Deliveries over calls routed: 10 while webhook-delivery keeps up with the load (else the delivery figures are of a backlog). */
    deliveries_per_routed_call: round(deliveries / calls, 2),
    delivery_usec_per_delivered_call: perDelivery('webhook-delivery'),
    ingest_usec_per_call: per('ingest'),
    redis_usec_per_call: redisUsec === undefined || calls <= 0 ? null : round(redisUsec / calls, 2),
    /** HMGETs of all the services per call (webhook-delivery reads its calls with one too); the difference is the router's whole-call reads. */
    hmget_per_call: hmget === undefined || calls <= 0 ? null : round(hmget / calls, 3),
    router_cpu_pct: r.cpu_pct['router'] ?? null,
    delivery_cpu_pct: r.cpu_pct['webhook-delivery'] ?? null,
    machine_cpu_pct: r.cpu_pct['machine'] ?? null,
    lost: r.verification?.lost ?? null,
    duplicates: r.verification?.duplicates ?? null,
  };
}

const diff = (a: number | null, b: number | null, digits = 2) => (a === null || b === null ? null : round(a - b, digits));
const perDestination = (v: number | null, destinations: number) => (v === null ? null : round(v / destinations, 3));

export function filtersReport(
  input: { fanout?: FilterPhase; filters?: FilterPhase; micro?: MicroResult },
  ctx: { destinations: number; rules: number; rate: number },
): { json: Record<string, unknown>; text: string; met: Record<string, boolean | undefined> } {
  const { destinations } = ctx;
  const target = FILTER_TARGET_USEC_PER_CALL_X_DESTINATION;
  const base = input.fanout && phaseFigures(input.fanout);
  const with_ = input.filters && phaseFigures(input.filters);
  const routerAdded = base && with_ ? diff(with_.router_usec_per_call, base.router_usec_per_call) : null;
  const deliveryAdded = base && with_ ? diff(with_.delivery_usec_per_delivered_call, base.delivery_usec_per_delivered_call) : null;
  const pipeline =
    base && with_
      ? {
          router_added_usec_per_call: routerAdded,
          router_added_usec_per_call_x_destination: perDestination(routerAdded, destinations),
          delivery_added_usec_per_delivered_call: deliveryAdded,
          redis_added_usec_per_call: diff(with_.redis_usec_per_call, base.redis_usec_per_call),
        }
      : null;
  const m = input.micro;
  const microAdded = m ? round(m.filters.usec_per_call - m.no_filters.usec_per_call, 3) : null;
  const microParseAdded = m ? round(m.filters_with_parse.usec_per_call - m.no_filters.usec_per_call, 3) : null;
  const micro = m
    ? {
        ...m,
        added_usec_per_call: microAdded,
        added_usec_per_call_x_destination: perDestination(microAdded, destinations),
        with_parse_added_usec_per_call: microParseAdded,
        with_parse_added_usec_per_call_x_destination: perDestination(microParseAdded, destinations),
      }
    : null;
  const under = (v: number | null | undefined) => (v == null ? undefined : v < target);
  const met = {
    filters_pipeline_router_added_usec_per_call_x_destination: under(pipeline?.router_added_usec_per_call_x_destination),
    filters_micro_added_usec_per_call_x_destination: under(micro?.with_parse_added_usec_per_call_x_destination),
  };

  const lines: string[] = [];
  if (base || with_) {
    const rows: [string, ReturnType<typeof phaseFigures> | undefined][] = [
      ['fanout10', base],
      ['filters10', with_],
    ];
    const cells = (f: ReturnType<typeof phaseFigures>) => [
      fmtInt(f.routed_calls_per_s),
      fmtInt(f.delivered_per_s),
      fmtFixed(f.router_usec_per_call),
      fmtFixed(f.delivery_usec_per_delivered_call),
      fmtFixed(f.redis_usec_per_call),
      fmtFixed(f.hmget_per_call, 3),
      fmtFixed(f.p99_ms, 1),
      f.lost === null ? '-' : String(f.lost),
    ];
    lines.push(
      `\nFilters (issue 22): ${destinations} destinations on one source, ${fmtInt(ctx.rate)} calls/s offered; filters10 gives each ${ctx.rules} rules:`,
      table(
        [
          'phase',
          'calls/s',
          'deliveries/s',
          'router µs/call',
          'delivery µs/delivery',
          'redis µs/call',
          'HMGETs/call (all)',
          'p99 ms',
          'lost',
        ],
        rows.filter((r): r is [string, ReturnType<typeof phaseFigures>] => r[1] !== undefined).map(([p, f]) => [p, ...cells(f)]),
      ),
    );
    if (pipeline)
      lines.push(
        `router: ${fmtFixed(with_?.router_usec_per_call)} - ${fmtFixed(base?.router_usec_per_call)} = ${fmtFixed(routerAdded)} µs added per call, ` +
          `${fmtFixed(pipeline.router_added_usec_per_call_x_destination, 3)} µs per call × destination (target < ${target}): ` +
          verdict(met.filters_pipeline_router_added_usec_per_call_x_destination),
        `webhook-delivery (field rules; informational): ${fmtFixed(deliveryAdded)} µs added per delivered call × destination`,
      );
  }
  if (micro)
    lines.push(
      `planRoute in process (${micro.calls_per_batch} calls, ${destinations} destinations, median of ${micro.rounds} rounds): ` +
        `no filters ${fmtFixed(micro.no_filters.usec_per_call, 3)} µs/call, the rules ${fmtFixed(micro.filters.usec_per_call, 3)}, ` +
        `with the whole calls' parse ${fmtFixed(micro.filters_with_parse.usec_per_call, 3)}; added per call × destination ` +
        `${fmtFixed(micro.added_usec_per_call_x_destination, 3)} µs, ${fmtFixed(micro.with_parse_added_usec_per_call_x_destination, 3)} with the parse ` +
        `(target < ${target}): ${verdict(met.filters_micro_added_usec_per_call_x_destination)}`,
    );
  const json = {
    destinations,
    rules_per_destination: ctx.rules,
    offered_calls_per_s: ctx.rate,
    fanout10: base ?? null,
    filters10: with_ ?? null,
    pipeline,
    micro,
    target_usec_per_call_x_destination_max: target,
    met,
  };
  return { json, text: lines.join('\n'), met };
}
