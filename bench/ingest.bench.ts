/**
 * `pnpm bench:ingest`: intake throughput and latency against two baselines measured in the same run
 * on the same machine. Phases, each against a fresh child process:
 *   bare     bare Node HTTP server, answers 200 after reading the body  (batch body)
 *   express  express 5 parsing the JSON, answers 200                   (single-call body)
 *   batched  ingest POST /v1/batch, 20 calls of ~600 B each
 *   single   ingest POST /v1/track, one call
 * Every phase: 50 connections, a short warm-up, then BENCH_DURATION_S (default 15) seconds.
 * Each ingest phase gets its own Redis prefix (the router is not running, so the route queue only
 * grows); the prefix's keys are deleted when the phase ends.
 *
 * Env: BENCH_DURATION_S (15), BENCH_WARMUP_S (3), BENCH_CONNECTIONS (50), BENCH_PHASES (all, e.g.
 * "batched,single"), BENCH_CPU_PROF=1 (ingest runs with --cpu-prof into bench/results/profiles),
 * REDIS_URL (redis://127.0.0.1:6379).
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { commandDeltas, redisSnapshot, sumMetric } from './lib/detail.js';
import { runLoad, type LoadResult } from './lib/load.js';
import { batchBodies, singleCallBodies, type BodyFactory } from './lib/payloads.js';
import { deletePrefix, freePort, sleep, startService } from '@eventrelay/testkit';
import { BENCH_DIR, connectRedis, machineBusySeconds, processCpuSeconds, runBench, startServer } from './lib/proc.js';
import { envList, envNumber, fmtInt, fmtMs, machine, round, table, verdict, writeResult } from './lib/report.js';

const PHASES = ['bare', 'express', 'batched', 'single'] as const;
type Phase = (typeof PHASES)[number];

const BATCH_SIZE = 20;
const WRITE_KEY = 'bench-write-key-0001';
const TARGET = { batchedCallsPerS: 15_000, batchedP99Ms: 50, singleToExpress: 0.5 };

const durationS = envNumber('BENCH_DURATION_S', 15, 1, 600);
const warmupS = envNumber('BENCH_WARMUP_S', 3, 0, 60);
const connections = envNumber('BENCH_CONNECTIONS', 50, 1, 1000);
const redisUrl = process.env['REDIS_URL'] ?? 'redis://127.0.0.1:6379';
const cpuProf = process.env['BENCH_CPU_PROF'] === '1';
const selected: Phase[] = envList('BENCH_PHASES', PHASES);

const runTag = randomBytes(4).toString('hex');
const resultsDir = path.join(BENCH_DIR, 'results');
const headers = {
  'Content-Type': 'application/json',
  Authorization: `Basic ${Buffer.from(`${WRITE_KEY}:`).toString('base64')}`,
};

interface PhaseResult {
  phase: Phase;
  target: string;
  bodyBytes: number;
  callsPerRequest: number;
  load: LoadResult;
  /** Ingest phases only. */
  acceptedFrom2xx?: number;
  acceptedFromMetrics?: number;
  callsPerS?: number;
  callsPerSFromMetrics?: number;
  /** Percent of one core during the measured window; `other` is the rest of the machine (other processes). */
  cpu: { server_pct?: number; redis_pct?: number; loadgen_pct?: number; other_pct?: number; machine_busy_pct?: number };
  redis?: { used_memory_delta_mb: number; top_commands: { command: string; calls: number; usec: number; usec_per_call: number }[] };
}

const redis = connectRedis(redisUrl);
const prefixesInUse = new Set<string>();
const configFile = path.join(os.tmpdir(), `eventrelay-bench-${runTag}.json`);

