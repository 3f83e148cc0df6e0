/**
 * `pnpm bench:ingest`: intake throughput and latency against two baselines measured in the same run
 * on the same machine. Phases, each against a fresh child process, load from autocannon in this one:
 *   bare     bare Node HTTP server, answers 200 after reading the body  (batch body)
 *   express  express 5 parsing the JSON, answers 200                   (single-call body)
 *   batched  ingest POST /v1/batch, 20 calls of ~600 B each
 *   single   ingest POST /v1/track, one call
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
import autocannon from 'autocannon';
import { deletePrefix, SHARED_REDIS_URL, sleep, startService } from '@eventrelay/testkit';
import { commandDeltas, redisSnapshot, sumMetric } from './lib/detail.js';
import { bodies as makeBodies } from './lib/payloads.js';
import { connectRedis, machineBusySeconds, processCpuSeconds, runBench, startBaseline } from './lib/proc.js';
import {
  envList,
  envNumber,
  fmtFixed,
  fmtInt,
  fmtMs,
  machine,
  RESULTS_DIR,
  round,
  roundOrNull,
  table,
  targetsLine,
  writeResult,
} from './lib/report.js';

const PHASES = ['bare', 'express', 'batched', 'single'] as const;
type Phase = (typeof PHASES)[number];
const BATCH_SIZE = 20;
const WRITE_KEY = 'bench-write-key-0001';
const TARGET = { batchedCallsPerS: 15_000, batchedP99Ms: 50, singleToExpress: 0.5 };
const durationS = envNumber('BENCH_DURATION_S', 15, 1, 600);
const warmupS = envNumber('BENCH_WARMUP_S', 3, 0, 60);
const connections = envNumber('BENCH_CONNECTIONS', 50, 1, 1000);
const selected = envList('BENCH_PHASES', PHASES);
const runTag = randomBytes(4).toString('hex');
const headers = { 'Content-Type': 'application/json', Authorization: `Basic ${Buffer.from(`${WRITE_KEY}:`).toString('base64')}` };
const redis = connectRedis(SHARED_REDIS_URL);
const prefixesInUse = new Set<string>();
const configFile = path.join(os.tmpdir(), `eventrelay-bench-${runTag}.json`);
const log = (line: string) => process.stderr.write(`bench: ${line}\n`);

async function load(url: string, urlPath: string, bodies: ReturnType<typeof makeBodies>, seconds: number) {
  const r = await autocannon({
    url,
    connections,
    duration: seconds,
    timeout: 10,
    requests: [{ method: 'POST', path: urlPath, headers, setupRequest: (req) => ({ ...req, body: bodies.next() }) }],
  });
  const measured = r.duration > 0 ? r.duration : seconds;
  const statusCodes = Object.fromEntries(Object.entries(r.statusCodeStats ?? {}).map(([code, stat]) => [code, stat.count ?? 0]));
  const { p50, p90, p99, max } = r.latency;
  return {
    durationS: measured,
    requests: r['2xx'] + r.non2xx,
    ok: r['2xx'],
    non2xx: r.non2xx,
    errors: r.errors,
    timeouts: r.timeouts,
    rps: r['2xx'] / measured,
    p50,
    p90,
    p99,
    max,
    statusCodes,
  };
}

async function runPhase(phase: Phase) {
  const ingest = phase === 'batched' || phase === 'single';
  const batch = phase === 'batched' || phase === 'bare';
  const bodies = makeBodies(`${runTag}-${phase}`, batch ? BATCH_SIZE : 1, { single: !batch });
  const urlPath = batch ? '/v1/batch' : '/v1/track';
  const prefix = `{bench-${runTag}-${phase}}`;
  const profDir = path.join(RESULTS_DIR, 'profiles');
  if (ingest) prefixesInUse.add(prefix);
  if (ingest && process.env['BENCH_CPU_PROF'] === '1') mkdirSync(profDir, { recursive: true });
  const profile = ['--cpu-prof', `--cpu-prof-dir=${profDir}`, `--cpu-prof-name=ingest-${phase}-${runTag}.cpuprofile`];
  const env = { ...process.env, REDIS_URL: SHARED_REDIS_URL, EVENTRELAY_PREFIX: prefix, EVENTRELAY_CONFIG: configFile, LOG_LEVEL: 'warn' };
  const server = ingest
    ? await startService(
        'ingest',
        { ...env, INGEST_MAX_QUEUE_DEPTH: '0', NODE_ENV: 'production' },
        {
          echo: 'prefixed',
          nodeArgs: process.env['BENCH_CPU_PROF'] === '1' ? profile : [],
        },
      )
    : await startBaseline(phase === 'bare' ? 'bare-http.ts' : 'express-json.ts');
  const accepted = async () =>
    ingest ? sumMetric(await (await fetch(`${server.url}/metrics`)).text(), 'eventrelay_ingest_calls_total', 'outcome="accepted"') : 0;
  try {
    log(`${phase}: warming up ${warmupS} s, then measuring ${durationS} s …`);
    if (warmupS > 0) await load(server.url, urlPath, bodies, warmupS);
    await sleep(250);
    const before = { accepted: await accepted(), redis: await redisSnapshot(redis), server: processCpuSeconds(server.pid) };
    const [loadgenBefore, machineBefore, wallBefore] = [process.cpuUsage(), machineBusySeconds(), performance.now()];
    const result = await load(server.url, urlPath, bodies, durationS);
    const wallS = (performance.now() - wallBefore) / 1000;
    const loadgenCpu = process.cpuUsage(loadgenBefore);
    const [serverAfter, machineAfter, redisAfter] = [processCpuSeconds(server.pid), machineBusySeconds(), await redisSnapshot(redis)];
    await sleep(500); // requests cut off when the load stopped finish within a moment
    const acceptedFromMetrics = (await accepted()) - before.accepted;

    const pct = (seconds: number | undefined) => (seconds === undefined ? undefined : round((seconds / wallS) * 100, 1));
    const serverS = before.server === undefined || serverAfter === undefined ? undefined : serverAfter - before.server;
    const redisS = redisAfter.cpuSeconds - before.redis.cpuSeconds;
    const loadgenS = (loadgenCpu.user + loadgenCpu.system) / 1e6;
    const machineS = machineBefore === undefined || machineAfter === undefined ? undefined : machineAfter - machineBefore;
    const otherS = machineS === undefined || serverS === undefined ? undefined : Math.max(0, machineS - serverS - redisS - loadgenS);
    log(
      `${phase}: ${fmtInt(result.rps)} req/s, p50 ${fmtMs(result.p50)} ms, p99 ${fmtMs(result.p99)} ms, ${result.errors} errors, ${result.non2xx} non-2xx`,
    );
    return {
      phase,
      target: ingest ? `ingest ${urlPath}` : phase === 'bare' ? 'node:http' : 'express 5 + json',
      bodies,
      load: result,
      acceptedFrom2xx: ingest ? result.ok * bodies.calls : undefined,
      acceptedFromMetrics: ingest ? acceptedFromMetrics : undefined,
      callsPerS: ingest ? (result.ok * bodies.calls) / result.durationS : undefined,
      callsPerSFromMetrics: ingest ? acceptedFromMetrics / result.durationS : undefined,
      /** Percent of one core during the measured window; `other` is the rest of the machine (other processes). */
      cpu: {
        server_pct: pct(serverS),
        redis_pct: pct(redisS),
        loadgen_pct: pct(loadgenS),
        other_pct: pct(otherS),
        machine_busy_pct: pct(machineS),
      },
      redis: ingest
        ? {
            used_memory_delta_mb: round((redisAfter.usedMemory - before.redis.usedMemory) / 2 ** 20, 1),
            top_commands: commandDeltas(before.redis, redisAfter)
              .sort((a, b) => b.usec - a.usec)
              .slice(0, 8)
              .map((d) => ({ ...d, usec_per_call: round(d.usec / d.calls) })),
          }
        : null,
    };
  } finally {
    await server.stop();
    if (ingest) log(`${phase}: deleted ${fmtInt(await deletePrefix(redis, prefix))} keys under ${prefix}`);
    prefixesInUse.delete(prefix);
  }
}

