/**
 * `pnpm bench:chaos` (and the heart of `pnpm bench`): the whole system under misbehaving receivers.
 * Redis (REDIS_URL when it answers, else a redis-server of the bench's own), ingest, router,
 * webhook-delivery and admin (built, each its own process), the chaos receiver (one port per
 * destination) and the load generator (this process) all run on this machine.
 *
 * For every scenario of bench/lib/scenarios.ts, two runs, each on a fresh system and Redis prefix:
 *   fixed       BENCH_RATE calls/s offered (open loop)
 *   saturation  closed loop: up to BENCH_WINDOW calls acknowledged but not yet at a receiver
 * then a 10-minute soak at BENCH_RATE (BENCH_SOAK_S) with RSS and Redis memory sampled, and the
 * baselines: a bare Node HTTP server (intake ceiling) and a minimal BullMQ → undici chain
 * (delivery ceiling). Each run ends with the verification pass; a lost call fails the bench.
 *
 * Writes bench/results/<date>.json and .md, bench/results/latest.{json,md} (only when every
 * scenario and mode ran) and PNG + SVG charts under bench/results/charts/.
 *
 * Env: BENCH_SCENARIOS (all; comma-separated names), BENCH_MODES (fixed,saturation), BENCH_SOAK_S
 * (600; 0 skips), BENCH_BASELINES (1; 0 skips), BENCH_DURATION_S (20), BENCH_WARMUP_S (5),
 * BENCH_RATE (1000), BENCH_BATCH_SIZE (20), BENCH_WINDOW (4000), BENCH_CONNECTIONS (16),
 * BENCH_LOG_LEVEL (error), REDIS_URL.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Pool } from 'undici';
import { startChainProcess } from './lib/chain.js';
import { startChaosReceiver, type ChaosReceiver } from './lib/chaos-client.js';
import { evaluateTargets, markdownReport, tableRows, type Baselines } from './lib/chaos-report.js';
import { runScenario, type Mode, type RunResult, type RunSettings } from './lib/chaos-run.js';
import { writeChart } from './lib/charts.js';
import { drawCharts } from './lib/chaos-charts.js';
import { BENCH_DIR, REPO_ROOT } from './lib/deps.js';
import { LoadDriver } from './lib/drive.js';
import { envNumber } from './lib/env.js';
import { timedBatchBodies } from './lib/payloads.js';
import { freePort, killAll, runBench, sleep, startServer, type ChildHandle } from './lib/proc.js';
import { ensureRedis } from './lib/redis.js';
import { compactJson, fmtInt, table } from './lib/report.js';
import { DESTINATIONS, SCENARIOS, scenarioNamed, type Scenario } from './lib/scenarios.js';
import { LATENCY_QUANTILES, percentiles } from './lib/series.js';
import { distEntry, STACK_SERVICES } from './lib/stack.js';

const SECRET = 'whsec_bench_chaos_0001';
const MODES: readonly Mode[] = ['fixed', 'saturation'];

const settings = {
  durationS: envNumber('BENCH_DURATION_S', 20, 1, 3600),
  warmupS: envNumber('BENCH_WARMUP_S', 5, 0, 600),
  rate: envNumber('BENCH_RATE', 1000, 1, 1_000_000),
  batchSize: envNumber('BENCH_BATCH_SIZE', 20, 1, 500),
  windowCalls: envNumber('BENCH_WINDOW', 4000, 1, 1_000_000),
  connections: envNumber('BENCH_CONNECTIONS', 16, 1, 1000),
  // Retries and dead letters log a warn line each, by design; thousands of them would drown the bench's own output.
  logLevel: process.env['BENCH_LOG_LEVEL'] ?? 'error',
};
const soakS = envNumber('BENCH_SOAK_S', 600, 0, 24 * 3600);
const withBaselines = envNumber('BENCH_BASELINES', 1, 0, 1) === 1;
const scenarios: Scenario[] = process.env['BENCH_SCENARIOS'] ? process.env['BENCH_SCENARIOS'].split(',').map((n) => scenarioNamed(n.trim())) : [...SCENARIOS];
const modes: Mode[] = process.env['BENCH_MODES']
  ? process.env['BENCH_MODES'].split(',').map((m) => {
      if (!MODES.includes(m.trim() as Mode)) throw new Error(`BENCH_MODES: unknown mode "${m}"; use ${MODES.join(', ')}`);
      return m.trim() as Mode;
    })
  : [...MODES];
const complete = scenarios.length === SCENARIOS.length && modes.length === MODES.length && soakS >= 600 && withBaselines;

const resultsDir = path.join(BENCH_DIR, 'results');
const runTag = randomBytes(3).toString('hex');
const redisHolder: { handle?: ChildHandle } = {};

async function main(): Promise<void> {
  const started = new Date();
  for (const svc of STACK_SERVICES) if (!existsSync(distEntry(svc))) throw new Error(`${path.relative(REPO_ROOT, distEntry(svc))} is missing: run pnpm exec tsc -b (pnpm bench does)`);
  const redis = await ensureRedis();
  if (redis.handle) redisHolder.handle = redis.handle;
  const run: RunSettings = { ...settings, runTag, redisUrl: redis.url, secret: SECRET };
  const receiver = await startChaosReceiver({ listeners: DESTINATIONS, secret: SECRET, tls: true });
  process.stderr.write(
    `bench: ${scenarios.map((s) => s.name).join(', ')} x ${modes.join(', ')}; ${fmtInt(settings.rate)} calls/s fixed, window ${fmtInt(settings.windowCalls)}; ` +
      `${settings.warmupS} s warm-up + ${settings.durationS} s each; soak ${soakS} s; Redis ${redis.url}${redis.handle ? ' (started by the bench)' : ''}; run ${runTag}\n`,
  );

  const runs: RunResult[] = [];
  for (const scenario of scenarios) {
    for (const mode of modes) {
      process.stderr.write(`bench: ${scenario.name} (${scenario.title}), ${mode}\n`);
      const result = await runScenario(scenario, mode, run, receiver);
      runs.push(result);
      const v = result.verification;
      process.stderr.write(
        `bench:   delivered ${fmtInt(result.delivered_calls_per_s)}/s, p99 ${result.latency_ms.p99 ?? '-'} ms; acknowledged ${fmtInt(v.acknowledged)}, delivered ${fmtInt(v.delivered)}, ` +
          `dead-lettered ${fmtInt(v.dead_lettered)}, duplicates ${fmtInt(v.duplicates)}, lost ${fmtInt(v.lost)} (settled in ${result.settle_s} s)` +
          `${result.expectation_failures.length > 0 ? `; NOT AS EXPECTED: ${result.expectation_failures.join('; ')}` : ''}\n`,
      );
    }
  }
  if (soakS > 0) {
    process.stderr.write(`bench: soak, ${fmtInt(settings.rate)} calls/s for ${soakS} s (dedupe window 300 s, so Redis memory must level off)\n`);
    const healthy = scenarioNamed('healthy');
    runs.push(await runScenario(healthy, 'soak', run, receiver, { durationS: soakS, env: { INGEST_DEDUPE_WINDOW_S: '300' } }));
  }
  const baselines: Baselines = withBaselines ? await measureBaselines(run, receiver) : { bare_http_calls_per_s: null, bullmq_chain_delivered_per_s: null, bullmq_chain_p99_ms: null };
  await receiver.stop();
  report(started, runs, baselines);
}

/** The intake ceiling (bare HTTP server) and the delivery ceiling (BullMQ → undici chain), same machine, same run. */
async function measureBaselines(s: RunSettings, receiver: ChaosReceiver): Promise<Baselines> {
  process.stderr.write('bench: baselines\n');
  // Bare HTTP: the same batches, the same connections, answered 200 at once.
  const port = await freePort();
  const bare = await startServer({ name: 'bare-http', args: ['--import', 'tsx', path.join(BENCH_DIR, 'baselines', 'bare-http.ts')], cwd: REPO_ROOT, env: { ...process.env, PORT: String(port) }, port, readyPath: '/' });
  let bareCallsPerS: number;
  try {
    const pool = new Pool(bare.url, { connections: s.connections, pipelining: 1 });
    const bodies = timedBatchBodies(`${s.runTag}-bare`, s.batchSize);
    let ok = 0;
    let counting = false;
    let stop = false;
    const loop = async () => {
      while (!stop) {
        const res = await pool.request({ method: 'POST', path: '/v1/batch', headers: { 'content-type': 'application/json' }, body: bodies.next(Date.now()) });
        await res.body.dump();
        if (counting && res.statusCode === 200) ok++;
      }
    };
    const loops = Array.from({ length: s.connections }, loop);
    await sleep(s.warmupS * 1000);
    counting = true;
    await sleep(s.durationS * 1000);
    counting = false;
    stop = true;
    await Promise.all(loops);
    await pool.close();
    bareCallsPerS = Math.round((ok * s.batchSize) / s.durationS);
  } finally {
    await bare.stop();
  }

  // The chain: producer and worker processes, posting to the chaos receiver's route /chain.
  const prefix = `{bench-${s.runTag}-chain}`;
  const env = { ...process.env, REDIS_URL: s.redisUrl, PREFIX: prefix, BATCH_SIZE: String(s.batchSize), RUN_TAG: s.runTag, TARGET_URL: `${receiver.urlOf(0)}/chain`, CONCURRENCY: '256', CONNECTIONS: '64', NODE_ENV: 'production' };
  const worker = await startChainProcess('chain-worker', 'worker', env);
  const producer = await startChainProcess('chain-producer', 'producer', env);
  try {
    await receiver.setPlan({ routes: {} });
    await receiver.pull(() => undefined);
    const driver = new LoadDriver({ calls: s.batchSize, send: () => producer.ipc.call<number>('add').then(() => 200) });
    receiver.onDelivered((byRoute) => driver.received(byRoute['chain'] ?? 0));
    driver.received(receiver.deliveredOn(['chain']));
    driver.startWindow(s.windowCalls, s.connections);
    await sleep(s.warmupS * 1000);
    const from = performance.timeOrigin + performance.now();
    await receiver.pull(() => undefined);
    await sleep(s.durationS * 1000);
    const to = performance.timeOrigin + performance.now();
    await driver.stop();
    let delivered = 0;
    const latencies: number[] = [];
    await receiver.pull((a) => {
      if (a.route !== 'chain' || a.status !== 200 || a.arrivalMs < from || a.arrivalMs >= to) return;
      delivered++;
      if (Number.isFinite(a.sentAtMs)) latencies.push(a.arrivalMs - a.sentAtMs);
    });
    return { bare_http_calls_per_s: bareCallsPerS, bullmq_chain_delivered_per_s: Math.round(delivered / s.durationS), bullmq_chain_p99_ms: percentiles(latencies, LATENCY_QUANTILES).p99 };
  } finally {
    await producer.handle.stop();
    await worker.handle.stop();
  }
}

