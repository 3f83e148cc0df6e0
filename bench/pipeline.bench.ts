/**
 * `pnpm bench:pipeline`: the whole chain, end to end, and what it costs Redis. Calls go through the
 * intake (Basic auth), the router and webhook-delivery (each the built service in its own process,
 * on a run-unique Redis prefix), and arrive as signed POSTs at a receiver process, which measures
 * each call's latency from the moment the load generator sent it (properties.sentAtMs) to its
 * arrival.
 * Phases, each a warm-up and then BENCH_DURATION_S measured seconds:
 *   fixed        1,000 calls/s offered (BENCH_RATE) in batches of BENCH_BATCH_SIZE (20, as server
 *                SDKs flush) to POST /v1/batch, open loop
 *   saturation   the same batches, closed loop: up to BENCH_WINDOW calls sent or accepted but not
 *                yet delivered, so every stage has work and the intake stays far below its 503
 *                backpressure
 *   single_call  saturation with one call per request to POST /v1/track (what browser SDKs send),
 *                over BENCH_SINGLE_CONNECTIONS connections
 *   replicas     batched saturation with a second webhook-delivery process beside the first: both
 *                must take work, and every accepted call must arrive
 *   baseline     the bare chain of bench/baselines/bullmq-chain.ts (BullMQ producer → worker →
 *                undici POST, one job per call), same receiver, same window
 * Delivered calls/s and latency come from the receiver; Redis commands and Redis CPU per delivered
 * call from INFO commandstats and used_cpu deltas over the measured window; CPU per process from
 * /proc; peak RSS from VmHWM.
 *
 * Env: BENCH_DURATION_S (20), BENCH_WARMUP_S (5), BENCH_RATE (1000), BENCH_BATCH_SIZE (20),
 * BENCH_WINDOW (4000 calls), BENCH_CONNECTIONS (16, load generator → intake, batches),
 * BENCH_SINGLE_CONNECTIONS (128, single calls), BENCH_PHASES (all, e.g. "fixed,saturation"),
 * BENCH_REDIS (shared: REDIS_URL, default redis://127.0.0.1:6379, with a run-unique prefix deleted
 * afterwards; private: a redis-server of the bench's own, so that commandstats hold no other
 * client's commands), BENCH_LOG_LEVEL (warn), BENCH_CPU_PROF=1 (the services run with --cpu-prof
 * into bench/results/profiles). The services' own variables (ROUTER_CONCURRENCY,
 * DELIVERY_CONCURRENCY, ...) pass through; the baseline worker uses DELIVERY_CONCURRENCY (256) and
 * DELIVERY_CONNECTIONS_PER_ORIGIN (64) too.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Pool } from 'undici';
import { startChainProcess } from './lib/chain.js';
import { distEntry, startService } from './lib/stack.js';
import { BENCH_DIR, REPO_ROOT } from './lib/deps.js';
import { LoadDriver, percentile, type Sink } from './lib/drive.js';
import { IpcClient } from './lib/ipc.js';
import { timedBatchBodies } from './lib/payloads.js';
import { freePort, killAll, machineBusySeconds, processCpuSeconds, processMemoryKb, runBench, sleep, startServer, type ChildHandle, type ServerProcess } from './lib/proc.js';
import type { ReceiverStats } from './lib/receiver.js';
import { commandDeltas, connectRedis, deletePrefix, redisSnapshot, startPrivateRedis, type RedisSnapshot } from './lib/redis.js';
import { envNumber, selectedPhases } from './lib/env.js';
import { fmtInt, fmtMs, round, table, writeResults } from './lib/report.js';

const PHASES = ['fixed', 'saturation', 'single_call', 'replicas', 'baseline'] as const;
type Phase = (typeof PHASES)[number];

const WRITE_KEY = 'bench-write-key-0001';
const SHARED_SECRET = 'whsec_bench_pipeline_0001';
/**
 * Redis per delivered call (batches and single calls), throughput as a ratio to the bare chain in
 * the same run (the machines vary by 1.7x from day to day; the absolute figure is the alternative),
 * and the latency at a fixed rate.
 */
const TARGET = {
  redisUsecPerCall: 25,
  redisCommandsPerCall: 8,
  singleRedisUsecPerCall: 40,
  deliveredCallsPerS: 8000,
  ratioToBaseline: 1.3,
  singleDeliveredCallsPerS: 3000,
  /** Single calls against the same phase of the code before batched jobs (bench/results/pipeline-before-batching.json). */
  singleVsBefore: 2,
  fixedP99Ms: 50,
};

const durationS = envNumber('BENCH_DURATION_S', 20, 1, 600);
const warmupS = envNumber('BENCH_WARMUP_S', 5, 0, 120);
const rate = envNumber('BENCH_RATE', 1000, 1, 1_000_000);
const batchSize = envNumber('BENCH_BATCH_SIZE', 20, 1, 500);
const windowCalls = envNumber('BENCH_WINDOW', 4000, batchSize, 1_000_000);
const connections = envNumber('BENCH_CONNECTIONS', 16, 1, 1000);
const singleConnections = envNumber('BENCH_SINGLE_CONNECTIONS', 128, 1, 4000);
const deliveryConcurrency = envNumber('DELIVERY_CONCURRENCY', 256, 1, 10_000);
const deliveryConnections = envNumber('DELIVERY_CONNECTIONS_PER_ORIGIN', 64, 1, 10_000);
const logLevel = process.env['BENCH_LOG_LEVEL'] ?? 'warn';
const cpuProf = process.env['BENCH_CPU_PROF'] === '1';
const redisMode = process.env['BENCH_REDIS'] ?? 'shared';
if (redisMode !== 'shared' && redisMode !== 'private') throw new Error(`BENCH_REDIS must be "shared" or "private", got "${redisMode}"`);
const selected: Phase[] = selectedPhases(PHASES);

const runTag = randomBytes(4).toString('hex');
const resultsDir = path.join(BENCH_DIR, 'results');
const profDir = path.join(resultsDir, 'profiles');
const beforeFile = path.join(resultsDir, 'pipeline-before-batching.json');
const configFile = path.join(os.tmpdir(), `eventrelay-bench-pipeline-${runTag}.json`);
const pipelinePrefix = `{bench-${runTag}-pipeline}`;
const chainPrefix = `{bench-${runTag}-chain}`;
const SERVICES = ['ingest', 'router', 'webhook-delivery'] as const;

