/**
 * The pipeline detail mode (`pnpm bench:pipeline`): one source, one signed destination, and what
 * each delivered call costs Redis and the CPU. Phases (BENCH_PHASES), each a run of the scenario
 * bench on a fresh system with the Redis figures on:
 *   fixed        BENCH_RATE calls/s offered in batches of BENCH_BATCH_SIZE to /v1/batch (open loop)
 *   saturation   the same batches, closed loop (BENCH_WINDOW calls acknowledged, not yet delivered)
 *   single_call  saturation with one call per request to /v1/track (what browser SDKs send),
 *                over BENCH_SINGLE_CONNECTIONS (128) connections
 *   replicas     batched saturation with a second webhook-delivery process beside the first
 *   baseline     the bare BullMQ → undici chain (baselines/bullmq-chain.ts), same window
 *   fanout10     one source to ten destinations, BENCH_FILTERS_RATE calls/s (150) offered, no filters
 *   filters10    the same with ten filter rules on each destination (filters.ts; they refuse none)
 *   filters_micro  the router's planRoute in this process, without and with the rules (filters.ts)
 * The three filter phases make filters-report.ts's report (issue 22).
 * Redis CPU per delivered call is used_cpu_user + used_cpu_sys over the window divided by the calls
 * delivered in it; the one-core ceiling is 1,000,000 µs ÷ that.
 */
import type { ChaosProcess } from '@eventrelay/testkit';
import { runChain, type ChainResult } from './chain.js';
import { envNumber, fmtFixed, fmtInt, fmtMs, roundOrNull, table, targetsLine } from './report.js';
import { runScenario, type RunResult, type RunSettings } from './run.js';
import { FILTER_RULES, measurePlanRoute, type MicroResult } from './filters.js';
import { PIPELINE, PIPELINE_FANOUT } from './scenarios.js';

/** Every phase BENCH_PHASES can name; without it, DEFAULT_PHASES run. */
export const PHASES = ['fixed', 'saturation', 'single_call', 'replicas', 'baseline', 'fanout10', 'filters10', 'filters_micro'] as const;
export const DEFAULT_PHASES: readonly Phase[] = [...PHASES];
export const FILTER_PHASES = ['fanout10', 'filters10', 'filters_micro'] as const;
type Phase = (typeof PHASES)[number];
type StackPhase = Exclude<Phase, 'filters_micro'>;
type Figures = ChainResult &
  Partial<
    Pick<
      RunResult,
      'verification' | 'receiver' | 'refused_batches' | 'transport_errors' | 'intake_status_codes' | 'settle_s' | 'offered_calls_per_s'
    >
  >;
const singleConnections = () => envNumber('BENCH_SINGLE_CONNECTIONS', 128, 1, 4000);
/** Calls/s offered in fanout10 and filters10 (each goes to ten destinations). */
export const filtersRate = (): number => envNumber('BENCH_FILTERS_RATE', 150, 1, 100_000);

/** Issue 16's targets: Redis per delivered call, throughput against the bare chain of the same run (machines vary by 1.7x from day to day), latency at a fixed rate. */
const TARGET = {
  redisUsecPerCall: 25,
  redisCommandsPerCall: 8,
  singleRedisUsecPerCall: 40,
  deliveredCallsPerS: 8000,
  ratioToBaseline: 1.3,
  singleDeliveredCallsPerS: 3000,
  singleVsBefore: 2,
  fixedP99Ms: 50,
};

/** The single-call phase of the code before batched jobs (one job per call and destination), run by this bench on the bench machine on 2026-11-23. */
const BEFORE_BATCHING = {
  date: '2026-11-23T04:04:00.698Z',
  delivered_calls_per_s: 2036,
  redis_usec_per_call: 281.765,
  redis_commands_per_call: 74.637,
  redis_ceiling_calls_per_s: 3549,
  ratio_to_baseline: 0.275,
  p99_ms: 2292.54,
  intake_request_p99_ms: 79.21,
};

