/**
 * One run of one scenario of `pnpm bench`: a fresh system under test on a run-unique Redis prefix,
 * the receivers set to the scenario's plan, load at a fixed rate or to saturation for a warm-up and
 * a measured window (the scenario's events fire in it), then the settle wait and the verification
 * pass. Returns the figures; throws only when the run could not be carried out. The pipeline
 * detail mode runs the same with single calls, a second webhook-delivery, or the Redis figures.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Pool } from 'undici';
import type { Redis } from 'ioredis';
import { readQueues } from '@eventrelay/runtime';
import { deletePrefix, sleep, startPrivateRedis, type PrivateRedis } from '@eventrelay/testkit';
import { Arrivals } from './arrivals.js';
import type { ChaosReceiver } from './chaos-client.js';
import { LoadDriver, type Sink } from './drive.js';
import { messageIdOf, timedBatchBodies, type TimedBodyFactory } from './payloads.js';
import { startDetail, infoField, type Detail } from './detail.js';
import { connectRedis } from './proc.js';
import { round } from './report.js';
import { ResourceSampler } from './resources.js';
import { destinationIdOf, destinationsOf, routeOf, sourceIdOf, type Scenario, type ScenarioEvent } from './scenarios.js';
import { LATENCY_QUANTILES, percentiles, perSecond } from './series.js';
import { AdminClient, startBenchStack, writeStackConfig, type BenchStack } from './stack.js';
import { expectations, verify, type Verdict } from './verify.js';

export type Mode = 'fixed' | 'saturation' | 'soak';

export interface RunSettings {
  readonly runTag: string;
  readonly redisUrl: string;
  readonly secret: string;
  readonly logLevel: string;
  readonly batchSize: number;
  readonly rate: number;
  readonly windowCalls: number;
  readonly connections: number;
  readonly warmupS: number;
  readonly durationS: number;
}

type Latency = Record<keyof typeof LATENCY_QUANTILES, number | null>;

export interface RunResult {
  readonly scenario: string;
  readonly mode: Mode;
  readonly offered_calls_per_s: number | null;
  readonly measured_s: number;
  readonly accepted_calls_per_s: number;
  readonly delivered_calls_per_s: number;
  /** Destinations the scenario does not impair. */
  readonly healthy_delivered_calls_per_s: number;
  readonly latency_ms: Latency;
  readonly healthy_latency_ms: Latency;
  readonly per_destination: Record<string, { delivered_calls_per_s: number; p99_ms: number | null }>;
  readonly verification: Verdict;
  /** The scenario's own expectations beyond "nothing lost" (dead by design, no TLS request); empty when all held. */
  readonly expectation_failures: readonly string[];
  readonly passed: boolean;
  readonly refused_batches: number;
  readonly transport_errors: number;
  readonly intake_status_codes: Record<string, number>;
  readonly duplicate_examples: Arrivals['duplicateExamples'];
  readonly receiver: {
    requests: number;
    by_status: Record<string, number>;
    attempts_to_deliver: Record<string, number>;
    bad_signatures: number;
    unsigned: number;
    tls_requests: number;
    tls_client_errors: number;
  };
  readonly cpu_pct: Record<string, number>;
  readonly cpu_usec_per_delivered_call: Record<string, number>;
  readonly peak_rss_mb: Record<string, number>;
  readonly redis_used_memory_mb: { start: number; end: number; peak: number };
  readonly settle_s: number;
  /** Jobs still in the route and deliver queues when the settle wait ended (0 unless it ran out). */
  readonly queued_at_end: number;
  /** The last first arrival, seconds after the load stopped: how long the backlog (retries, a receiver back) took to clear. */
  readonly last_delivery_after_load_s: number | null;
  readonly events: readonly { at_s: number; what: string }[];
  /** Per second from the start of the load (warm-up included). */
  readonly timeline: { delivered_per_s: number[]; accepted_per_s: number[]; warmup_s: number };
  /** Soak only: RSS (MB) per process and Redis used memory (MB) over time, [seconds, value]. */
  readonly memory_timeline?: Record<string, [number, number][]>;
  /** Detail mode only. */
  readonly detail?: Detail & { mean_ms: number | null };
}