/** A process whose CPU and memory are reported. */
interface Participant {
  readonly name: string;
  readonly pid: number | undefined;
}

interface QueueKey {
  readonly label: string;
  readonly key: string;
  readonly kind: 'list' | 'zset';
}

interface PhaseResult {
  readonly phase: Phase;
  readonly label: string;
  readonly measuredS: number;
  readonly offeredCallsPerS: number | null;
  readonly acceptedCallsPerS: number;
  readonly deliveredCallsPerS: number;
  readonly rx: ReceiverStats;
  readonly request: { p50Ms: number | null; p99Ms: number | null; count: number };
  readonly refusedBatches: number;
  readonly errors: number;
  readonly statusCodes: Record<string, number>;
  readonly redis: {
    commands: number;
    /** INFO stats total_commands_processed (Redis 7 counts the commands scripts run here too). */
    totalCommandsProcessed: number;
    perCall: number | null;
    /** Redis CPU (used_cpu_user + sys) per delivered call, µs: whole server. */
    cpuUsecPerCall: number | null;
    byCommand: { command: string; calls: number; per_call: number | null; usec: number; usec_per_call: number | null }[];
    cpuPct: number;
    usedMemoryDeltaMb: number;
  };
  readonly cpuPct: Record<string, number | null>;
  readonly queues: Record<string, { mean: number; max: number }>;
  readonly serviceMetrics: Record<string, number> | null;
  readonly drain: { seconds: number; undelivered: number };
  readonly peakRssMb: Record<string, number | null>;
}

const redisHolder: { url: string; handle?: ChildHandle } = { url: process.env['REDIS_URL'] ?? 'redis://127.0.0.1:6379' };
let redis: ReturnType<typeof connectRedis> | undefined;
const prefixesInUse = new Set<string>();

async function main(): Promise<void> {
  const started = new Date();

  for (const svc of SERVICES) if (!existsSync(distEntry(svc))) throw new Error(`${path.relative(REPO_ROOT, distEntry(svc))} is missing: run pnpm exec tsc -b (pnpm bench:pipeline does)`);
  if (redisMode === 'private') {
    const priv = await startPrivateRedis();
    redisHolder.url = priv.url;
    redisHolder.handle = priv.handle;
  }
  redis = connectRedis(redisHolder.url);
  const r = redis;
  // What the rest of the server does without us: other clients' commands land in the same commandstats.
  const bg0 = await redisSnapshot(r);
  await sleep(1000);
  const bg1 = await redisSnapshot(r);
  const backgroundPerS = Math.max(0, sumCalls(bg1) - sumCalls(bg0) - 1);
  const redisVersion = bg1.version;

  process.stderr.write(
    `bench: pipeline ${selected.join(', ')}; batches of ${batchSize}, ${fmtInt(rate)} calls/s fixed, window ${fmtInt(windowCalls)} calls at saturation; ` +
      `${warmupS} s warm-up + ${durationS} s each; ${redisMode} Redis (other clients: ~${fmtInt(backgroundPerS)} commands/s); run ${runTag}\n`,
  );

  const receiverPort = await freePort();
  const receiver = await startServer({
    name: 'receiver',
    args: ['--import', 'tsx', path.join(BENCH_DIR, 'lib', 'receiver.ts')],
    cwd: REPO_ROOT,
    env: { ...process.env, PORT: String(receiverPort), SHARED_SECRET, NODE_ENV: 'production' },
    port: receiverPort,
    readyPath: '/healthz',
    ipc: true,
  });
  let onTotal: (total: number) => void = () => undefined;
  const rx = new IpcClient(receiver.child, 'receiver', (msg) => {
    if (msg.type === 'total') onTotal(msg['total'] as number);
  });
  const hookUrl = `${receiver.url}/hook`;

  const results: PhaseResult[] = [];
  const peakRss: Record<string, number | null> = {};
  const notePeaks = (r: PhaseResult) => {
    for (const [name, mb] of Object.entries(r.peakRssMb)) peakRss[name] = Math.max(peakRss[name] ?? 0, mb ?? 0) || null;
  };

  const pipelinePhases = (['fixed', 'saturation', 'single_call', 'replicas'] as const).filter((p) => selected.includes(p));
  if (pipelinePhases.length > 0) {
    writeFileSync(
      configFile,
      JSON.stringify({
        sources: [{ id: 'bench', name: 'Bench', type: 'server', writeKey: WRITE_KEY, rateLimitPerSecond: 100_000_000 }],
        destinations: [{ id: 'bench-hook', name: 'Webhooks', enabled: true, sourceIds: ['bench'], settings: { webhooks: [{ url: hookUrl }], sharedSecret: SHARED_SECRET } }],
        audiences: [],
      }),
    );
    prefixesInUse.add(pipelinePrefix);
    const services = await startPipeline();
    const extraDeliveries: ServerProcess[] = [];
    try {
      const [ingest, router, delivery] = services;
      const headers = { 'content-type': 'application/json', authorization: `Basic ${Buffer.from(`${WRITE_KEY}:`).toString('base64')}` };
      const q = (queue: string, part: string, kind: QueueKey['kind'] = 'list'): QueueKey => ({ label: `${queue} ${part}`, key: `${pipelinePrefix}:${queue}:${part}`, kind });
      const queues = [q('route', 'wait'), q('route', 'active'), q('deliver', 'wait'), q('deliver', 'active'), q('deliver', 'delayed', 'zset')];
      for (const phase of pipelinePhases) {
        const single = phase === 'single_call';
        const bodies = timedBatchBodies(`${runTag}-${phase}`, single ? 1 : batchSize, { single });
        const poolConnections = single ? singleConnections : connections;
        const pool = new Pool(ingest.url, { connections: poolConnections, pipelining: 1, keepAliveTimeout: 60_000 });
        const sink: Sink = {
          calls: bodies.calls,
          async send() {
            const res = await pool.request({ method: 'POST', path: single ? '/v1/track' : '/v1/batch', headers, body: bodies.next(performance.timeOrigin + performance.now()) });
            await res.body.dump();
            return res.statusCode;
          },
        };
        const driver = new LoadDriver(sink);
        onTotal = (t) => driver.received(t);
        driver.received((await rx.call<{ total: number }>('total')).total);
        if (phase === 'replicas') extraDeliveries.push(await startDeliveryReplica(2));
        const deliveries = [delivery, ...extraDeliveries];
        const participants: Participant[] = [
          { name: 'ingest', pid: ingest.child.pid },
          { name: 'router', pid: router.child.pid },
          ...deliveries.map((d, i) => ({ name: i === 0 ? 'webhook-delivery' : `webhook-delivery-${i + 1}`, pid: d.child.pid })),
          { name: 'receiver', pid: receiver.child.pid },
          ...(redisHolder.handle ? [{ name: 'redis', pid: redisHolder.handle.child.pid }] : []),
        ];
        const start = phase === 'fixed' ? () => driver.startRate(rate) : () => driver.startWindow(windowCalls, poolConnections);
        const label =
          phase === 'fixed'
            ? `fixed ${fmtInt(rate)} calls/s`
            : phase === 'single_call'
              ? `single calls, saturation (window ${fmtInt(windowCalls)})`
              : phase === 'replicas'
                ? `2 delivery replicas, saturation (window ${fmtInt(windowCalls)})`
                : `saturation (window ${fmtInt(windowCalls)})`;
        const scrape = () => scrapePipeline(ingest.url, router.url, deliveries.map((d) => d.url));
        const result = await runPhase({ phase, label, driver, start, rx, participants, queues, scrape, offered: phase === 'fixed' ? rate : null });
        results.push(result);
        notePeaks(result);
        await pool.close();
      }
    } finally {
      for (const s of [...extraDeliveries, ...[...services].reverse()]) await s.stop();
      rmSync(configFile, { force: true });
    }
  }

  if (selected.includes('baseline')) {
    await rx.call('forget');
    prefixesInUse.add(chainPrefix);
    const chainEnv = {
      ...process.env,
      REDIS_URL: redisHolder.url,
      PREFIX: chainPrefix,
      BATCH_SIZE: String(batchSize),
      RUN_TAG: runTag,
      TARGET_URL: hookUrl,
      CONCURRENCY: String(deliveryConcurrency),
      CONNECTIONS: String(deliveryConnections),
      NODE_ENV: 'production',
    };
    const worker = await startChainProcess('baseline-worker', 'worker', chainEnv);
    const producer = await startChainProcess('baseline-producer', 'producer', chainEnv);
    try {
      const driver = new LoadDriver({ calls: batchSize, send: () => producer.ipc.call<number>('add').then(() => 200) });
      onTotal = (t) => driver.received(t);
      // The receiver pushes its count only when it changes: the new driver starts from the count now.
      driver.received((await rx.call<{ total: number }>('total')).total);
      const participants: Participant[] = [
        { name: 'baseline-producer', pid: producer.handle.child.pid },
        { name: 'baseline-worker', pid: worker.handle.child.pid },
        { name: 'receiver', pid: receiver.child.pid },
        ...(redisHolder.handle ? [{ name: 'redis', pid: redisHolder.handle.child.pid }] : []),
      ];
      const queues: QueueKey[] = [
        { label: 'chain wait', key: `${chainPrefix}:chain:wait`, kind: 'list' },
        { label: 'chain active', key: `${chainPrefix}:chain:active`, kind: 'list' },
      ];
      const result = await runPhase({
        phase: 'baseline',
        label: `baseline chain (window ${fmtInt(windowCalls)})`,
        driver,
        start: () => driver.startWindow(windowCalls, connections),
        rx,
        participants,
        queues,
        scrape: undefined,
        offered: null,
      });
      results.push(result);
      notePeaks(result);
    } finally {
      await producer.handle.stop();
      await worker.handle.stop();
    }
  }
  peakRss['loadgen (bench process)'] = round(process.resourceUsage().maxRSS / 1024, 1);
  await receiver.stop();

  report(started, results, peakRss, { backgroundPerS, redisVersion });
}