async function main(): Promise<void> {
  const started = new Date();

  writeFileSync(
    configFile,
    JSON.stringify({
      sources: [{ id: 'bench', name: 'Bench', type: 'server', writeKey: WRITE_KEY, rateLimitPerSecond: 100_000_000 }],
      destinations: [],
      audiences: [],
    }),
  );
  const redisVersion = (await redisSnapshot(redis)).version;

  process.stderr.write(
    `bench: ${selected.join(', ')}; ${connections} connections, ${warmupS} s warm-up + ${durationS} s each; run ${runTag}\n`,
  );
  const results: PhaseResult[] = [];
  for (const phase of selected) results.push(await runPhase(phase));

  const by = (p: Phase) => results.find((r) => r.phase === p);
  const bare = by('bare');
  const express = by('express');
  const batched = by('batched');
  const single = by('single');

  const rows = results.map((r) => [
    `${r.phase} (${r.target})`,
    fmtInt(r.load.rps),
    r.callsPerS === undefined ? '-' : fmtInt(r.callsPerS),
    r.callsPerSFromMetrics === undefined ? '-' : fmtInt(r.callsPerSFromMetrics),
    fmtMs(r.load.p50Ms),
    fmtMs(r.load.p99Ms),
    `${r.load.errors}/${r.load.non2xx}`,
    [r.cpu.server_pct, r.cpu.redis_pct, r.cpu.loadgen_pct, r.cpu.other_pct]
      .map((v) => (v === undefined ? '-' : `${Math.round(v)}`))
      .join('/'),
  ]);
  const out: string[] = [];
  out.push('');
  out.push(
    table(
      ['phase', 'req/s', 'calls/s', 'calls/s (metrics)', 'p50 ms', 'p99 ms', 'errors/non-2xx', 'cpu % server/redis/loadgen/other'],
      rows,
    ),
  );

  const ratioSingleToExpress = single && express ? single.load.rps / express.load.rps : undefined;
  const ratioBatchedReqToBare = batched && bare ? batched.load.rps / bare.load.rps : undefined;
  const met = {
    batched_calls_per_s: batched?.callsPerS !== undefined ? batched.callsPerS >= TARGET.batchedCallsPerS : undefined,
    batched_p99_ms: batched ? batched.load.p99Ms < TARGET.batchedP99Ms : undefined,
    single_to_express: ratioSingleToExpress !== undefined ? ratioSingleToExpress >= TARGET.singleToExpress : undefined,
  };
  const allMet = Object.values(met).every((v) => v === true);
  out.push('');
  out.push(
    `single / express req/s:       ${ratioSingleToExpress === undefined ? '-' : ratioSingleToExpress.toFixed(3)}  (target >= ${TARGET.singleToExpress})`,
  );
  out.push(`batched / bare req/s:         ${ratioBatchedReqToBare === undefined ? '-' : ratioBatchedReqToBare.toFixed(3)}`);
  if (batched && bare) out.push(`batched calls/s / bare req/s: ${((batched.callsPerS ?? 0) / bare.load.rps).toFixed(3)}`);
  out.push(
    `targets: batched >= ${fmtInt(TARGET.batchedCallsPerS)} calls/s: ${verdict(met.batched_calls_per_s)}; batched p99 < ${TARGET.batchedP99Ms} ms: ${verdict(met.batched_p99_ms)}; ` +
      `single >= ${TARGET.singleToExpress * 100}% of express: ${verdict(met.single_to_express)}  =>  ${allMet ? 'ALL MET' : 'NOT ALL MET'}`,
  );
  const busiest = Math.max(...results.map((r) => r.cpu.other_pct ?? 0));
  if (busiest > 25) out.push(`warning: other processes used up to ${Math.round(busiest)}% of a core during a phase; figures are disturbed`);
  out.push(`machine: ${machine().description}, Redis ${redisVersion}`);
  process.stdout.write(out.join('\n') + '\n');

  const json = {
    date: started.toISOString(),
    duration_s: durationS,
    warmup_s: warmupS,
    connections,
    batch_size: BATCH_SIZE,
    phases: selected,
    batched_calls_per_s: batched?.callsPerS !== undefined ? Math.round(batched.callsPerS) : null,
    batched_req_per_s: batched ? round(batched.load.rps, 1) : null,
    single_calls_per_s: single?.callsPerS !== undefined ? Math.round(single.callsPerS) : null,
    p50_ms: batched?.load.p50Ms ?? null,
    p99_ms: batched?.load.p99Ms ?? null,
    single_p50_ms: single?.load.p50Ms ?? null,
    single_p99_ms: single?.load.p99Ms ?? null,
    baseline_bare_rps: bare ? Math.round(bare.load.rps) : null,
    baseline_express_rps: express ? Math.round(express.load.rps) : null,
    ratio_single_to_express: ratioSingleToExpress === undefined ? null : round(ratioSingleToExpress, 3),
    ratio_batched_req_to_bare: ratioBatchedReqToBare === undefined ? null : round(ratioBatchedReqToBare, 3),
    targets: {
      batched_calls_per_s_min: TARGET.batchedCallsPerS,
      batched_p99_ms_max: TARGET.batchedP99Ms,
      single_to_express_min: TARGET.singleToExpress,
      met: { ...met, all: allMet },
    },
    machine: { ...machine(), total_mem_bytes: os.totalmem(), redis: redisVersion },
    notes:
      'Everything on one machine: load generator (autocannon, in the bench process), server, Redis. bare gets the batch body, express the single-call body. ' +
      'calls/s counts 2xx responses x calls per request; calls_per_s_from_metrics is the delta of eventrelay_ingest_calls_total{outcome="accepted"} (includes requests still in flight when the load stopped). ' +
      'redis.top_commands are whole-server INFO commandstats deltas. cpu_pct: percent of one core during the measured window; other_pct is what the rest of the machine used (other processes disturb the figures).',
    details: Object.fromEntries(
      results.map((r) => [
        r.phase,
        {
          target: r.target,
          body_bytes: r.bodyBytes,
          calls_per_request: r.callsPerRequest,
          measured_s: r.load.durationS,
          requests: r.load.requests,
          ok_2xx: r.load.ok,
          non_2xx: r.load.non2xx,
          errors: r.load.errors,
          timeouts: r.load.timeouts,
          status_codes: r.load.statusCodes,
          req_per_s: round(r.load.rps, 1),
          calls_per_s: r.callsPerS === undefined ? null : Math.round(r.callsPerS),
          accepted_from_2xx: r.acceptedFrom2xx ?? null,
          accepted_from_metrics: r.acceptedFromMetrics ?? null,
          calls_per_s_from_metrics: r.callsPerSFromMetrics === undefined ? null : Math.round(r.callsPerSFromMetrics),
          latency_ms: { p50: r.load.p50Ms, p90: r.load.p90Ms, p99: r.load.p99Ms, max: r.load.maxMs },
          cpu_pct: r.cpu,
          redis: r.redis ?? null,
        },
      ]),
    ),
  };
  const files = writeResult(
    resultsDir,
    { dated: 'ingest', latest: 'ingest-latest.json' },
    started,
    JSON.stringify(json, null, 2) + '\n',
    selected.length === PHASES.length && durationS >= 15,
  );
  process.stdout.write(`wrote ${files.join(', ')}\n`);
}