function report(started: Date, runs: RunResult[], baselines: Baselines): void {
  const targets = evaluateTargets(runs);
  const { header, rows } = tableRows(runs);
  const cpus = os.cpus();
  const machine = `${cpus.length} x ${cpus[0]?.model.trim() ?? 'unknown'}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, ${os.platform()} ${os.release()}, Node ${process.version}`;
  const out = ['', table(header, rows), ''];
  out.push(`baselines: bare HTTP ${fmtInt(baselines.bare_http_calls_per_s ?? NaN)} calls/s; BullMQ -> undici chain ${fmtInt(baselines.bullmq_chain_delivered_per_s ?? NaN)} delivered/s`);
  out.push(table(['target', 'wanted', 'measured', 'verdict'], targets.map((t) => [t.name, t.wanted, t.measured, t.met === undefined ? 'not measured' : t.met ? 'met' : 'MISSED'])));
  out.push(`machine: ${machine}`);
  process.stdout.write(out.join('\n') + '\n');

  mkdirSync(path.join(resultsDir, 'charts'), { recursive: true });
  const charts = drawCharts(runs, baselines);
  for (const [name, svg] of Object.entries(charts)) writeChart(path.join(resultsDir, 'charts', complete ? name : `${name}-partial`), svg);
  const stamp = started.toISOString().replace(/:/g, '-').replace(/\.\d+Z$/, 'Z');
  const command = 'pnpm bench';
  const md = markdownReport({ date: started.toISOString(), runs, baselines, targets, machine, command, charts: Object.keys(charts).map((c) => (complete ? c : `${c}-partial`)) });
  const json = {
    date: started.toISOString(),
    complete,
    settings: { ...settings, soak_s: soakS, destinations: DESTINATIONS, scenarios: scenarios.map((s) => s.name), modes },
    machine: { description: machine, cpus: cpus.length, model: cpus[0]?.model.trim() ?? 'unknown', total_mem_gib: Math.round((os.totalmem() / 2 ** 30) * 10) / 10, node: process.version },
    baselines,
    ratio_to_bullmq_chain: (() => {
      const sat = runs.find((r) => r.scenario === 'healthy' && r.mode === 'saturation');
      return sat && baselines.bullmq_chain_delivered_per_s ? Math.round((sat.delivered_calls_per_s / baselines.bullmq_chain_delivered_per_s) * 1000) / 1000 : null;
    })(),
    targets,
    all_passed: runs.every((r) => r.passed),
    notes:
      'Everything on one machine. Ten destinations, one per source, each with its own receiver port; the load is spread evenly over the sources. ' +
      'delivered/s counts first 2xx arrivals in the measured window; latency is first 2xx arrival minus the time the load generator sent the call, for calls sent in the window. ' +
      'Verification: every call the intake answered 2xx for must reach its receiver with a 2xx or be listed in its dead letters (admin API); lost = neither.',
    runs,
  };
  const files: string[] = [];
  const write = (name: string, text: string) => {
    writeFileSync(path.join(resultsDir, name), text);
    files.push(path.join('bench', 'results', name));
  };
  const text = compactJson(json);
  write(`${stamp}.json`, text);
  write(`${stamp}.md`, md);
  if (complete) {
    write('latest.json', text);
    write('latest.md', md);
  }
  process.stdout.write(`wrote ${files.join(', ')} and charts under bench/results/charts/\n`);
  const lost = runs.filter((r) => !r.passed);
  if (lost.length > 0) {
    process.stderr.write(
      `bench: FAILED: ${lost.map((r) => `${r.scenario} ${r.mode}: ${r.verification.lost} lost (${r.verification.lost_examples.join(', ')})${r.expectation_failures.length ? `; ${r.expectation_failures.join('; ')}` : ''}`).join(' | ')}\n`,
    );
    process.exitCode = 1;
  }
}

async function cleanup(): Promise<void> {
  killAll();
  await redisHolder.handle?.stop();
}

const perRun = (s: Scenario) => settings.warmupS + (s.measuredS ?? settings.durationS) + s.settleS + 60;
runBench(main, cleanup, scenarios.reduce((n, s) => n + perRun(s) * modes.length, 0) + soakS + 600);