function serviceEnv(): NodeJS.ProcessEnv {
  return {
    ...process.env,
    REDIS_URL: redisHolder.url,
    EVENTRELAY_PREFIX: pipelinePrefix,
    EVENTRELAY_CONFIG: configFile,
    LOG_LEVEL: logLevel,
    NODE_ENV: 'production',
  };
}

function profArgs(name: string): string[] {
  return cpuProf ? ['--cpu-prof', `--cpu-prof-dir=${profDir}`, `--cpu-prof-name=pipeline-${name}-${runTag}.cpuprofile`] : [];
}

async function startPipeline(): Promise<[ServerProcess, ServerProcess, ServerProcess]> {
  if (cpuProf) mkdirSync(profDir, { recursive: true });
  const start = (svc: (typeof SERVICES)[number]) => startService(svc, serviceEnv(), { nodeArgs: profArgs(svc) });
  // Consumers first, so that nothing waits in a queue for a worker still starting.
  const delivery = await start('webhook-delivery');
  const router = await start('router');
  const ingest = await start('ingest');
  return [ingest, router, delivery];
}

/** Another webhook-delivery process on the same queue: replicas share the work through Redis alone. */
function startDeliveryReplica(n: number): Promise<ServerProcess> {
  return startService('webhook-delivery', serviceEnv(), { nodeArgs: profArgs(`webhook-delivery-${n}`) });
}

interface PhaseSpec {
  readonly phase: Phase;
  readonly label: string;
  readonly driver: LoadDriver;
  readonly start: () => void;
  readonly rx: IpcClient;
  readonly participants: readonly Participant[];
  readonly queues: readonly QueueKey[];
  readonly scrape: (() => Promise<Record<string, number>>) | undefined;
  readonly offered: number | null;
}