async function runPhase(phase: Phase): Promise<PhaseResult> {
  const isIngest = phase === 'batched' || phase === 'single';
  const bodies: BodyFactory =
    phase === 'batched' || phase === 'bare' ? batchBodies(`${runTag}-${phase}`, BATCH_SIZE) : singleCallBodies(`${runTag}-${phase}`);
  const urlPath = phase === 'batched' || phase === 'bare' ? '/v1/batch' : '/v1/track';
  const prefix = `{bench-${runTag}-${phase}}`;
  let server: { url: string; child: { pid?: number }; stop(): Promise<unknown> };
  if (isIngest) {
    prefixesInUse.add(prefix);
    const profDir = path.join(resultsDir, 'profiles');
    if (cpuProf) mkdirSync(profDir, { recursive: true });
    const env = {
      ...process.env,
      REDIS_URL: redisUrl,
      EVENTRELAY_PREFIX: prefix,
      EVENTRELAY_CONFIG: configFile,
      LOG_LEVEL: 'warn',
      INGEST_MAX_QUEUE_DEPTH: '0',
      NODE_ENV: 'production',
    };
    server = await startService('ingest', env, {
      echo: 'prefixed',
      nodeArgs: cpuProf ? ['--cpu-prof', `--cpu-prof-dir=${profDir}`, `--cpu-prof-name=ingest-${phase}-${runTag}.cpuprofile`] : [],
    });
  } else {
    const port = await freePort();
    server = await startServer({
      name: phase,
      args: ['--import', 'tsx', path.join(BENCH_DIR, 'baselines', phase === 'bare' ? 'bare-http.ts' : 'express-json.ts')],
      env: { ...process.env, PORT: String(port), NODE_ENV: 'production' },
      port,
      readyPath: '/',
    });
  }

  try {
    const load = { url: server.url, path: urlPath, headers, bodies, connections };
    process.stderr.write(`bench: ${phase}: warming up ${warmupS} s …\n`);
    if (warmupS > 0) await runLoad({ ...load, durationS: warmupS });
    await sleep(250);

    const acceptedBefore = isIngest ? await acceptedCalls(server.url) : 0;
    const redisBefore = await redisSnapshot(redis);
    const serverCpuBefore = processCpuSeconds(server.child.pid);
    const loadgenCpuBefore = process.cpuUsage();
    const machineBefore = machineBusySeconds();
    const wallBefore = performance.now();

    process.stderr.write(`bench: ${phase}: measuring ${durationS} s …\n`);
    const result = await runLoad({ ...load, durationS });

    const wallS = (performance.now() - wallBefore) / 1000;
    const loadgenCpu = process.cpuUsage(loadgenCpuBefore);
    const serverCpuAfter = processCpuSeconds(server.child.pid);
    const machineAfter = machineBusySeconds();
    const redisAfter = await redisSnapshot(redis);
    // Requests cut off when the load stopped finish within a moment.
    await sleep(500);
    const acceptedAfter = isIngest ? await acceptedCalls(server.url) : 0;

    const pct = (seconds: number | undefined) => (seconds === undefined ? undefined : round((seconds / wallS) * 100, 1));
    const serverS = serverCpuBefore === undefined || serverCpuAfter === undefined ? undefined : serverCpuAfter - serverCpuBefore;
    const redisS = redisAfter.cpuSeconds - redisBefore.cpuSeconds;
    const loadgenS = (loadgenCpu.user + loadgenCpu.system) / 1e6;
    const machineS = machineBefore === undefined || machineAfter === undefined ? undefined : machineAfter - machineBefore;
    const phaseResult: PhaseResult = {
      phase,
      target: isIngest ? `ingest ${urlPath}` : phase === 'bare' ? 'node:http' : 'express 5 + json',
      bodyBytes: bodies.approxBytes,
      callsPerRequest: bodies.calls,
      load: result,
      cpu: {
        server_pct: pct(serverS),
        redis_pct: pct(redisS),
        loadgen_pct: pct(loadgenS),
        other_pct: machineS === undefined || serverS === undefined ? undefined : pct(Math.max(0, machineS - serverS - redisS - loadgenS)),
        machine_busy_pct: pct(machineS),
      },
    };
    if (isIngest) {
      phaseResult.acceptedFrom2xx = result.ok * bodies.calls;
      phaseResult.acceptedFromMetrics = acceptedAfter - acceptedBefore;
      phaseResult.callsPerS = phaseResult.acceptedFrom2xx / result.durationS;
      phaseResult.callsPerSFromMetrics = phaseResult.acceptedFromMetrics / result.durationS;
      phaseResult.redis = {
        used_memory_delta_mb: round((redisAfter.usedMemory - redisBefore.usedMemory) / 2 ** 20, 1),
        top_commands: commandDeltas(redisBefore, redisAfter)
          .sort((a, b) => b.usec - a.usec)
          .slice(0, 8)
          .map((d) => ({ ...d, usec_per_call: round(d.usec / d.calls) })),
      };
    }
    process.stderr.write(
      `bench: ${phase}: ${fmtInt(result.rps)} req/s, p50 ${fmtMs(result.p50Ms)} ms, p99 ${fmtMs(result.p99Ms)} ms, ${result.errors} errors, ${result.non2xx} non-2xx\n`,
    );
    return phaseResult;
  } finally {
    await server.stop();
    if (isIngest) {
      const deleted = await deletePrefix(redis, prefix);
      prefixesInUse.delete(prefix);
      process.stderr.write(`bench: ${phase}: deleted ${fmtInt(deleted)} keys under ${prefix}\n`);
    }
  }
}

/** eventrelay_ingest_calls_total{outcome="accepted"}, summed over call types, from ingest's /metrics. */
async function acceptedCalls(baseUrl: string): Promise<number> {
  const res = await fetch(`${baseUrl}/metrics`);
  // One series per call type: summed.
  return sumMetric(await res.text(), 'eventrelay_ingest_calls_total', 'outcome="accepted"');
}

async function cleanup(): Promise<void> {
  rmSync(configFile, { force: true });
  for (const prefix of prefixesInUse) await deletePrefix(redis, prefix).catch(() => undefined);
  await redis.quit().catch(() => redis.disconnect());
}

runBench(main, cleanup, selected.length * (warmupS + durationS + 60) + 60);