export async function runPipeline(
  phases: readonly Phase[],
  s: RunSettings,
  receiver: ChaosProcess,
): Promise<{ results: Partial<Record<StackPhase, Figures>>; micro?: MicroResult }> {
  const out: Partial<Record<StackPhase, Figures>> = {};
  let micro: MicroResult | undefined;
  for (const phase of phases) {
    process.stderr.write(`bench: pipeline ${phase}\n`);
    if (phase === 'filters_micro') {
      micro = measurePlanRoute();
      process.stderr.write(
        `bench:   planRoute ${micro.no_filters.usec_per_call} µs/call without filters, ${micro.filters.usec_per_call} with the rules, ${micro.filters_with_parse.usec_per_call} with the parse\n`,
      );
      continue;
    }
    const r = (out[phase] =
      phase === 'baseline'
        ? await runChain(s, receiver, { detail: true })
        : phase === 'fanout10' || phase === 'filters10'
          ? await runScenario(PIPELINE_FANOUT, 'fixed', { ...s, rate: filtersRate() }, receiver, {
              detail: true,
              label: phase,
              ...(phase === 'filters10' ? { filters: FILTER_RULES } : {}),
            })
          : await runScenario(PIPELINE, phase === 'fixed' ? 'fixed' : 'saturation', s, receiver, {
              detail: true,
              ...(phase === 'single_call' ? { single: true, connections: singleConnections() } : {}),
              ...(phase === 'replicas' ? { deliveries: 2 } : {}),
            }));
    const redis = r.detail?.redis;
    process.stderr.write(
      `bench:   ${fmtInt(r.delivered_calls_per_s)} delivered calls/s, p99 ${fmtMs(r.latency_ms.p99)} ms, Redis ${redis?.cpu_usec_per_call ?? '-'} µs and ${redis?.commands_per_call ?? '-'} commands per call\n`,
    );
  }
  return { results: out, ...(micro ? { micro } : {}) };
}

/** Per delivered call: what Redis costs, and what one Redis core could carry at that cost. */
function redisFigures(r: Figures | undefined) {
  const usec = r?.detail?.redis.cpu_usec_per_call ?? null;
  return {
    delivered_calls_per_s: r ? r.delivered_calls_per_s : null,
    redis_usec_per_call: usec,
    redis_commands_per_call: r?.detail?.redis.commands_per_call ?? null,
    redis_ceiling_calls_per_s: usec ? Math.round(1e6 / usec) : null,
  };
}

