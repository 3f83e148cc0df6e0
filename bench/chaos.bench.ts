/**
 * The end-to-end bench: Redis (REDIS_URL when it answers, else a redis-server of the bench's own),
 * the built ingest, router, webhook-delivery and admin services (each its own process), the
 * fault-injecting receiver (one port per destination) and the load generator (this process).
 *
 *   tsx chaos.bench.ts            `pnpm bench:chaos`: every scenario of lib/scenarios.ts in each
 *                                 mode (fixed: BENCH_RATE calls/s offered, open loop; saturation:
 *                                 up to BENCH_WINDOW calls acknowledged but not yet delivered), each
 *                                 on a fresh system, then the soak and the baselines; every run ends
 *                                 with the verification pass, and a lost call fails the bench
 *   tsx chaos.bench.ts pipeline   `pnpm bench:pipeline`: the detail mode (lib/pipeline.ts)
 *   tsx chaos.bench.ts charts     `pnpm bench:charts`: redraws the charts from results/latest.json
 *
 * Knobs: see bench/README.md.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { distEntry, ensureRedis, startChaosProcess, startPrivateRedis } from '@eventrelay/testkit';
import { measureBareHttp, runChain } from './lib/chain.js';
import { evaluateTargets, markdownReport, misbehavingRows, misbehavingTable, tableRows, type Baselines } from './lib/chaos-report.js';
import { chartSpecs, writeCharts } from './lib/charts.js';
import { FILTER_RULES } from './lib/filters.js';
import { filtersReport } from './lib/filters-report.js';
import { DEFAULT_PHASES, FILTER_PHASES, filtersRate, PHASES, pipelineReport, runPipeline } from './lib/pipeline.js';
import { connectRedis, infoField, runBench } from './lib/proc.js';
import { BENCH_DIR, envList, envNumber, fmtInt, machine, RESULTS_DIR, table, targetsLine, verdict, writeResult } from './lib/report.js';
import { runScenario, type RunResult, type RunSettings } from './lib/run.js';
import { DESTINATIONS, SCENARIOS, scenarioNamed } from './lib/scenarios.js';
import { STACK_SERVICES } from './lib/stack.js';

const command = process.argv[2] ?? 'scenarios';
if (!['scenarios', 'pipeline', 'charts'].includes(command))
  throw new Error(`usage: chaos.bench.ts [scenarios|pipeline|charts], got "${command}"`);
const pipeline = command === 'pipeline';
const settings = {
  durationS: envNumber('BENCH_DURATION_S', 20, 1, 3600),
  warmupS: envNumber('BENCH_WARMUP_S', 5, 0, 600),
  rate: envNumber('BENCH_RATE', 1000, 1, 1_000_000),
  batchSize: envNumber('BENCH_BATCH_SIZE', 20, 1, 500),
  windowCalls: envNumber('BENCH_WINDOW', 4000, 1, 1_000_000),
  connections: envNumber('BENCH_CONNECTIONS', 16, 1, 1000),
  // Retries and dead letters log a warn line each, by design; thousands of them would drown the bench's own output.
  logLevel: process.env['BENCH_LOG_LEVEL'] ?? (pipeline ? 'warn' : 'error'),
};
const MODES = ['fixed', 'saturation'] as const;
const soakS = envNumber('BENCH_SOAK_S', 600, 0, 24 * 3600);
const withBaselines = envNumber('BENCH_BASELINES', 1, 0, 1) === 1;
const scenarios = process.env['BENCH_SCENARIOS'] ? process.env['BENCH_SCENARIOS'].split(',').map(scenarioNamed) : [...SCENARIOS];
const modes = envList('BENCH_MODES', MODES);
const phases = envList('BENCH_PHASES', PHASES, DEFAULT_PHASES);
// Only a complete run at the default durations writes latest.* (the committed results); others write dated, git-ignored files.
const defaultDurations = settings.durationS >= 20 && settings.warmupS >= 5;
const complete =
  defaultDurations &&
  (pipeline
    ? DEFAULT_PHASES.every((p) => phases.includes(p))
    : scenarios.length === SCENARIOS.length && modes.length === MODES.length && soakS >= 600 && withBaselines);
// BENCH_REDIS=private: a redis-server of the bench's own, so that INFO commandstats hold no other client's commands.
const redisMode = envList('BENCH_REDIS', ['shared', 'private'] as const)[0] ?? 'shared';
const SECRET = 'whsec_bench_chaos_0001';
const chartsDir = path.join(RESULTS_DIR, 'charts');
const runTag = randomBytes(3).toString('hex');
let closeRedis: () => Promise<void> = () => Promise.resolve();
const log = (line: string) => process.stderr.write(`bench: ${line}\n`);

async function main(): Promise<void> {
  if (command === 'charts') {
    const latest = JSON.parse(readFileSync(path.join(RESULTS_DIR, 'latest.json'), 'utf8')) as { runs: RunResult[]; baselines: Baselines };
    const names = await writeCharts(chartsDir, chartSpecs(latest.runs, latest.baselines));
    return void process.stdout.write(`redrew ${names.join(', ')} under bench/results/charts/\n`);
  }
  const started = new Date();
  for (const svc of STACK_SERVICES)
    if (!existsSync(distEntry(svc)))
      throw new Error(`${path.relative(BENCH_DIR, distEntry(svc))} is missing: run pnpm exec tsc -b (pnpm bench does)`);
  const redis = redisMode === 'private' ? await startPrivateRedis({ aof: false }) : await ensureRedis();
  closeRedis = () => redis.close();
  const run: RunSettings = { ...settings, runTag, redisUrl: redis.url, secret: SECRET };
  const receiver = await startChaosProcess({ listeners: DESTINATIONS, secret: SECRET, echo: 'prefixed' });
  mkdirSync(chartsDir, { recursive: true });
  const what = pipeline
    ? `pipeline ${phases.join(', ')}`
    : `${scenarios.map((s) => s.name).join(', ')} x ${modes.join(', ')}; soak ${soakS} s`;
  log(
    `${what}; ${fmtInt(settings.rate)} calls/s fixed, window ${fmtInt(settings.windowCalls)}; ${settings.warmupS} s warm-up + ${settings.durationS} s each; Redis ${redis.url}; run ${runTag}`,
  );
  if (pipeline) {
    const { results, micro } = await runPipeline(phases, run, receiver);
    await receiver.stop();
    const r = connectRedis(redis.url);
    const version = infoField(await r.info('server'), 'redis_version') ?? 'unknown';
    r.disconnect();
    const { json, text, allMet } = pipelineReport(results, {
      date: started.toISOString(),
      settings: { ...run, redisMode },
      machine: { ...machine(), redis: version },
    });
    // The filter phases' report (issue 22): in pipeline-latest.json, and on its own in filters-latest.json when all three ran at the default durations.
    const withFilters = FILTER_PHASES.some((p) => phases.includes(p));
    const filters = filtersReport(
      { fanout: results.fanout10, filters: results.filters10, micro },
      { destinations: DESTINATIONS, rules: FILTER_RULES.length, rate: filtersRate() },
    );
    const filtersTargets = targetsLine(filters.met);
    const filtersJson = {
      date: started.toISOString(),
      duration_s: settings.durationS,
      warmup_s: settings.warmupS,
      batch_size: settings.batchSize,
      redis_mode: redisMode,
      phases: phases.filter((p) => (FILTER_PHASES as readonly string[]).includes(p)),
      ...filters.json,
      rules: FILTER_RULES,
      machine: { ...machine(), redis: version },
      notes:
        'Everything on one machine; each pipeline phase on a fresh system. fanout10 and filters10: one source connected to ten signed Webhooks destinations (a receiver port each), ' +
        'the same fixed offered rate, batches of 20 track calls to /v1/batch; the rules refuse none of them, so both deliver the same calls (verified: lost 0). ' +
        'router_usec_per_call = router CPU (user + system, /proc) over the measured window / calls routed in it (deliveries / destinations); the difference between the two phases is what the rules add, ' +
        'including the HMGET and parse of the whole calls that the properties.* rule makes the router do; per call x destination = that / destinations. ' +
        'delivery_usec_per_delivered_call: webhook-delivery CPU per (call, destination) delivered, where dropFields and keepFields apply. ' +
        'micro: planRoute (services/router/dist) in the bench process on one batch of 500 route entries, process.cpuUsage() over interleaved rounds after a warm-up, median; ' +
        'filters_with_parse adds JSON.parse of the batch parts (the CPU of the whole-call read); the micro target verdict uses it.',
    };
    const pipelineJson = { ...json, ...(withFilters ? { filters: filters.json } : {}) };
    const written = [
      ...writeResult('pipeline-latest.json', 'pipeline', started, pipelineJson, complete),
      ...(withFilters
        ? writeResult(
            'filters-latest.json',
            'filters',
            started,
            filtersJson,
            defaultDurations && FILTER_PHASES.every((p) => phases.includes(p)),
          )
        : []),
    ];
    const filtersText = withFilters ? `${filters.text}\n${filtersTargets.line}\n` : '';
    process.stdout.write(`\n${text}\n${filtersText}wrote ${written.join(', ')}\n`);
    if ((!allMet || (withFilters && !filtersTargets.all)) && complete) process.exitCode = 1;
    return;
  }

  const runs: RunResult[] = [];
  for (const scenario of scenarios)
    for (const mode of modes.filter((m) => scenario.modes?.includes(m) ?? true)) {
      log(`${scenario.name} (${scenario.title}), ${mode}`);
      const r = await runScenario(scenario, mode, run, receiver);
      runs.push(r);
      const v = r.verification;
      const off = r.expectation_failures.length > 0 ? `; NOT AS EXPECTED: ${r.expectation_failures.join('; ')}` : '';
      log(
        `  delivered ${fmtInt(r.delivered_calls_per_s)}/s, p99 ${r.latency_ms.p99 ?? '-'} ms; acknowledged ${fmtInt(v.acknowledged)}, delivered ${fmtInt(v.delivered)}, ` +
          `dead-lettered ${fmtInt(v.dead_lettered)}, duplicates ${fmtInt(v.duplicates)}, lost ${fmtInt(v.lost)} (settled in ${r.settle_s} s)${off}`,
      );
    }
  if (soakS > 0) {
    log(`soak, ${fmtInt(settings.rate)} calls/s for ${soakS} s (dedupe window 300 s, so Redis memory must level off)`);
    runs.push(
      await runScenario(scenarioNamed('healthy'), 'soak', run, receiver, { durationS: soakS, env: { INGEST_DEDUPE_WINDOW_S: '300' } }),
    );
  }
  let baselines: Baselines = { bare_http_calls_per_s: null, bullmq_chain_delivered_per_s: null, bullmq_chain_p99_ms: null };
  if (withBaselines) {
    log('baselines');
    const chain = await runChain(run, receiver);
    baselines = {
      bare_http_calls_per_s: await measureBareHttp(run),
      bullmq_chain_delivered_per_s: chain.delivered_calls_per_s,
      bullmq_chain_p99_ms: chain.latency_ms.p99,
    };
  }
  await receiver.stop();

  const targets = evaluateTargets(runs);
  const { header, rows } = tableRows(runs);
  const misbehaving = misbehavingRows(runs);
  const bad = misbehavingTable(misbehaving);
  const m = machine();
  process.stdout.write(
    [
      '',
      table(header, rows),
      '',
      ...(bad.rows.length ? [table(bad.header, bad.rows), ''] : []),
      `baselines: bare HTTP ${fmtInt(baselines.bare_http_calls_per_s)} calls/s; BullMQ -> undici chain ${fmtInt(baselines.bullmq_chain_delivered_per_s)} delivered/s`,
      table(
        ['target', 'wanted', 'measured', 'verdict'],
        targets.map((t) => [t.name, t.wanted, t.measured, verdict(t.met)]),
      ),
      `machine: ${m.description}\n`,
    ].join('\n'),
  );
  // A partial run's charts get a -partial suffix (git-ignored): only a complete run's are published.
  const charts = await writeCharts(chartsDir, chartSpecs(runs, baselines), complete ? '' : '-partial');
  const sat = runs.find((r) => r.scenario === 'healthy' && r.mode === 'saturation');
  const chain = baselines.bullmq_chain_delivered_per_s;
  const json = {
    date: started.toISOString(),
    complete,
    settings: { ...settings, soak_s: soakS, destinations: DESTINATIONS, scenarios: scenarios.map((s) => s.name), modes },
    machine: m,
    baselines,
    ratio_to_bullmq_chain: sat && chain ? Math.round((sat.delivered_calls_per_s / chain) * 1000) / 1000 : null,
    targets,
    /** Throttling and flapping: the misbehaving destination's figures, and the nine others' throughput against healthy's in this run. */
    misbehaving,
    all_passed: runs.every((r) => r.passed),
    notes:
      'Everything on one machine. Ten destinations, one per source, each with its own receiver port; the load is spread evenly over the sources. ' +
      'delivered/s counts first 2xx arrivals in the measured window; latency is first 2xx arrival minus the time the load generator sent the call, for calls sent in the window. ' +
      'Verification: every call the intake answered 2xx for must reach its receiver with a 2xx or be listed in its dead letters (admin API); lost = neither.',
    runs,
  };
  const md = markdownReport({ date: started.toISOString(), runs, baselines, targets, machine: m.description, charts });
  const files = [
    ...writeResult('latest.json', 'scenarios', started, json, complete),
    ...writeResult('latest.md', 'scenarios', started, md, complete),
  ];
  process.stdout.write(`wrote ${files.join(', ')} and charts under bench/results/charts/\n`);
  const failed = runs.filter((r) => !r.passed);
  if (failed.length > 0) {
    const why = (r: RunResult) =>
      `${r.scenario} ${r.mode}: ${r.verification.lost} lost (${r.verification.lost_examples.join(', ')})${r.expectation_failures.map((f) => `; ${f}`).join('')}`;
    log(`FAILED: ${failed.map(why).join(' | ')}`);
    process.exitCode = 1;
  }
}

const perRun = (measuredS: number, settleS: number) => settings.warmupS + measuredS + settleS + 60;
const bound = pipeline
  ? phases.length * perRun(settings.durationS, 60)
  : scenarios.reduce((n, s) => n + perRun(s.measuredS ?? settings.durationS, s.settleS) * (s.modes?.length ?? modes.length), 0) + soakS;
runBench(main, () => closeRedis(), bound + 600);