async function runPhase(spec: PhaseSpec): Promise<PhaseResult> {
  const { phase, driver, rx, participants } = spec;
  const r = redis!;
  process.stderr.write(`bench: ${phase}: warming up ${warmupS} s …\n`);
  spec.start();
  try {
    await sleep(warmupS * 1000);

    await rx.call('reset');
    const metricsBefore = spec.scrape ? await spec.scrape() : undefined;
    const redisBefore = await redisSnapshot(r);
    const cpuBefore = participants.map((p) => processCpuSeconds(p.pid));
    const loadgenBefore = process.cpuUsage();
    const machineBefore = machineBusySeconds();
    const acceptedBefore = driver.acceptedCalls;
    const refusedBefore = driver.refusedBatches;
    const errorsBefore = driver.errors;
    const codesBefore = { ...driver.statusCodes };
    driver.requestMs = [];
    driver.recording = true;
    const wallBefore = performance.now();
    process.stderr.write(`bench: ${phase}: measuring ${durationS} s …\n`);

    const depth = sampleQueues(spec.queues);
    await sleep(durationS * 1000);
    const stats = await rx.call<ReceiverStats>('stats');
    const wallS = (performance.now() - wallBefore) / 1000;
    driver.recording = false;
    const queues = await depth.stop();
    const redisAfter = await redisSnapshot(r);
    const cpuAfter = participants.map((p) => processCpuSeconds(p.pid));
    const loadgen = process.cpuUsage(loadgenBefore);
    const machineAfter = machineBusySeconds();
    const metricsAfter = spec.scrape ? await spec.scrape() : undefined;
    const peakRssMb = Object.fromEntries(participants.map((p) => [p.name, kbToMb(processMemoryKb(p.pid)?.peakKb)]));

    const pct = (s: number | undefined) => (s === undefined ? null : round((s / wallS) * 100, 1));
    const cpuPct: Record<string, number | null> = {};
    let accounted = 0;
    participants.forEach((p, i) => {
      const b = cpuBefore[i];
      const a = cpuAfter[i];
      const s = a === undefined || b === undefined ? undefined : a - b;
      accounted += s ?? 0;
      cpuPct[p.name] = pct(s);
    });
    const redisCpuS = redisHolder.handle ? 0 : redisAfter.cpuSeconds - redisBefore.cpuSeconds;
    if (!redisHolder.handle) cpuPct['redis'] = pct(redisCpuS);
    const loadgenS = (loadgen.user + loadgen.system) / 1e6;
    cpuPct['loadgen'] = pct(loadgenS);
    cpuPct['other'] = machineBefore === undefined || machineAfter === undefined ? null : pct(Math.max(0, machineAfter - machineBefore - accounted - redisCpuS - loadgenS));
    cpuPct['machine'] = machineBefore === undefined || machineAfter === undefined ? null : pct(machineAfter - machineBefore);

    const delivered = stats.delivered;
    const deltas = commandDeltas(redisBefore, redisAfter, Number.POSITIVE_INFINITY);
    const commands = deltas.reduce((a, d) => a + d.calls, 0);
    const perCall = (n: number) => (delivered > 0 ? round(n / delivered, 3) : null);
    const codes: Record<string, number> = {};
    for (const [code, n] of Object.entries(driver.statusCodes)) if (n - (codesBefore[code] ?? 0) > 0) codes[code] = n - (codesBefore[code] ?? 0);

    let serviceMetrics: Record<string, number> | null = null;
    if (metricsBefore && metricsAfter) {
      serviceMetrics = {};
      for (const [k, v] of Object.entries(metricsAfter)) serviceMetrics[k] = v - (metricsBefore[k] ?? 0);
    }

    const result: Omit<PhaseResult, 'drain'> = {
      phase,
      label: spec.label,
      measuredS: round(stats.windowS, 3),
      offeredCallsPerS: spec.offered,
      acceptedCallsPerS: (driver.acceptedCalls - acceptedBefore) / wallS,
      deliveredCallsPerS: delivered / stats.windowS,
      rx: stats,
      request: { p50Ms: percentile(driver.requestMs, 0.5), p99Ms: percentile(driver.requestMs, 0.99), count: driver.requestMs.length },
      refusedBatches: driver.refusedBatches - refusedBefore,
      errors: driver.errors - errorsBefore,
      statusCodes: codes,
      redis: {
        commands,
        totalCommandsProcessed: redisAfter.totalCommands - redisBefore.totalCommands,
        perCall: perCall(commands),
        cpuUsecPerCall: perCall((redisAfter.cpuSeconds - redisBefore.cpuSeconds) * 1e6),
        byCommand: deltas
          .sort((a, b) => b.calls - a.calls)
          .map((d) => ({ command: d.command, calls: d.calls, per_call: perCall(d.calls), usec: d.usec, usec_per_call: perCall(d.usec) })),
        cpuPct: round(((redisAfter.cpuSeconds - redisBefore.cpuSeconds) / wallS) * 100, 1),
        usedMemoryDeltaMb: round((redisAfter.usedMemory - redisBefore.usedMemory) / 2 ** 20, 1),
      },
      cpuPct,
      queues,
      serviceMetrics,
      peakRssMb,
    };
    process.stderr.write(
      `bench: ${phase}: ${fmtInt(result.deliveredCallsPerS)} delivered calls/s, p50 ${fmtMs(stats.p50Ms ?? undefined)} ms, p99 ${fmtMs(stats.p99Ms ?? undefined)} ms, ` +
        `${result.redis.perCall ?? '-'} Redis commands/call; draining …\n`,
    );
    await driver.stop();
    const drain = await drainPipeline(driver);
    process.stderr.write(`bench: ${phase}: drained in ${drain.seconds} s${drain.undelivered > 0 ? `, ${fmtInt(drain.undelivered)} accepted calls not delivered` : ''}\n`);
    return { ...result, drain };
  } finally {
    await driver.stop();
  }
}

/** Waits until every accepted call reached the receiver, or nothing arrived for 5 s, or 60 s. */
async function drainPipeline(driver: LoadDriver): Promise<{ seconds: number; undelivered: number }> {
  const began = performance.now();
  let last = driver.outstanding;
  let lastChange = began;
  while (driver.outstanding > 0) {
    const now = performance.now();
    if (now - lastChange > 5000 || now - began > 60_000) break;
    await sleep(50);
    if (driver.outstanding !== last) {
      last = driver.outstanding;
      lastChange = performance.now();
    }
  }
  return { seconds: round((performance.now() - began) / 1000, 2), undelivered: Math.max(0, driver.outstanding) };
}

