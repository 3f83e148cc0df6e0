/**
 * What `pnpm bench` concludes from its runs: the targets of the performance issue checked against
 * the figures (pure), and the Markdown table the README quotes.
 */
import type { RunResult } from './run.js';
import { fmtInt, fmtMs } from './report.js';
import { DESTINATIONS, routeOf } from './scenarios.js';
import { trend } from './series.js';
import { STACK_SERVICES } from './stack.js';

export interface Baselines {
  /** Bare Node HTTP server answering 200: the most calls/s this load generator can push through HTTP here. */
  readonly bare_http_calls_per_s: number | null;
  /** BullMQ producer → worker → undici POST to the same receiver: the most a queue-backed delivery chain does here. */
  readonly bullmq_chain_delivered_per_s: number | null;
  readonly bullmq_chain_p99_ms: number | null;
}

export interface Target {
  readonly name: string;
  readonly wanted: string;
  readonly measured: string;
  /** undefined: not measured in this run. */
  readonly met: boolean | undefined;
}

const SERVICES: ReadonlySet<string> = new Set(STACK_SERVICES);

const TARGET = {
  healthyDeliveredPerS: 3000,
  healthyP99Ms: 250,
  isolationShare: 0.8,
  isolationP99Ms: 1000,
  flakyCpuExplained: 0.9,
  rssGrowth: 0.1,
  redisGrowth: 0.1,
};

export function find(runs: readonly RunResult[], scenario: string, mode: string): RunResult | undefined {
  return runs.find((r) => r.scenario === scenario && r.mode === mode);
}

const sumRoutes = (r: RunResult, routes: readonly string[]) =>
  routes.reduce((n, route) => n + (r.per_destination[route]?.delivered_calls_per_s ?? 0), 0);