/** What the pipeline detail mode changes in a run. */
export interface RunOptions {
  readonly durationS?: number;
  readonly env?: Record<string, string>;
  /** One call per request to /v1/track (what browser SDKs send), instead of batches to /v1/batch. */
  readonly single?: boolean;
  readonly connections?: number;
  /** webhook-delivery processes (1 by default). */
  readonly deliveries?: number;
  /** Redis commands and CPU, queue lengths, service counters and intake request latency over the window. */
  readonly detail?: boolean;
}

/** Jobs waiting, active or delayed in the route and deliver queues (the services' own queue reading); NaN when Redis does not answer. */
async function queuedJobs(redis: Redis, prefix: string): Promise<number> {
  const snapshots = await readQueues(redis, prefix, ['route', 'deliver'], Date.now()).catch(() => undefined);
  if (!snapshots) return NaN;
  let n = 0;
  for (const { counts } of snapshots.values()) n += counts.waiting + counts.active + counts.delayed;
  return n;
}

async function usedMemoryMb(redis: Redis): Promise<number> {
  const bytes = Number(infoField(await redis.info('memory').catch(() => ''), 'used_memory') ?? NaN);
  return round(bytes / 2 ** 20, 1);
}

async function redisPid(redis: Redis): Promise<number | undefined> {
  const pid = Number(infoField(await redis.info('server').catch(() => ''), 'process_id') ?? NaN);
  return Number.isFinite(pid) ? pid : undefined;
}

