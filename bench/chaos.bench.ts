/**
 * The end-to-end bench: Redis (REDIS_URL when it answers, else a redis-server of the bench's own),
 * the built ingest, router, webhook-delivery and admin services (each its own process), the chaos
 * receiver (one port per destination) and the load generator (this process), all on this machine.
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
import { measureBareHttp, runChain } from './lib/chain.js';
import { startChaosReceiver } from './lib/chaos-client.js';
import { evaluateTargets, markdownReport, tableRows, type Baselines } from './lib/chaos-report.js';
import { chartSpecs, writeCharts } from './lib/charts.js';
import { PHASES, pipelineReport, runPipeline } from './lib/pipeline.js';
import { distEntry, ensureRedis, startPrivateRedis } from '@eventrelay/testkit';
import { BENCH_DIR, connectRedis, runBench } from './lib/proc.js';
import { compactJson, envList, envNumber, fmtInt, machine, table, verdict, writeResult } from './lib/report.js';
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
const scenarios = process.env['BENCH_SCENARIOS']
  ? process.env['BENCH_SCENARIOS'].split(',').map((n) => scenarioNamed(n.trim()))
  : [...SCENARIOS];
const modes = envList('BENCH_MODES', MODES);
const phases = envList('BENCH_PHASES', PHASES);
// Only a complete run at the default durations writes latest.* (the committed results); others write dated, git-ignored files.
const fullLength = settings.durationS >= 20 && settings.warmupS >= 5;
const complete =
  fullLength &&
  (pipeline
    ? phases.length === PHASES.length
    : scenarios.length === SCENARIOS.length && modes.length === MODES.length && soakS >= 600 && withBaselines);
// BENCH_REDIS=private: a redis-server of the bench's own, so that INFO commandstats hold no other client's commands.
const redisMode = process.env['BENCH_REDIS'] ?? 'shared';
if (redisMode !== 'shared' && redisMode !== 'private') throw new Error(`BENCH_REDIS must be "shared" or "private", got "${redisMode}"`);

const SECRET = 'whsec_bench_chaos_0001';
const resultsDir = path.join(BENCH_DIR, 'results');
const chartsDir = path.join(resultsDir, 'charts');
const runTag = randomBytes(3).toString('hex');
const redisHolder: { close?: () => Promise<void> } = {};

async function main(): Promise<void> {
  if (command === 'charts') {
    const latest = JSON.parse(readFileSync(path.join(resultsDir, 'latest.json'), 'utf8')) as { runs: RunResult[]; baselines: Baselines };
    process.stdout.write(
      `redrew ${(await writeCharts(chartsDir, chartSpecs(latest.runs, latest.baselines))).join(', ')} under bench/results/charts/\n`,
    );
    return;
  }
  const started = new Date();
  for (const svc of STACK_SERVICES)
    if (!existsSync(distEntry(svc)))
      throw new Error(`${path.relative(BENCH_DIR, distEntry(svc))} is missing: run pnpm exec tsc -b (pnpm bench does)`);
  const redis = redisMode === 'private' ? await startPrivateRedis({ aof: false }) : await ensureRedis();
  redisHolder.close = () => redis.close();
  const run: RunSettings = { ...settings, runTag, redisUrl: redis.url, secret: SECRET };
  const receiver = await startChaosReceiver({ listeners: DESTINATIONS, secret: SECRET, tls: true });
  mkdirSync(chartsDir, { recursive: true });
  process.stderr.write(
    `bench: ${pipeline ? `pipeline ${phases.join(', ')}` : `${scenarios.map((s) => s.name).join(', ')} x ${modes.join(', ')}; soak ${soakS} s`}; ${fmtInt(settings.rate)} calls/s fixed, window ${fmtInt(settings.windowCalls)}; ` +
      `${settings.warmupS} s warm-up + ${settings.durationS} s each; Redis ${redis.url}; run ${runTag}\n`,
  );
  if (pipeline) {
    const results = await runPipeline(phases, run, receiver);
    await receiver.stop();
    const redisVersion = /redis_version:(\S+)/.exec(await fetchInfo(redis.url))?.[1] ?? 'unknown';
    const { json, text, allMet } = pipelineReport(results, {
      date: started.toISOString(),
      settings: { ...run, redisMode },
      machine: { ...machine(), redis: redisVersion },
    });
    process.stdout.write(`\n${text}\n`);
    const files = writeResult(
      resultsDir,
      { dated: 'pipeline', latest: 'pipeline-latest.json' },
      started,
      JSON.stringify(json, null, 2) + '\n',
      complete,
    );
    process.stdout.write(`wrote ${files.join(', ')}\n`);
    if (!allMet && complete) process.exitCode = 1;
    return;
  }

  const runs: RunResult[] = [];
  for (const scenario of scenarios) {
    for (const mode of modes) {
      process.stderr.write(`bench: ${scenario.name} (${scenario.title}), ${mode}\n`);
      const r = await runScenario(scenario, mode, run, receiver);
      runs.push(r);
      const v = r.verification;
      process.stderr.write(
        `bench:   delivered ${fmtInt(r.delivered_calls_per_s)}/s, p99 ${r.latency_ms.p99 ?? '-'} ms; acknowledged ${fmtInt(v.acknowledged)}, delivered ${fmtInt(v.delivered)}, ` +
          `dead-lettered ${fmtInt(v.dead_lettered)}, duplicates ${fmtInt(v.duplicates)}, lost ${fmtInt(v.lost)} (settled in ${r.settle_s} s)` +
          `${r.expectation_failures.length > 0 ? `; NOT AS EXPECTED: ${r.expectation_failures.join('; ')}` : ''}\n`,
      );
    }
  }
  if (soakS > 0) {
    process.stderr.write(
      `bench: soak, ${fmtInt(settings.rate)} calls/s for ${soakS} s (dedupe window 300 s, so Redis memory must level off)\n`,
    );
    runs.push(
      await runScenario(scenarioNamed('healthy'), 'soak', run, receiver, { durationS: soakS, env: { INGEST_DEDUPE_WINDOW_S: '300' } }),
    );
  }
  let baselines: Baselines = { bare_http_calls_per_s: null, bullmq_chain_delivered_per_s: null, bullmq_chain_p99_ms: null };
  if (withBaselines) {
    process.stderr.write('bench: baselines\n');
    const chain = await runChain(run, receiver);
    baselines = {
      bare_http_calls_per_s: await measureBareHttp(run),
      bullmq_chain_delivered_per_s: chain.delivered_calls_per_s,
      bullmq_chain_p99_ms: chain.latency_ms.p99,
    };
  }
  await receiver.stop();
  await report(started, runs, baselines);
}

async function report(started: Date, runs: RunResult[], baselines: Baselines): Promise<void> {
  const targets = evaluateTargets(runs);
  const { header, rows } = tableRows(runs);
  const m = machine();
  const out = ['', table(header, rows), ''];
  out.push(
    `baselines: bare HTTP ${fmtInt(baselines.bare_http_calls_per_s ?? NaN)} calls/s; BullMQ -> undici chain ${fmtInt(baselines.bullmq_chain_delivered_per_s ?? NaN)} delivered/s`,
  );
  out.push(
    table(
      ['target', 'wanted', 'measured', 'verdict'],
      targets.map((t) => [t.name, t.wanted, t.measured, verdict(t.met)]),
    ),
  );
  out.push(`machine: ${m.description}`);
  process.stdout.write(out.join('\n') + '\n');

  // A partial run's charts get a -partial suffix (git-ignored): only a complete run's are published.
  const charts = await writeCharts(chartsDir, chartSpecs(runs, baselines), complete ? '' : '-partial');
  const sat = runs.find((r) => r.scenario === 'healthy' && r.mode === 'saturation');
  const json = {
    date: started.toISOString(),
    complete,
    settings: { ...settings, soak_s: soakS, destinations: DESTINATIONS, scenarios: scenarios.map((s) => s.name), modes },
    machine: m,
    baselines,
    ratio_to_bullmq_chain:
      sat && baselines.bullmq_chain_delivered_per_s
        ? Math.round((sat.delivered_calls_per_s / baselines.bullmq_chain_delivered_per_s) * 1000) / 1000
        : null,
    targets,
    all_passed: runs.every((r) => r.passed),
    notes:
      'Everything on one machine. Ten destinations, one per source, each with its own receiver port; the load is spread evenly over the sources. ' +
      'delivered/s counts first 2xx arrivals in the measured window; latency is first 2xx arrival minus the time the load generator sent the call, for calls sent in the window. ' +
      'Verification: every call the intake answered 2xx for must reach its receiver with a 2xx or be listed in its dead letters (admin API); lost = neither.',
    runs,
  };
  const md = markdownReport({
    date: started.toISOString(),
    runs,
    baselines,
    targets,
    machine: m.description,
    command: 'pnpm bench',
    charts,
  });
  const files = [
    ...writeResult(resultsDir, { dated: 'scenarios', latest: 'latest.json' }, started, compactJson(json), complete),
    ...writeResult(resultsDir, { dated: 'scenarios', latest: 'latest.md' }, started, md, complete),
  ];
  process.stdout.write(`wrote ${files.join(', ')} and charts under bench/results/charts/\n`);
  const failed = runs.filter((r) => !r.passed);
  if (failed.length > 0) {
    process.stderr.write(
      `bench: FAILED: ${failed.map((r) => `${r.scenario} ${r.mode}: ${r.verification.lost} lost (${r.verification.lost_examples.join(', ')})${r.expectation_failures.length ? `; ${r.expectation_failures.join('; ')}` : ''}`).join(' | ')}\n`,
    );
    process.exitCode = 1;
  }
}

async function fetchInfo(url: string): Promise<string> {
  const r = connectRedis(url);
  try {
    return await r.info('server');
  } finally {
    r.disconnect();
  }
}

const perRun = (measuredS: number, settleS: number) => settings.warmupS + measuredS + settleS + 60;
const bound = pipeline
  ? phases.length * perRun(settings.durationS, 60)
  : scenarios.reduce((n, s) => n + perRun(s.measuredS ?? settings.durationS, s.settleS) * modes.length, 0) + soakS;
runBench(main, async () => redisHolder.close?.(), bound + 600);