export function evaluateTargets(runs: readonly RunResult[]): Target[] {
  const out: Target[] = [];
  const healthySat = find(runs, 'healthy', 'saturation');
  const healthyFixed = find(runs, 'healthy', 'fixed');
  out.push({
    name: 'healthy: delivered calls/s at saturation',
    wanted: `>= ${fmtInt(TARGET.healthyDeliveredPerS)}`,
    measured: healthySat ? fmtInt(healthySat.delivered_calls_per_s) : '-',
    met: healthySat ? healthySat.delivered_calls_per_s >= TARGET.healthyDeliveredPerS : undefined,
  });
  const p99 = healthyFixed?.latency_ms.p99 ?? null;
  out.push({
    name: `healthy: end-to-end p99 at ${healthyFixed ? fmtInt(healthyFixed.offered_calls_per_s ?? 0) : '1,000'} calls/s`,
    wanted: `< ${TARGET.healthyP99Ms} ms`,
    measured: p99 === null ? '-' : `${fmtMs(p99)} ms`,
    met: p99 === null ? undefined : p99 < TARGET.healthyP99Ms,
  });

  const flaky = runs.filter((r) => r.scenario === 'flaky');
  out.push({
    name: 'flaky: every acknowledged call delivered',
    wanted: 'delivered = acknowledged',
    measured: flaky.map((r) => `${r.mode} ${fmtInt(r.verification.delivered)}/${fmtInt(r.verification.acknowledged)}`).join(', ') || '-',
    met: flaky.length === 0 ? undefined : flaky.every((r) => r.verification.delivered === r.verification.acknowledged),
  });
  const flakySat = find(runs, 'flaky', 'saturation');
  const cpuOf = (r: RunResult | undefined) => r?.cpu_usec_per_delivered_call['sum'];
  if (healthySat && flakySat && cpuOf(healthySat) && cpuOf(flakySat)) {
    // At saturation the machine is CPU-bound: throughput should fall by no more than the extra CPU per delivered call.
    const expected = healthySat.delivered_calls_per_s * ((cpuOf(healthySat) as number) / (cpuOf(flakySat) as number));
    out.push({
      name: 'flaky: saturation throughput vs. what the retries cost in CPU',
      wanted: `>= ${TARGET.flakyCpuExplained * 100}% of healthy x CPU ratio (${fmtInt(expected)}/s)`,
      measured: `${fmtInt(flakySat.delivered_calls_per_s)}/s (${Math.round((flakySat.delivered_calls_per_s / expected) * 100)}%)`,
      met: flakySat.delivered_calls_per_s >= TARGET.flakyCpuExplained * expected,
    });
  } else out.push({ name: 'flaky: saturation throughput vs. what the retries cost in CPU', wanted: '-', measured: '-', met: undefined });

  const deadSat = find(runs, 'dead-1-of-10', 'saturation');
  const deadFixed = find(runs, 'dead-1-of-10', 'fixed');
  const nine = Array.from({ length: DESTINATIONS - 1 }, (_, i) => routeOf(i));
  if (deadSat && healthySat) {
    const share = sumRoutes(deadSat, nine) / Math.max(1, sumRoutes(healthySat, nine));
    out.push({
      name: 'dead 1 of 10: the 9 healthy destinations keep their saturation throughput',
      wanted: `>= ${TARGET.isolationShare * 100}%`,
      measured: `${fmtInt(sumRoutes(deadSat, nine))} vs ${fmtInt(sumRoutes(healthySat, nine))}/s (${Math.round(share * 100)}%)`,
      met: share >= TARGET.isolationShare,
    });
  } else
    out.push({
      name: 'dead 1 of 10: the 9 healthy destinations keep their saturation throughput',
      wanted: `>= ${TARGET.isolationShare * 100}%`,
      measured: '-',
      met: undefined,
    });
  const deadP99 = deadFixed?.healthy_latency_ms.p99 ?? null;
  out.push({
    name: 'dead 1 of 10: p99 lag of the 9 healthy destinations (fixed rate)',
    wanted: `< ${fmtInt(TARGET.isolationP99Ms)} ms`,
    measured: deadP99 === null ? '-' : `${fmtMs(deadP99)} ms`,
    met: deadP99 === null ? undefined : deadP99 < TARGET.isolationP99Ms,
  });

  const crash = runs.filter((r) => r.scenario === 'delivery-killed' || r.scenario === 'redis-restarted');
  out.push({
    name: 'crash and restart: zero acknowledged calls lost',
    wanted: 'lost = 0 (duplicates reported)',
    measured:
      crash.map((r) => `${r.scenario} ${r.mode}: lost ${r.verification.lost}, duplicates ${r.verification.duplicates}`).join('; ') || '-',
    met: crash.length === 0 ? undefined : crash.every((r) => r.verification.lost === 0),
  });
  const hostile = runs.filter((r) => r.scenario === 'hostile');
  out.push({
    name: 'hostile: self-signed TLS, redirect and slow-body calls dead-lettered, no request over TLS, the rest delivered',
    wanted: 'as designed',
    measured:
      hostile
        .map((r) => `${r.mode}: ${r.expectation_failures.length === 0 ? 'as designed' : r.expectation_failures.join('; ')}`)
        .join(', ') || '-',
    met: hostile.length === 0 ? undefined : hostile.every((r) => r.expectation_failures.length === 0),
  });
  out.push({
    name: 'every scenario: zero acknowledged calls lost, and its expectations held',
    wanted: 'lost = 0',
    measured: `${runs.reduce((n, r) => n + r.verification.lost, 0)} lost, ${runs.filter((r) => r.expectation_failures.length > 0).length} runs off their expectations, over ${runs.length} runs`,
    met: runs.length === 0 ? undefined : runs.every((r) => r.passed),
  });

  const soak = find(runs, 'healthy', 'soak');
  for (const t of soakTargets(soak)) out.push(t);
  return out;
}

/** RSS flat within 10% per process, and Redis memory flat once the retention windows are full. */
function soakTargets(soak: RunResult | undefined): Target[] {
  if (!soak?.memory_timeline) return [{ name: 'soak: RSS flat, Redis memory bounded', wanted: '-', measured: 'not run', met: undefined }];
  const out: Target[] = [];
  const growths: string[] = [];
  let flat = true;
  for (const [name, points] of Object.entries(soak.memory_timeline)) {
    // The services only: the receiver and the load generator keep a record per call by design, and
    // Redis is held to its retention below.
    if (!SERVICES.has(name)) continue;
    // The first minute is warm-up: heaps and pools grow to their working size there.
    const t = trend(points.filter(([s]) => s >= 60));
    growths.push(`${name} ${t.growth >= 0 ? '+' : ''}${Math.round(t.growth * 1000) / 10}%`);
    if (t.growth > TARGET.rssGrowth) flat = false;
  }
  out.push({
    name: 'soak: RSS trend per process after the first minute',
    wanted: `<= +${TARGET.rssGrowth * 100}%`,
    measured: growths.join(', '),
    met: flat,
  });
  const redis = soak.memory_timeline['redis used_memory'] ?? [];
  const span = redis.length > 0 ? (redis[redis.length - 1]?.[0] ?? 0) : 0;
  // The retention windows (dedupe keys) fill in the first half; after that, memory must stop growing.
  const t = trend(redis.filter(([s]) => s >= span / 2));
  out.push({
    name: 'soak: Redis used memory over the second half (retention windows full)',
    wanted: `<= +${TARGET.redisGrowth * 100}%`,
    measured: `${t.growth >= 0 ? '+' : ''}${Math.round(t.growth * 1000) / 10}% (${fmtInt(t.first)} -> ${fmtInt(t.last)} MB)`,
    met: t.growth <= TARGET.redisGrowth,
  });
  return out;
}