export async function runScenario(
  scenario: Scenario,
  mode: Mode,
  settings: RunSettings,
  receiver: ChaosReceiver,
  opts: RunOptions = {},
): Promise<RunResult> {
  const s = settings;
  const tag = `${s.runTag}-${scenario.name}-${mode}`;
  const prefix = `{bench-${tag}}`;
  const destinations = destinationsOf(scenario);
  const routes = Array.from({ length: destinations }, (_, i) => routeOf(i));
  const single = opts.single === true;
  const calls = single ? 1 : s.batchSize;
  const connections = opts.connections ?? s.connections;
  const healthyRoutes = routes.filter((_, i) => !scenario.impaired.includes(i));
  const measuredS = opts.durationS ?? scenario.measuredS ?? s.durationS;
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'eventrelay-bench-'));
  const configFile = path.join(tmp, 'config.json');
  const adminToken = randomBytes(24).toString('hex');

  const privateRedis: PrivateRedis | undefined = scenario.privateAofRedis
    ? await startPrivateRedis({ aof: 'everysec', dir: tmp })
    : undefined;
  const redisUrl = privateRedis?.url ?? s.redisUrl;
  const redis = connectRedis(redisUrl);
  const writeKeys = routes.map((_, i) => `bench-${tag}-key-${i}`);
  writeStackConfig(configFile, {
    writeKeys,
    sourceIds: routes.map((_, i) => sourceIdOf(i)),
    destinationIds: routes.map((_, i) => destinationIdOf(i)),
    urls: routes.map((r, i) => `${scenario.tls?.includes(i) ? receiver.httpsUrl() : receiver.urlOf(i)}/${r}`),
    secret: s.secret,
  });
  await receiver.setPlan(scenario.plan);
  await receiver.pull(() => undefined); // earlier runs' records are not this run's
  const rxBefore = await receiver.stats();

  let stack: BenchStack | undefined;
  const events: { at_s: number; what: string }[] = [];
  // The once-a-second sampler runs until the run ends, however it ends.
  let running = true;
  try {
    stack = await startBenchStack({
      redisUrl,
      prefix,
      configFile,
      adminToken,
      logLevel: s.logLevel,
      env: { ...scenario.env, ...opts.env },
      deliveries: opts.deliveries ?? 1,
    });
    const st = stack;
    const admin = new AdminClient(st.stack.url('admin'), adminToken);
    const redisProcess = { pid: await redisPid(redis) };
    const sampler = new ResourceSampler(() => [
      ...st.processes(),
      { name: 'receiver', pid: receiver.pid },
      { name: 'loadgen', pid: process.pid },
      { name: 'redis', pid: redisProcess.pid },
    ]);
    const arrivals = new Arrivals(routes);

    // The load: batches go round-robin to the ten sources; every 2xx batch's calls are acknowledged.
    const factories: TimedBodyFactory[] = routes.map((_, i) => timedBatchBodies(`${tag}-${i}`, calls, { single }));
    const acked: number[][] = routes.map(() => []);
    const headers = writeKeys.map((k) => ({
      'content-type': 'application/json',
      authorization: `Basic ${Buffer.from(`${k}:`).toString('base64')}`,
    }));
    const pool = new Pool(st.stack.url('ingest'), { connections, pipelining: 1, keepAliveTimeout: 60_000 });
    let cursor = 0;
    const sink: Sink = {
      calls,
      nextCounts: () => !scenario.impaired.includes(cursor % destinations),
      async send() {
        const i = cursor++ % destinations;
        const factory = factories[i] as TimedBodyFactory;
        const body = factory.next(performance.timeOrigin + performance.now());
        const counter = factory.counter;
        const res = await pool.request({ method: 'POST', path: single ? '/v1/track' : '/v1/batch', headers: headers[i], body });
        await res.body.dump();
        if (res.statusCode >= 200 && res.statusCode < 300) acked[i]?.push(counter);
        return res.statusCode;
      },
    };
    const driver = new LoadDriver(sink);
    const countedRoutes = new Set(healthyRoutes);
    receiver.onDelivered((byRoute) => {
      let n = 0;
      for (const [route, count] of Object.entries(byRoute)) if (countedRoutes.has(route)) n += count;
      driver.received(n);
    });
    driver.received(receiver.deliveredOn(healthyRoutes));

    const memStart = await usedMemoryMb(redis);
    let memPeak = memStart;
    const t0 = performance.timeOrigin + performance.now();
    const acceptedTimeline: number[] = [];
    let lastAccepted = 0;
    const soak = mode === 'soak';
    const memoryTimeline: [number, number][] = [];
    const tick = async () => {
      await receiver.pull((a) => arrivals.add(a));
      acceptedTimeline.push(driver.acceptedCalls - lastAccepted);
      lastAccepted = driver.acceptedCalls;
      const mem = await usedMemoryMb(redis);
      if (Number.isFinite(mem)) {
        memPeak = Math.max(memPeak, mem);
        if (soak) memoryTimeline.push([round((performance.timeOrigin + performance.now() - t0) / 1000, 1), mem]);
      }
      sampler.sample(soak);
    };
    const ticker = (async () => {
      while (running) {
        const next = performance.now() + 1000;
        await tick().catch(() => undefined);
        await sleep(Math.max(0, next - performance.now()));
      }
    })();

    if (mode === 'saturation') driver.startWindow(s.windowCalls, connections);
    else driver.startRate(s.rate);
    await sleep(s.warmupS * 1000);
    const windowStart = performance.timeOrigin + performance.now();
    sampler.mark();
    const acceptedAtStart = driver.acceptedCalls;
    driver.recording = opts.detail === true;
    const endDetail = opts.detail
      ? await startDetail({
          redis,
          prefix,
          requestMs: driver.requestMs,
          urls: { ingest: st.stack.url('ingest'), router: st.stack.url('router'), deliveries: st.deliveryUrls() },
        })
      : undefined;
    const fired = scenario.events.map((e) => fire(e, windowStart));
    await sleep(measuredS * 1000);
    const windowEnd = performance.timeOrigin + performance.now();
    const acceptedInWindow = driver.acceptedCalls - acceptedAtStart;
    const cpu = sampler.cpuPct();
    driver.recording = false;
    const detail = endDetail ? await endDetail(arrivals.arrivalsBetween(windowStart, windowEnd)) : undefined;
    await driver.stop();
    await Promise.all(fired);
    for (const i of scenario.disableAtEnd) {
      await admin.setEnabled(destinationIdOf(i), false);
      events.push({
        at_s: round((performance.timeOrigin + performance.now() - windowStart) / 1000, 1),
        what: `destination ${i} disabled through the admin API`,
      });
    }

    // Settle: until every acknowledged call arrived, or the queues are empty (the rest must then be
    // dead letters, or lost), or the scenario's limit.
    const acknowledgedCount = () => acked.reduce((n, list) => n + list.length, 0) * calls;
    const settleStart = performance.now();
    let idleTicks = 0;
    while ((performance.now() - settleStart) / 1000 < scenario.settleS) {
      await sleep(1000);
      await receiver.pull((a) => arrivals.add(a));
      if (arrivals.deliveredCount() >= acknowledgedCount()) break;
      idleTicks = (await queuedJobs(redis, prefix)) === 0 ? idleTicks + 1 : 0;
      if (idleTicks >= 3) break;
    }
    const settleS = round((performance.now() - settleStart) / 1000, 1);
    const queuedAtEnd = await queuedJobs(redis, prefix);
    running = false;
    await ticker;
    await receiver.pull((a) => arrivals.add(a));

    const deadLettered = new Map<string, Set<string>>();
    for (let i = 0; i < destinations; i++) deadLettered.set(routeOf(i), await admin.deadLetterIds(destinationIdOf(i)));
    const acknowledged = new Map(
      routes.map((r, i) => [
        r,
        (acked[i] ?? []).flatMap((counter) => Array.from({ length: calls }, (_, k) => messageIdOf(`${tag}-${i}`, counter, k))),
      ]),
    );
    const verdict = verify({ acknowledged, delivered: arrivals.deliveredByRoute(), deadLettered });
    const peakRss = sampler.peakRssMb();
    const rxStats = await receiver.stats();
    const expectationFailures = expectations(scenario, verdict, {
      tlsRequests: rxStats.tlsRequests - rxBefore.tlsRequests,
      badSignatures: rxStats.badSignatures - rxBefore.badSignatures,
      unsigned: rxStats.unsigned - rxBefore.unsigned,
    });
    await pool.close();

    const delivered = arrivals.arrivalsBetween(windowStart, windowEnd);
    const healthyDelivered = arrivals.arrivalsBetween(windowStart, windowEnd, healthyRoutes);
    const cpuPerCall: Record<string, number> = {};
    let sum = 0;
    for (const [name, pct] of Object.entries(cpu)) {
      if (name === 'other' || name === 'machine' || delivered === 0) continue;
      cpuPerCall[name] = Math.round(((pct / 100) * 1e6 * measuredS) / delivered);
      sum += cpuPerCall[name] ?? 0;
    }
    if (delivered > 0) cpuPerCall['sum'] = sum;
    const totalS = Math.ceil((performance.timeOrigin + performance.now() - t0) / 1000);
    return {
      scenario: scenario.name,
      mode,
      offered_calls_per_s: mode === 'saturation' ? null : s.rate,
      measured_s: round((windowEnd - windowStart) / 1000, 1),
      accepted_calls_per_s: Math.round(acceptedInWindow / measuredS),
      delivered_calls_per_s: Math.round(delivered / measuredS),
      healthy_delivered_calls_per_s: Math.round(healthyDelivered / measuredS),
      latency_ms: percentiles(arrivals.latenciesOfSentBetween(windowStart, windowEnd), LATENCY_QUANTILES),
      healthy_latency_ms: percentiles(arrivals.latenciesOfSentBetween(windowStart, windowEnd, healthyRoutes), LATENCY_QUANTILES),
      per_destination: Object.fromEntries(
        routes.map((r) => [
          r,
          {
            delivered_calls_per_s: Math.round(arrivals.arrivalsBetween(windowStart, windowEnd, [r]) / measuredS),
            p99_ms: percentiles(arrivals.latenciesOfSentBetween(windowStart, windowEnd, [r]), { p99: 0.99 }).p99,
          },
        ]),
      ),
      verification: verdict,
      expectation_failures: expectationFailures,
      passed: verdict.lost === 0 && expectationFailures.length === 0,
      duplicate_examples: arrivals.duplicateExamples,
      refused_batches: driver.refusedBatches,
      transport_errors: driver.errors,
      intake_status_codes: driver.statusCodes,
      receiver: {
        requests: arrivals.requests,
        by_status: arrivals.statuses,
        attempts_to_deliver: arrivals.attemptsToDeliver(),
        bad_signatures: rxStats.badSignatures - rxBefore.badSignatures,
        unsigned: rxStats.unsigned - rxBefore.unsigned,
        tls_requests: rxStats.tlsRequests - rxBefore.tlsRequests,
        tls_client_errors: rxStats.tlsClientErrors - rxBefore.tlsClientErrors,
      },
      cpu_pct: cpu,
      cpu_usec_per_delivered_call: cpuPerCall,
      peak_rss_mb: peakRss,
      redis_used_memory_mb: { start: memStart, end: await usedMemoryMb(redis), peak: memPeak },
      settle_s: settleS,
      queued_at_end: queuedAtEnd,
      last_delivery_after_load_s: (() => {
        let last = -Infinity;
        for (const t of arrivals.firstArrivals()) last = Math.max(last, t);
        return Number.isFinite(last) ? round((last - windowEnd) / 1000, 1) : null;
      })(),
      events,
      timeline: { delivered_per_s: perSecond(arrivals.firstArrivals(), t0, totalS), accepted_per_s: acceptedTimeline, warmup_s: s.warmupS },
      ...(soak ? { memory_timeline: { ...Object.fromEntries(sampler.rss), 'redis used_memory': memoryTimeline } } : {}),
      ...(detail ? { detail: { ...detail, mean_ms: mean(arrivals.latenciesOfSentBetween(windowStart, windowEnd)) } } : {}),
    };

    async function fire(e: ScenarioEvent, from: number): Promise<void> {
      await sleep(Math.max(0, from + e.atS * 1000 - (performance.timeOrigin + performance.now())));
      const at = () => round((performance.timeOrigin + performance.now() - from) / 1000, 1);
      switch (e.kind) {
        case 'receiver-down':
          await receiver.down(e.listener);
          events.push({ at_s: at(), what: `receiver ${e.listener} down` });
          return;
        case 'receiver-up':
          await receiver.up(e.listener);
          events.push({ at_s: at(), what: `receiver ${e.listener} up` });
          return;
        case 'kill-delivery': {
          events.push({ at_s: at(), what: 'webhook-delivery SIGKILLed' });
          await st.stack.restart('webhook-delivery', { signal: 'SIGKILL', afterMs: e.restartAfterS * 1000 });
          events.push({ at_s: at(), what: 'webhook-delivery ready again' });
          return;
        }
        case 'restart-redis': {
          if (!privateRedis) throw new Error('restart-redis needs the scenario to run on a private Redis');
          events.push({ at_s: at(), what: 'Redis SHUTDOWN (AOF flushed)' });
          await privateRedis.close();
          await privateRedis.start();
          redisProcess.pid = privateRedis.process()?.pid;
          events.push({ at_s: at(), what: 'Redis answering again (AOF loaded)' });
          return;
        }
      }
    }
  } finally {
    running = false;
    await stack?.stop();
    if (privateRedis) {
      redis.disconnect();
      await privateRedis.close();
    } else {
      await deletePrefix(redis, prefix).catch(() => 0);
      await redis.quit().catch(() => redis.disconnect());
    }
    rmSync(tmp, { recursive: true, force: true });
  }
}

function mean(values: Float64Array): number | null {
  return values.length === 0 ? null : round(values.reduce((a, b) => a + b, 0) / values.length, 2);
}