/** Polls queue lengths every 250 ms (a handful of LLEN/ZCARD, noise next to the pipeline's commands). */
function sampleQueues(keys: readonly QueueKey[]): { stop(): Promise<Record<string, { mean: number; max: number }>> } {
  const r = redis!;
  const samples = keys.map(() => [] as number[]);
  let running = true;
  const loop = (async () => {
    while (running) {
      const values = await Promise.all(keys.map((k) => (k.kind === 'list' ? r.llen(k.key) : r.zcard(k.key)).catch(() => NaN)));
      values.forEach((v, i) => {
        if (Number.isFinite(v)) samples[i]?.push(v);
      });
      await sleep(250);
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return Object.fromEntries(
        keys.map((k, i) => {
          const s = samples[i] ?? [];
          return [k.label, { mean: s.length ? round(s.reduce((a, b) => a + b, 0) / s.length, 1) : 0, max: s.length ? Math.max(...s) : 0 }];
        }),
      );
    },
  };
}

const METRICS: readonly { name: string; from: 'ingest' | 'router' | 'delivery'; metric: string; label?: string }[] = [
  { name: 'ingest_accepted_calls', from: 'ingest', metric: 'eventrelay_ingest_calls_total', label: 'outcome="accepted"' },
  { name: 'ingest_duplicate_calls', from: 'ingest', metric: 'eventrelay_ingest_calls_total', label: 'outcome="duplicate"' },
  { name: 'router_routed_calls', from: 'router', metric: 'eventrelay_router_calls_total', label: 'result="routed"' },
  { name: 'router_delivery_jobs', from: 'router', metric: 'eventrelay_router_deliveries_total' },
  { name: 'delivery_delivered', from: 'delivery', metric: 'eventrelay_delivery_messages_total', label: 'result="delivered"' },
  { name: 'delivery_retry_scheduled', from: 'delivery', metric: 'eventrelay_delivery_messages_total', label: 'result="retry_scheduled"' },
  { name: 'delivery_parked', from: 'delivery', metric: 'eventrelay_delivery_parked_total' },
];

/** The counters above, summed over the delivery replicas, plus each replica's delivered calls (`delivery_<n>_delivered`). */
async function scrapePipeline(ingestUrl: string, routerUrl: string, deliveryUrls: readonly string[]): Promise<Record<string, number>> {
  const text = (u: string) => fetch(`${u}/metrics`).then((res) => res.text());
  const [ingestText, routerText, ...deliveryTexts] = await Promise.all([text(ingestUrl), text(routerUrl), ...deliveryUrls.map(text)]);
  const sum = (texts: readonly string[], m: (typeof METRICS)[number]) => {
    let total = 0;
    for (const t of texts) {
      for (const line of t.split('\n')) {
        if (!(line.startsWith(`${m.metric}{`) || line.startsWith(`${m.metric} `))) continue;
        if (m.label !== undefined && !line.includes(m.label)) continue;
        total += Number(line.slice(line.lastIndexOf(' ') + 1)) || 0;
      }
    }
    return total;
  };
  const out: Record<string, number> = {};
  for (const m of METRICS) out[m.name] = sum(m.from === 'ingest' ? [ingestText ?? ''] : m.from === 'router' ? [routerText ?? ''] : deliveryTexts, m);
  const delivered = METRICS.find((m) => m.name === 'delivery_delivered')!;
  if (deliveryTexts.length > 1) deliveryTexts.forEach((t, i) => (out[`delivery_${i + 1}_delivered`] = sum([t], delivered)));
  return out;
}

function sumCalls(s: RedisSnapshot): number {
  let n = 0;
  for (const c of s.commands.values()) n += c.calls;
  return n;
}

function kbToMb(kb: number | undefined): number | null {
  return kb === undefined ? null : round(kb / 1024, 1);
}

function verdict(v: boolean | undefined): string {
  return v === undefined ? 'not measured' : v ? 'met' : 'MISSED';
}

/** The four Redis figures of a phase: per delivered call, and what one Redis core could carry at that cost. */
function redisFigures(r: PhaseResult | undefined) {
  const usec = r?.redis.cpuUsecPerCall ?? null;
  return {
    delivered_calls_per_s: r ? Math.round(r.deliveredCallsPerS) : null,
    redis_usec_per_call: usec,
    redis_commands_per_call: r?.redis.perCall ?? null,
    redis_ceiling_calls_per_s: usec !== null && usec > 0 ? Math.round(1e6 / usec) : null,
  };
}

/** The single-call phase of the code before batched jobs, measured by this bench (committed once). */
function readBefore(): { date: string; delivered_calls_per_s: number; ratio_to_baseline: number | null; redis_usec_per_call: number | null } | undefined {
  if (!existsSync(beforeFile)) return undefined;
  const json = JSON.parse(readFileSync(beforeFile, 'utf8')) as { date: string; single_call?: { delivered_calls_per_s: number; ratio_to_baseline: number | null; redis_usec_per_call: number | null } };
  return json.single_call ? { date: json.date, ...json.single_call } : undefined;
}

function report(started: Date, results: PhaseResult[], peakRss: Record<string, number | null>, ctx: { backgroundPerS: number; redisVersion: string }): void {
  const by = (p: Phase) => results.find((r) => r.phase === p);
  const fixed = by('fixed');
  const sat = by('saturation');
  const single = by('single_call');
  const replicas = by('replicas');
  const base = by('baseline');
  const ratioOf = (r: PhaseResult | undefined) => (r && base && base.deliveredCallsPerS > 0 ? r.deliveredCallsPerS / base.deliveredCallsPerS : undefined);
  const ratio = ratioOf(sat);
  const singleRatio = ratioOf(single);
  const before = readBefore();
  const singleVsBefore = single && before ? single.deliveredCallsPerS / before.delivered_calls_per_s : undefined;
  const singleRatioVsBefore = singleRatio !== undefined && before?.ratio_to_baseline ? singleRatio / before.ratio_to_baseline : undefined;
  const replicaDelivered = replicas?.serviceMetrics ? Object.keys(replicas.serviceMetrics).filter((k) => /^delivery_\d+_delivered$/.test(k)).sort().map((k) => replicas.serviceMetrics?.[k] ?? 0) : [];
  const replicasLost = replicas ? replicas.drain.undelivered : undefined;
  const below = (v: number | null | undefined, max: number) => (v === null || v === undefined ? undefined : v <= max);
  const met = {
    redis_usec_per_call: below(sat?.redis.cpuUsecPerCall, TARGET.redisUsecPerCall),
    redis_commands_per_call: below(sat?.redis.perCall, TARGET.redisCommandsPerCall),
    single_call_redis_usec_per_call: below(single?.redis.cpuUsecPerCall, TARGET.singleRedisUsecPerCall),
    delivered_calls_per_s: sat && ratio !== undefined ? sat.deliveredCallsPerS >= TARGET.deliveredCallsPerS || ratio >= TARGET.ratioToBaseline : undefined,
    single_call_delivered_calls_per_s: single ? single.deliveredCallsPerS >= TARGET.singleDeliveredCallsPerS && (singleRatioVsBefore === undefined ? undefined : singleRatioVsBefore >= TARGET.singleVsBefore) : undefined,
    fixed_rate_p99_ms: fixed && fixed.rx.p99Ms !== null ? fixed.rx.p99Ms < TARGET.fixedP99Ms : undefined,
    replicas_share_and_lose_nothing: replicas ? replicaDelivered.length >= 2 && replicaDelivered.every((n) => n > 0) && replicasLost === 0 : undefined,
  };
  const allMet = Object.values(met).every((v) => v === true);

  const out: string[] = [''];
  out.push(
    table(
      ['phase', 'offered calls/s', 'accepted calls/s', 'delivered calls/s', 'p50 ms', 'p90 ms', 'p99 ms', 'max ms', 'intake p99 ms', 'redis cmds/call', 'redis µs/call', 'refused/errors'],
      results.map((r) => [
        r.label,
        r.offeredCallsPerS === null ? '-' : fmtInt(r.offeredCallsPerS),
        fmtInt(r.acceptedCallsPerS),
        fmtInt(r.deliveredCallsPerS),
        fmtMs(r.rx.p50Ms ?? undefined),
        fmtMs(r.rx.p90Ms ?? undefined),
        fmtMs(r.rx.p99Ms ?? undefined),
        fmtMs(r.rx.maxMs ?? undefined),
        r.phase === 'baseline' ? '-' : fmtMs(r.request.p99Ms ?? undefined),
        r.redis.perCall === null ? '-' : r.redis.perCall.toFixed(2),
        r.redis.cpuUsecPerCall === null ? '-' : r.redis.cpuUsecPerCall.toFixed(1),
        `${r.refusedBatches}/${r.errors}`,
      ]),
    ),
  );

  const cpuNames = [...new Set(results.flatMap((r) => Object.keys(r.cpuPct)))];
  out.push('');
  out.push('CPU, % of one core during the measured window (2 cores = 200%):');
  out.push(table(['phase', ...cpuNames], results.map((r) => [r.phase, ...cpuNames.map((n) => (r.cpuPct[n] === undefined || r.cpuPct[n] === null ? '-' : String(Math.round(r.cpuPct[n]))))])));
  // CPU time per unit of work moves far less than throughput when other work shares the cores.
  const ownNames = cpuNames.filter((n) => n !== 'other' && n !== 'machine');
  out.push('');
  out.push('CPU µs per delivered call (less sensitive to other load on the machine than calls/s):');
  out.push(
    table(
      ['phase', ...ownNames, 'sum'],
      results.map((r) => {
        const per = cpuUsecPerCall(r);
        return [r.phase, ...ownNames.map((n) => (per[n] === undefined ? '-' : fmtInt(per[n]))), fmtInt(Object.values(per).reduce((a, b) => a + b, 0))];
      }),
    ),
  );

  out.push('');
  out.push('Queue lengths during the measured window, mean (max):');
  for (const r of results) out.push(`  ${r.phase}: ${Object.entries(r.queues).map(([k, v]) => `${k} ${fmtInt(v.mean)} (${fmtInt(v.max)})`).join(', ')}`);
  for (const r of results) if (r.serviceMetrics) out.push(`  ${r.phase} service counters: ${Object.entries(r.serviceMetrics).map(([k, v]) => `${k} ${fmtInt(v)}`).join(', ')}`);

  const commandNames = [...new Set(results.flatMap((r) => r.redis.byCommand.map((c) => c.command)))];
  const callsOf = (r: PhaseResult | undefined, c: string) => r?.redis.byCommand.find((x) => x.command === c);
  const ranked = commandNames.sort((a, b) => (callsOf(sat ?? fixed ?? base, b)?.calls ?? 0) - (callsOf(sat ?? fixed ?? base, a)?.calls ?? 0));
  const shown = ranked.filter((c) => results.some((r) => (callsOf(r, c)?.per_call ?? 0) >= 0.005));
  out.push('');
  out.push('Redis commands per delivered call (INFO commandstats deltas, whole server; commands run inside Lua scripts count too,');
  out.push('and evalsha µs include them, so the µs column does not add up; the last line is Redis CPU time per call):');
  out.push(
    table(
      ['command', ...results.map((r) => `${r.phase} /call`), ...results.map((r) => `${r.phase} µs/call`)],
      [
        ...shown.map((c) => [c, ...results.map((r) => fmtPerCall(callsOf(r, c)?.per_call)), ...results.map((r) => fmtPerCall(callsOf(r, c)?.usec_per_call))]),
        ['total', ...results.map((r) => fmtPerCall(r.redis.perCall)), ...results.map(() => '')],
        ['Redis CPU µs/call', ...results.map(() => ''), ...results.map((r) => fmtPerCall(r.redis.cpuUsecPerCall))],
      ],
    ),
  );

  out.push('');
  out.push(`Peak RSS (VmHWM), MB: ${Object.entries(peakRss).map(([k, v]) => `${k} ${v ?? '-'}`).join(', ')}`);
  out.push('');
  const checks = results.map(
    (r) =>
      `${r.phase}: ${r.phase === 'baseline' ? 'not signed' : `${r.rx.badSignatures} bad signatures, ${r.rx.unsigned} unsigned`}, ${r.rx.duplicates} duplicates, ${fmtInt(r.drain.undelivered)} undelivered after drain`,
  );
  out.push(`receiver checks: ${checks.join('; ')}`);
  if (replicas) out.push(`replicas: delivered calls per webhook-delivery process during the window: ${replicaDelivered.map((n) => fmtInt(n)).join(', ')}; ${fmtInt(replicasLost)} accepted calls not delivered after the drain`);
  const ceiling = (r: PhaseResult | undefined) => redisFigures(r).redis_ceiling_calls_per_s;
  if (sat) out.push(`one Redis core at this cost per call: ${fmtInt(ceiling(sat) ?? undefined)} delivered calls/s (batches)${single ? `, ${fmtInt(ceiling(single) ?? undefined)} (single calls)` : ''}`);
  if (base && sat) out.push(`pipeline / baseline chain delivered calls/s: batches ${ratio === undefined ? '-' : ratio.toFixed(3)}${singleRatio === undefined ? '' : `, single calls ${singleRatio.toFixed(3)}`}`);
  if (single && before) out.push(`single calls against the code before batched jobs (${before.date}): ${singleVsBefore?.toFixed(2) ?? '-'}x the calls/s, ${singleRatioVsBefore?.toFixed(2) ?? '-'}x the ratio to the bare chain`);
  out.push(
    `targets: Redis <= ${TARGET.redisUsecPerCall} µs/call: ${verdict(met.redis_usec_per_call)}; <= ${TARGET.redisCommandsPerCall} commands/call: ${verdict(met.redis_commands_per_call)}; ` +
      `single calls <= ${TARGET.singleRedisUsecPerCall} µs/call: ${verdict(met.single_call_redis_usec_per_call)}; >= ${fmtInt(TARGET.deliveredCallsPerS)} calls/s or >= ${TARGET.ratioToBaseline}x the bare chain: ${verdict(met.delivered_calls_per_s)}; ` +
      `single calls >= ${fmtInt(TARGET.singleDeliveredCallsPerS)}/s and >= ${TARGET.singleVsBefore}x before: ${verdict(met.single_call_delivered_calls_per_s)}; p99 < ${TARGET.fixedP99Ms} ms at ${fmtInt(rate)} calls/s: ${verdict(met.fixed_rate_p99_ms)}; ` +
      `two replicas share the work, nothing lost: ${verdict(met.replicas_share_and_lose_nothing)}  =>  ${allMet ? 'ALL MET' : 'NOT ALL MET'}`,
  );
  const busiest = Math.max(...results.map((r) => r.cpuPct['other'] ?? 0));
  if (busiest > 25) out.push(`warning: other processes used up to ${Math.round(busiest)}% of a core during a phase; figures are disturbed`);
  if (redisMode === 'shared') {
    const worst = Math.max(...results.map((r) => (r.redis.commands > 0 ? (ctx.backgroundPerS * r.measuredS) / r.redis.commands : 0)));
    if (worst > 0.05) out.push(`warning: other Redis clients ran ~${fmtInt(ctx.backgroundPerS)} commands/s before the run (up to ${Math.round(worst * 100)}% of a phase's count); BENCH_REDIS=private isolates commandstats`);
  }
  if (results.some((r) => r.refusedBatches > 0)) out.push('warning: some batches were refused (non-2xx) or failed; only accepted calls count');
  const cpus = os.cpus();
  out.push(`machine: ${cpus.length} x ${cpus[0]?.model.trim() ?? 'unknown'}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}, Redis ${ctx.redisVersion} (${redisMode})`);
  process.stdout.write(out.join('\n') + '\n');

  const phaseJson = (r: PhaseResult) => ({
    label: r.label,
    measured_s: r.measuredS,
    offered_calls_per_s: r.offeredCallsPerS,
    accepted_calls_per_s: Math.round(r.acceptedCallsPerS),
    delivered_calls_per_s: Math.round(r.deliveredCallsPerS),
    delivered_calls: r.rx.delivered,
    p50_ms: r.rx.p50Ms,
    p90_ms: r.rx.p90Ms,
    p99_ms: r.rx.p99Ms,
    max_ms: r.rx.maxMs,
    mean_ms: r.rx.meanMs,
    redis_commands_per_call: r.redis.perCall,
    redis_usec_per_call: r.redis.cpuUsecPerCall,
    intake_request_ms: r.phase === 'baseline' ? null : { p50: r.request.p50Ms, p99: r.request.p99Ms, requests: r.request.count },
    refused_batches: r.refusedBatches,
    errors: r.errors,
    status_codes: r.statusCodes,
    // The bare chain does not sign, so its signature counts mean nothing.
    receiver_checks: { bad_signatures: r.phase === 'baseline' ? null : r.rx.badSignatures, unsigned: r.phase === 'baseline' ? null : r.rx.unsigned, no_timestamp: r.rx.noStamp, duplicates: r.rx.duplicates },
    redis: {
      commands: r.redis.commands,
      total_commands_processed: r.redis.totalCommandsProcessed,
      commands_per_call: r.redis.perCall,
      cpu_usec_per_call: r.redis.cpuUsecPerCall,
      cpu_pct: r.redis.cpuPct,
      used_memory_delta_mb: r.redis.usedMemoryDeltaMb,
      by_command: r.redis.byCommand,
    },
    cpu_pct: r.cpuPct,
    cpu_usec_per_call: Object.fromEntries(Object.entries(cpuUsecPerCall(r)).map(([k, v]) => [k, Math.round(v)])),
    queue_lengths: r.queues,
    service_counters: r.serviceMetrics,
    drain: r.drain,
    peak_rss_mb: r.peakRssMb,
  });
  const cpus0 = cpus[0]?.model.trim() ?? 'unknown';
  const json = {
    date: started.toISOString(),
    duration_s: durationS,
    warmup_s: warmupS,
    batch_size: batchSize,
    fixed_rate_offered_calls_per_s: rate,
    saturation_window_calls: windowCalls,
    loadgen_connections: connections,
    loadgen_single_call_connections: singleConnections,
    delivery_concurrency: deliveryConcurrency,
    delivery_connections_per_origin: deliveryConnections,
    log_level: logLevel,
    redis_mode: redisMode,
    phases: selected,
    ...redisFigures(sat),
    ratio_to_baseline: ratio === undefined ? null : round(ratio, 3),
    p50_ms: sat?.rx.p50Ms ?? null,
    p99_ms: sat?.rx.p99Ms ?? null,
    single_call: single
      ? {
          ...redisFigures(single),
          ratio_to_baseline: singleRatio === undefined ? null : round(singleRatio, 3),
          p99_ms: single.rx.p99Ms,
          intake_request_p99_ms: single.request.p99Ms,
          before_batching: before ?? null,
          vs_before: singleVsBefore === undefined ? null : round(singleVsBefore, 2),
          ratio_vs_before: singleRatioVsBefore === undefined ? null : round(singleRatioVsBefore, 2),
        }
      : null,
    replicas: replicas
      ? {
          delivered_calls_per_s: Math.round(replicas.deliveredCallsPerS),
          delivered_per_replica: replicaDelivered,
          undelivered_after_drain: replicasLost,
          duplicates: replicas.rx.duplicates,
          redis_usec_per_call: replicas.redis.cpuUsecPerCall,
        }
      : null,
    fixed_rate: fixed
      ? { offered_calls_per_s: rate, delivered_calls_per_s: Math.round(fixed.deliveredCallsPerS), p50_ms: fixed.rx.p50Ms, p90_ms: fixed.rx.p90Ms, p99_ms: fixed.rx.p99Ms, max_ms: fixed.rx.maxMs, redis_commands_per_call: fixed.redis.perCall, redis_usec_per_call: fixed.redis.cpuUsecPerCall }
      : null,
    fixed_rate_p50_ms: fixed?.rx.p50Ms ?? null,
    fixed_rate_p99_ms: fixed?.rx.p99Ms ?? null,
    baseline: base ? Math.round(base.deliveredCallsPerS) : null,
    baseline_chain: base ? { delivered_calls_per_s: Math.round(base.deliveredCallsPerS), p50_ms: base.rx.p50Ms, p99_ms: base.rx.p99Ms, redis_commands_per_call: base.redis.perCall, redis_usec_per_call: base.redis.cpuUsecPerCall } : null,
    peak_rss_mb: peakRss,
    targets: {
      redis_usec_per_call_max: TARGET.redisUsecPerCall,
      redis_commands_per_call_max: TARGET.redisCommandsPerCall,
      single_call_redis_usec_per_call_max: TARGET.singleRedisUsecPerCall,
      delivered_calls_per_s_min: TARGET.deliveredCallsPerS,
      ratio_to_baseline_min: TARGET.ratioToBaseline,
      single_call_delivered_calls_per_s_min: TARGET.singleDeliveredCallsPerS,
      single_call_vs_before_min: TARGET.singleVsBefore,
      fixed_rate_p99_ms_max: TARGET.fixedP99Ms,
      met: { ...met, all: allMet },
    },
    machine: {
      cpus: cpus.length,
      model: cpus0,
      node: process.version,
      total_mem_bytes: os.totalmem(),
      total_mem_gib: round(os.totalmem() / 2 ** 30, 1),
      platform: `${os.platform()} ${os.release()}`,
      redis: ctx.redisVersion,
      redis_other_clients_commands_per_s_before_run: ctx.backgroundPerS,
    },
    notes:
      'Everything on one machine: Redis, ingest, router, webhook-delivery, the receiver and the load generator (this process). ' +
      'Top-level delivered_calls_per_s, redis_usec_per_call, redis_commands_per_call, redis_ceiling_calls_per_s (1,000,000 / redis_usec_per_call: what one Redis core could carry), ratio_to_baseline, p50_ms and p99_ms are the batched saturation phase; single_call holds the same for one call per request (POST /v1/track); ' +
      'fixed_rate holds the 1,000 calls/s phase (the p99 target applies there); replicas the batched saturation phase with two webhook-delivery processes; baseline is the bare chain delivered calls/s at the same window. ' +
      'single_call.vs_before and ratio_vs_before compare with the same phase of the code before batched jobs (bench/results/pipeline-before-batching.json): the first in calls/s, the second in the ratio to the bare chain of each run, which machine drift does not move. ' +
      'Latency is receiver arrival minus the send time the load generator put in each call (properties.sentAtMs), so it includes the intake request. ' +
      'Delivered counts every POST the receiver got in the window. Saturation is a closed loop (window of calls sent or accepted but not delivered), so its latency reflects the window, not a target. ' +
      'Redis commands are whole-server INFO commandstats deltas (with BENCH_REDIS=shared other clients count too) and include the commands Lua scripts run (by_command usec of evalsha includes its inner commands, so usec do not add up); redis_usec_per_call is Redis CPU (used_cpu_user + used_cpu_sys) per delivered call. ' +
      'cpu_pct is percent of one core; other is what the rest of the machine used.',
    details: Object.fromEntries(results.map((r) => [r.phase, phaseJson(r)])),
  };
  writeResults(resultsDir, REPO_ROOT, 'pipeline', started, json, selected.length === PHASES.length);
}

/** Each process's CPU per delivered call, µs (machine and other left out). */
function cpuUsecPerCall(r: PhaseResult): Record<string, number> {
  const out: Record<string, number> = {};
  if (r.deliveredCallsPerS <= 0) return out;
  for (const [name, pct] of Object.entries(r.cpuPct)) if (pct !== null && name !== 'other' && name !== 'machine') out[name] = ((pct / 100) * 1e6) / r.deliveredCallsPerS;
  return out;
}

function fmtPerCall(n: number | null | undefined): string {
  return n === null || n === undefined ? '-' : n.toFixed(2);
}

async function cleanup(): Promise<void> {
  const privateRedis = redisHolder.handle;
  // A private Redis goes with the rest (nothing to delete there); on the shared one the run's keys are deleted.
  killAll();
  rmSync(configFile, { force: true });
  if (redis) {
    if (!privateRedis) {
      for (const prefix of prefixesInUse) {
        const deleted = await deletePrefix(redis, prefix).catch(() => 0);
        process.stderr.write(`bench: deleted ${fmtInt(deleted)} keys under ${prefix}\n`);
      }
      await redis.quit().catch(() => redis?.disconnect());
    } else redis.disconnect();
  }
  await privateRedis?.stop();
}

runBench(main, cleanup, selected.length * (warmupS + durationS + 120) + 120);