/** Rows shared by the terminal and Markdown tables. */
export function tableRows(runs: readonly RunResult[]): { header: string[]; rows: string[][] } {
  const header = [
    'scenario',
    'mode',
    'offered/s',
    'accepted/s',
    'delivered/s',
    'healthy dest. delivered/s',
    'p50 ms',
    'p99 ms',
    'p99.9 ms',
    'healthy dest. p99 ms',
    'acknowledged',
    'delivered',
    'dead-lettered',
    'duplicates',
    'lost',
  ];
  const rows = runs.map((r) => [
    r.scenario,
    r.mode,
    r.offered_calls_per_s === null ? 'max' : fmtInt(r.offered_calls_per_s),
    fmtInt(r.accepted_calls_per_s),
    fmtInt(r.delivered_calls_per_s),
    fmtInt(r.healthy_delivered_calls_per_s),
    fmtMs(r.latency_ms.p50 ?? undefined),
    fmtMs(r.latency_ms.p99 ?? undefined),
    fmtMs(r.latency_ms.p999 ?? undefined),
    fmtMs(r.healthy_latency_ms.p99 ?? undefined),
    fmtInt(r.verification.acknowledged),
    fmtInt(r.verification.delivered),
    fmtInt(r.verification.dead_lettered),
    fmtInt(r.verification.duplicates),
    fmtInt(r.verification.lost),
  ]);
  return { header, rows };
}

export function markdownTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const line = (cells: readonly string[]) => `| ${cells.map((c) => c.replace(/\|/g, '\\|')).join(' | ')} |`;
  return [line(header), line(header.map((_, i) => (i < 2 ? '---' : '---:'))), ...rows.map(line)].join('\n');
}

export function markdownReport(ctx: {
  date: string;
  runs: readonly RunResult[];
  baselines: Baselines;
  targets: readonly Target[];
  machine: string;
  command: string;
  charts: readonly string[];
}): string {
  const { header, rows } = tableRows(ctx.runs);
  const peak: Record<string, number> = {};
  for (const r of ctx.runs) for (const [name, mb] of Object.entries(r.peak_rss_mb)) peak[name] = Math.max(peak[name] ?? 0, mb);
  const lines = [
    `# eventrelay benchmark, ${ctx.date}`,
    '',
    `Machine: ${ctx.machine}. Reproduce: \`${ctx.command}\`.`,
    '',
    markdownTable(header, rows),
    '',
    `Baselines in the same run: bare Node HTTP server ${fmtInt(ctx.baselines.bare_http_calls_per_s ?? NaN)} calls/s through the same load generator; ` +
      `minimal BullMQ → undici chain ${fmtInt(ctx.baselines.bullmq_chain_delivered_per_s ?? NaN)} delivered/s (p99 ${fmtMs(ctx.baselines.bullmq_chain_p99_ms ?? undefined)} ms).`,
    '',
    markdownTable(
      ['target', 'wanted', 'measured', 'verdict'],
      ctx.targets.map((t) => [t.name, t.wanted, t.measured, t.met === undefined ? 'not measured' : t.met ? 'met' : '**missed**']),
    ),
    '',
    `Peak RSS (VmHWM) over all runs, MB: ${Object.entries(peak)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')}.`,
    '',
    ...ctx.charts.map((c) => `![${c}](charts/${c}.png)`),
    '',
  ];
  return lines.join('\n');
}