/** pipeline-latest.json (its keys are read elsewhere: keep them) and the terminal report. */
export function pipelineReport(
  results: Partial<Record<StackPhase, Figures>>,
  ctx: { date: string; settings: RunSettings & { redisMode: string }; machine: Record<string, unknown> },
): { json: Record<string, unknown>; text: string; allMet: boolean } {
  const { fixed, saturation: sat, single_call: single, replicas, baseline: base } = results;
  const s = ctx.settings;
  const ratioOf = (r: Figures | undefined) =>
    r && base?.delivered_calls_per_s ? r.delivered_calls_per_s / base.delivered_calls_per_s : undefined;
  const [ratio, singleRatio] = [ratioOf(sat), ratioOf(single)];
  const singleVsBefore = single ? single.delivered_calls_per_s / BEFORE_BATCHING.delivered_calls_per_s : undefined;
  const singleRatioVsBefore = singleRatio === undefined ? undefined : singleRatio / BEFORE_BATCHING.ratio_to_baseline;
  const perReplica = Object.entries(replicas?.detail?.service_counters ?? {})
    .filter(([k]) => /^delivery_\d+_delivered$/.test(k))
    .sort()
    .map(([, v]) => v);
  const usec = (r: Figures | undefined) => r?.detail?.redis.cpu_usec_per_call;
  const commands = (r: Figures | undefined) => r?.detail?.redis.commands_per_call;
  const below = (v: number | null | undefined, max: number) => (v == null ? undefined : v <= max);
  const met = {
    redis_usec_per_call: below(usec(sat), TARGET.redisUsecPerCall),
    redis_commands_per_call: below(commands(sat), TARGET.redisCommandsPerCall),
    single_call_redis_usec_per_call: below(usec(single), TARGET.singleRedisUsecPerCall),
    delivered_calls_per_s:
      sat && ratio !== undefined ? sat.delivered_calls_per_s >= TARGET.deliveredCallsPerS || ratio >= TARGET.ratioToBaseline : undefined,
    single_call_delivered_calls_per_s:
      single && singleRatioVsBefore !== undefined
        ? single.delivered_calls_per_s >= TARGET.singleDeliveredCallsPerS && singleRatioVsBefore >= TARGET.singleVsBefore
        : undefined,
    fixed_rate_p99_ms: fixed?.latency_ms.p99 != null ? fixed.latency_ms.p99 < TARGET.fixedP99Ms : undefined,
    replicas_share_and_lose_nothing: replicas
      ? perReplica.length >= 2 && perReplica.every((k) => k > 0) && replicas.verification?.lost === 0
      : undefined,
  };
  const targets = targetsLine(met);

  const phases = Object.entries(results) as [StackPhase, Figures][];
  const usecOf = (r: Figures) => Object.fromEntries(Object.entries(r.cpu_usec_per_delivered_call).filter(([k]) => k !== 'sum'));
  const cpuNames = [...new Set(phases.flatMap(([, r]) => Object.keys(usecOf(r))))];
  const byCommand = (r: Figures, c: string) => r.detail?.redis.by_command.find((x) => x.command === c);
  const commandNames = [
    ...new Set(
      phases.flatMap(([, r]) => (r.detail?.redis.by_command ?? []).filter((c) => (c.per_call ?? 0) >= 0.05).map((c) => c.command)),
    ),
  ];
  const header = ['phase', 'offered calls/s', 'accepted calls/s', 'delivered calls/s', 'p50 ms', 'p99 ms', 'max ms', 'intake p99 ms'];
  const text = [
    table(
      [...header, 'redis cmds/call', 'redis µs/call', 'one Redis core, calls/s'],
      phases.map(([p, r]) => [
        ...[p, fmtInt(r.offered_calls_per_s), fmtInt(r.accepted_calls_per_s), fmtInt(r.delivered_calls_per_s)],
        ...[fmtMs(r.latency_ms.p50), fmtMs(r.latency_ms.p99), fmtMs(r.latency_ms.max), fmtMs(r.detail?.intake_request_ms?.p99)],
        ...[fmtFixed(commands(r)), fmtFixed(usec(r)), fmtInt(redisFigures(r).redis_ceiling_calls_per_s)],
      ]),
    ),
    '\nCPU µs per delivered call (less sensitive to other load on the machine than calls/s):',
    table(
      ['phase', ...cpuNames, 'sum'],
      phases.map(([p, r]) => [p, ...cpuNames.map((k) => fmtInt(usecOf(r)[k])), fmtInt(r.cpu_usec_per_delivered_call['sum'])]),
    ),
    '\nRedis commands per delivered call (whole server; commands inside Lua scripts count, and evalsha µs include them):',
    table(
      ['command', ...phases.map(([p]) => `${p} /call`), ...phases.map(([p]) => `${p} µs/call`)],
      commandNames.map((c) => [
        c,
        ...phases.map(([, r]) => fmtFixed(byCommand(r, c)?.per_call)),
        ...phases.map(([, r]) => fmtFixed(byCommand(r, c)?.usec_per_call)),
      ]),
    ),
    '',
    ...phases.map(([p, r]) => {
      const queues = Object.entries(r.detail?.queue_lengths ?? {}).map(([k, v]) => `${k} ${fmtInt(v.mean)} (max ${fmtInt(v.max)})`);
      const v = r.verification;
      return `${p}: queues ${queues.join(', ')}${v ? `; lost ${v.lost}, duplicates ${v.duplicates}, bad signatures ${r.receiver?.bad_signatures}` : ''}`;
    }),
    ...(replicas ? [`replicas: delivered calls per webhook-delivery process in the window: ${perReplica.map(fmtInt).join(', ')}`] : []),
    `batches / bare chain: ${fmtFixed(ratio, 3)}; single calls / bare chain: ${fmtFixed(singleRatio, 3)}; single calls vs the code before batched jobs: ${fmtFixed(singleVsBefore)}x the calls/s, ${fmtFixed(singleRatioVsBefore)}x the ratio`,
    targets.line,
  ].join('\n');

  const phaseJson = (r: Figures) => ({
    measured_s: r.measured_s,
    offered_calls_per_s: r.offered_calls_per_s ?? null,
    accepted_calls_per_s: r.accepted_calls_per_s,
    delivered_calls_per_s: r.delivered_calls_per_s,
    delivered_calls: Math.round(r.delivered_calls_per_s * r.measured_s),
    ...{
      p50_ms: r.latency_ms.p50,
      p90_ms: r.latency_ms.p90,
      p99_ms: r.latency_ms.p99,
      max_ms: r.latency_ms.max,
      mean_ms: r.detail?.mean_ms ?? null,
    },
    redis_commands_per_call: commands(r) ?? null,
    redis_usec_per_call: usec(r) ?? null,
    intake_request_ms: r.detail?.intake_request_ms ?? null,
    refused_batches: r.refused_batches ?? 0,
    errors: r.transport_errors ?? 0,
    status_codes: r.intake_status_codes ?? {},
    // The bare chain does not sign, so its signature counts mean nothing.
    receiver_checks: {
      bad_signatures: r.receiver?.bad_signatures ?? null,
      unsigned: r.receiver?.unsigned ?? null,
      duplicates: r.verification?.duplicates ?? null,
      lost: r.verification?.lost ?? null,
    },
    redis: r.detail?.redis ?? null,
    cpu_pct: r.cpu_pct,
    cpu_usec_per_call: r.cpu_usec_per_delivered_call,
    queue_lengths: r.detail?.queue_lengths ?? {},
    service_counters: r.detail?.service_counters ?? null,
    drain: { seconds: r.settle_s ?? null, undelivered: r.verification?.lost ?? null },
    peak_rss_mb: r.peak_rss_mb,
  });
  const peak: Record<string, number> = {};
  for (const [, r] of phases) for (const [k, v] of Object.entries(r.peak_rss_mb)) peak[k] = Math.max(peak[k] ?? 0, v);
  const json = {
    date: ctx.date,
    duration_s: s.durationS,
    warmup_s: s.warmupS,
    batch_size: s.batchSize,
    fixed_rate_offered_calls_per_s: s.rate,
    saturation_window_calls: s.windowCalls,
    loadgen_connections: s.connections,
    loadgen_single_call_connections: singleConnections(),
    delivery_concurrency: Number(process.env['DELIVERY_CONCURRENCY'] ?? 256),
    delivery_connections_per_origin: Number(process.env['DELIVERY_CONNECTIONS_PER_ORIGIN'] ?? 64),
    log_level: s.logLevel,
    redis_mode: s.redisMode,
    phases: phases.map(([p]) => p),
    ...redisFigures(sat),
    ratio_to_baseline: roundOrNull(ratio, 3),
    p50_ms: sat?.latency_ms.p50 ?? null,
    p99_ms: sat?.latency_ms.p99 ?? null,
    single_call: single
      ? {
          ...redisFigures(single),
          ratio_to_baseline: roundOrNull(singleRatio, 3),
          p99_ms: single.latency_ms.p99,
          intake_request_p99_ms: single.detail?.intake_request_ms?.p99 ?? null,
          before_batching: BEFORE_BATCHING,
          vs_before: roundOrNull(singleVsBefore),
          ratio_vs_before: roundOrNull(singleRatioVsBefore),
        }
      : null,
    replicas: replicas
      ? {
          delivered_calls_per_s: replicas.delivered_calls_per_s,
          delivered_per_replica: perReplica,
          undelivered_after_drain: replicas.verification?.lost ?? null,
          duplicates: replicas.verification?.duplicates ?? null,
          redis_usec_per_call: usec(replicas) ?? null,
        }
      : null,
    fixed_rate: fixed
      ? {
          offered_calls_per_s: s.rate,
          delivered_calls_per_s: fixed.delivered_calls_per_s,
          ...{ p50_ms: fixed.latency_ms.p50, p90_ms: fixed.latency_ms.p90, p99_ms: fixed.latency_ms.p99, max_ms: fixed.latency_ms.max },
          redis_commands_per_call: commands(fixed) ?? null,
          redis_usec_per_call: usec(fixed) ?? null,
        }
      : null,
    fixed_rate_p50_ms: fixed?.latency_ms.p50 ?? null,
    fixed_rate_p99_ms: fixed?.latency_ms.p99 ?? null,
    baseline: base ? base.delivered_calls_per_s : null,
    baseline_chain: base
      ? {
          delivered_calls_per_s: base.delivered_calls_per_s,
          p50_ms: base.latency_ms.p50,
          p99_ms: base.latency_ms.p99,
          redis_commands_per_call: commands(base) ?? null,
          redis_usec_per_call: usec(base) ?? null,
        }
      : null,
    peak_rss_mb: peak,
    targets: {
      redis_usec_per_call_max: TARGET.redisUsecPerCall,
      redis_commands_per_call_max: TARGET.redisCommandsPerCall,
      single_call_redis_usec_per_call_max: TARGET.singleRedisUsecPerCall,
      delivered_calls_per_s_min: TARGET.deliveredCallsPerS,
      ratio_to_baseline_min: TARGET.ratioToBaseline,
      single_call_delivered_calls_per_s_min: TARGET.singleDeliveredCallsPerS,
      single_call_vs_before_min: TARGET.singleVsBefore,
      fixed_rate_p99_ms_max: TARGET.fixedP99Ms,
      met: { ...met, all: targets.all },
    },
    machine: ctx.machine,
    notes:
      'Everything on one machine; each phase on a fresh system. Top-level delivered_calls_per_s, redis_usec_per_call, redis_commands_per_call, redis_ceiling_calls_per_s (1,000,000 / redis_usec_per_call), ratio_to_baseline, p50_ms and p99_ms are the batched saturation phase; ' +
      'single_call the same for one call per request (POST /v1/track), compared with the code before batched jobs (before_batching, measured by this bench the same day); fixed_rate the 1,000 calls/s phase; replicas the batched saturation phase with two webhook-delivery processes; baseline the bare chain. ' +
      'Latency is the first 2xx arrival minus the send time the load generator put in each call. Redis commands are whole-server INFO commandstats deltas and include the commands Lua scripts run; redis_usec_per_call is Redis CPU (used_cpu_user + used_cpu_sys) per delivered call. cpu_pct is percent of one core.',
    details: Object.fromEntries(phases.map(([p, r]) => [p, { label: p, ...phaseJson(r) }])),
  };
  return { json, text, allMet: targets.all };
}