async function main(): Promise<void> {
  const started = new Date();
  const source = { id: 'bench', name: 'Bench', type: 'server', writeKey: WRITE_KEY, rateLimitPerSecond: 100_000_000 };
  writeFileSync(configFile, JSON.stringify({ sources: [source], destinations: [], audiences: [] }));
  const redisVersion = (await redisSnapshot(redis)).version;
  log(`${selected.join(', ')}; ${connections} connections, ${warmupS} s warm-up + ${durationS} s each; run ${runTag}`);
  const results: Awaited<ReturnType<typeof runPhase>>[] = [];
  for (const phase of selected) results.push(await runPhase(phase));
  const by = (p: Phase) => results.find((r) => r.phase === p);
  const [bare, express, batched, single] = PHASES.map(by);
  const singleToExpress = single && express ? single.load.rps / express.load.rps : undefined;
  const batchedToBare = batched && bare ? batched.load.rps / bare.load.rps : undefined;
  const met = {
    batched_calls_per_s: batched?.callsPerS !== undefined ? batched.callsPerS >= TARGET.batchedCallsPerS : undefined,
    batched_p99_ms: batched ? batched.load.p99 < TARGET.batchedP99Ms : undefined,
    single_to_express: singleToExpress !== undefined ? singleToExpress >= TARGET.singleToExpress : undefined,
  };
  const targets = targetsLine(met);
  const busiest = Math.max(...results.map((r) => r.cpu.other_pct ?? 0));
  const cpu = (r: (typeof results)[number]) =>
    [r.cpu.server_pct, r.cpu.redis_pct, r.cpu.loadgen_pct, r.cpu.other_pct].map((v) => (v === undefined ? '-' : `${Math.round(v)}`));
  process.stdout.write(
    [
      '',
      table(
        ['phase', 'req/s', 'calls/s', 'calls/s (metrics)', 'p50 ms', 'p99 ms', 'errors/non-2xx', 'cpu % server/redis/loadgen/other'],
        results.map((r) => [
          ...[`${r.phase} (${r.target})`, fmtInt(r.load.rps), fmtInt(r.callsPerS), fmtInt(r.callsPerSFromMetrics)],
          ...[fmtMs(r.load.p50), fmtMs(r.load.p99), `${r.load.errors}/${r.load.non2xx}`, cpu(r).join('/')],
        ]),
      ),
      '',
      `single / express req/s:       ${fmtFixed(singleToExpress, 3)}  (target >= ${TARGET.singleToExpress})`,
      `batched / bare req/s:         ${fmtFixed(batchedToBare, 3)}`,
      ...(batched && bare ? [`batched calls/s / bare req/s: ${((batched.callsPerS ?? 0) / bare.load.rps).toFixed(3)}`] : []),
      targets.line,
      ...(busiest > 25
        ? [`warning: other processes used up to ${Math.round(busiest)}% of a core during a phase; figures are disturbed`]
        : []),
      `machine: ${machine().description}, Redis ${redisVersion}\n`,
    ].join('\n'),
  );
  const json = {
    date: started.toISOString(),
    duration_s: durationS,
    warmup_s: warmupS,
    connections,
    batch_size: BATCH_SIZE,
    phases: selected,
    batched_calls_per_s: roundOrNull(batched?.callsPerS, 0),
    batched_req_per_s: roundOrNull(batched?.load.rps, 1),
    single_calls_per_s: roundOrNull(single?.callsPerS, 0),
    p50_ms: batched?.load.p50 ?? null,
    p99_ms: batched?.load.p99 ?? null,
    single_p50_ms: single?.load.p50 ?? null,
    single_p99_ms: single?.load.p99 ?? null,
    baseline_bare_rps: roundOrNull(bare?.load.rps, 0),
    baseline_express_rps: roundOrNull(express?.load.rps, 0),
    ratio_single_to_express: roundOrNull(singleToExpress, 3),
    ratio_batched_req_to_bare: roundOrNull(batchedToBare, 3),
    targets: {
      batched_calls_per_s_min: TARGET.batchedCallsPerS,
      batched_p99_ms_max: TARGET.batchedP99Ms,
      single_to_express_min: TARGET.singleToExpress,
      met: { ...met, all: targets.all },
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
          body_bytes: r.bodies.approxBytes,
          calls_per_request: r.bodies.calls,
          measured_s: r.load.durationS,
          ...{ requests: r.load.requests, ok_2xx: r.load.ok, non_2xx: r.load.non2xx, errors: r.load.errors, timeouts: r.load.timeouts },
          status_codes: r.load.statusCodes,
          req_per_s: round(r.load.rps, 1),
          calls_per_s: roundOrNull(r.callsPerS, 0),
          accepted_from_2xx: r.acceptedFrom2xx ?? null,
          accepted_from_metrics: r.acceptedFromMetrics ?? null,
          calls_per_s_from_metrics: roundOrNull(r.callsPerSFromMetrics, 0),
          latency_ms: { p50: r.load.p50, p90: r.load.p90, p99: r.load.p99, max: r.load.max },
          cpu_pct: r.cpu,
          redis: r.redis,
        },
      ]),
    ),
  };
  const complete = selected.length === PHASES.length && durationS >= 15;
  process.stdout.write(`wrote ${writeResult('ingest-latest.json', 'ingest', started, json, complete).join(', ')}\n`);
}

runBench(
  main,
  async () => {
    rmSync(configFile, { force: true });
    for (const prefix of prefixesInUse) await deletePrefix(redis, prefix).catch(() => undefined);
    await redis.quit().catch(() => redis.disconnect());
  },
  selected.length * (warmupS + durationS + 60) + 60,
);
