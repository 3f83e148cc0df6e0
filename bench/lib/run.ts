/**
 * One run of one scenario of `pnpm bench:chaos`: a fresh system under test on a run-unique Redis
 * prefix, the receivers set to the scenario's plan, load at a fixed rate or to saturation for a
 * warm-up and a measured window (the scenario's events fire in it), then the settle wait and the
 * verification pass. Returns the figures; throws only when the run could not be carried out. The
 * pipeline detail mode runs the same with single calls, a second webhook-delivery, or the Redis figures.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Pool } from 'undici';
import type { Redis } from 'ioredis';
import { readQueues } from '@eventrelay/runtime';
import { deletePrefix, eventually, sleep, startPrivateRedis, startReplicatedRedis, type ChaosProcess } from '@eventrelay/testkit';
import { startDetail } from './detail.js';
import { LoadDriver, weightedOrder } from './drive.js';
import { misbehavingFigures, type Switch } from './misbehaving.js';
import { bodies, messageIdOf } from './payloads.js';
import { connectRedis, cpuPerCall, infoField, ResourceSampler } from './proc.js';
import { Arrivals } from './receiver.js';
import { mean, now, round } from './report.js';
import { routeOf, type Scenario, type ScenarioEvent } from './scenarios.js';
import { LATENCY_QUANTILES, percentiles, perSecond } from './series.js';
import { adminClient, destinationIdOf, startBenchStack, writeStackConfig } from './stack.js';
import { expectations, verify } from './verify.js';
import { startFlood } from './flood.js';

export type Mode = 'fixed' | 'saturation' | 'soak';
export type RunResult = Awaited<ReturnType<typeof runScenario>>;

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

/** What the soak and the pipeline detail mode change in a run. */
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
  /** Every destination's filter rules (destination-filters.schema.json). */
  readonly filters?: readonly unknown[];
  /** Names the run's Redis prefix and messageIds instead of the mode: two runs of one scenario and mode in a bench run stay apart. */
  readonly label?: string;
}

/** Jobs waiting, active or delayed in the route and deliver queues (the services' own queue reading); NaN when Redis does not answer. */
async function queuedJobs(redis: Redis, prefix: string): Promise<number> {
  const queues = await readQueues(redis, prefix, ['route', 'deliver'], Date.now()).catch(() => undefined);
  return queues ? [...queues.values()].reduce((n, { counts: c }) => n + c.waiting + c.active + c.delayed, 0) : NaN;
}

const usedMemoryMb = async (redis: Redis) =>
  round(Number(infoField(await redis.info('memory').catch(() => ''), 'used_memory') ?? NaN) / 2 ** 20, 1);

export async function runScenario(scenario: Scenario, mode: Mode, s: RunSettings, receiver: ChaosProcess, opts: RunOptions = {}) {
  const tag = `${s.runTag}-${scenario.name}-${opts.label ?? mode}`;
  const prefix = `{bench-${tag}}`;
  const n = scenario.destinations;
  const routes = Array.from({ length: n }, (_, i) => routeOf(i));
  // The load's sources: one per destination, or one connected to them all (each call then goes to every destination).
  const sources = scenario.oneSource ? 1 : n;
  const sourceOfRoute = (i: number) => (scenario.oneSource ? 0 : i);
  // The saturation window counts calls at the receivers, each call once: not so when every call goes to every destination.
  if (scenario.oneSource && mode === 'saturation') throw new Error(`${scenario.name} runs in the fixed mode only`);
  const single = opts.single === true;
  const calls = single ? 1 : s.batchSize;
  const connections = opts.connections ?? s.connections;
  const healthyRoutes = routes.filter((_, i) => !scenario.impaired.includes(i));
  const misbehaving = scenario.misbehaving === undefined ? undefined : routeOf(scenario.misbehaving);
  // The order batches go to the sources in: round-robin, but for a destination the fixed mode loads
  // more, and never to a flooded source (the flood has its own sender).
  const flood = scenario.flood;
  const loaded = Array.from({ length: sources }, (_, i) => i).filter((i) => i !== flood?.source);
  const weights = loaded.map((i) => (mode === 'saturation' ? 1 : (scenario.fixedLoadWeights?.[i] ?? 1)));
  const order = weightedOrder(weights).map((k) => loaded[k] as number);
  const offered = (s.rate * order.length) / sources;
  const measuredS = opts.durationS ?? scenario.measuredS ?? s.durationS;
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'eventrelay-bench-'));
  const configFile = path.join(tmp, 'config.json');
  const adminToken = randomBytes(24).toString('hex');
  const maxmemory = scenario.redisMaxmemoryMb;
  const privateRedis = scenario.privateAofRedis
    ? await startPrivateRedis({ aof: 'everysec', dir: tmp })
    : maxmemory
      ? await startPrivateRedis({ aof: false, dir: tmp, args: ['--maxmemory', `${maxmemory}mb`, '--maxmemory-policy', 'noeviction'] })
      : undefined;
  const replicated = scenario.replicated ? await startReplicatedRedis({ sentinel: true, aof: 'everysec' }) : undefined;
  const sentinel = replicated?.sentinel;
  const redisUrl = replicated?.primary.url ?? privateRedis?.url ?? s.redisUrl;
  const redis = connectRedis(redisUrl, sentinel && { host: '127.0.0.1', port: sentinel.port, name: replicated.name });
  const redisEnv: Record<string, string> = sentinel ? { REDIS_SENTINELS: sentinel.address, REDIS_SENTINEL_NAME: replicated.name } : {};
  const writeKeys = Array.from({ length: sources }, (_, i) => `bench-${tag}-key-${i}`);
  const urls = routes.map((r, i) => `${scenario.tls.includes(i) ? receiver.httpsUrl : receiver.urls[i]}/${r}`);
  writeStackConfig(configFile, writeKeys, urls, s.secret, opts.filters, flood ? [flood.source] : []);
  await receiver.setPlan(scenario.plan);
  await receiver.pull(() => undefined); // earlier runs' records are not this run's
  const rxBefore = await receiver.stats();
  const events: { at_s: number; what: string }[] = [];
  let stack: Awaited<ReturnType<typeof startBenchStack>> | undefined;
  let flooding: Awaited<ReturnType<typeof startFlood>> | undefined;
  // The once-a-second sampler runs until the run ends, however it ends.
  let running = true;
  try {
    const st = (stack = await startBenchStack({
      ...{ redisUrl, prefix, configFile, adminToken, logLevel: s.logLevel },
      env: { ...redisEnv, ...scenario.env, ...opts.env },
      deliveries: opts.deliveries ?? 1,
    }));
    const admin = adminClient(st.url('admin'), adminToken);
    let redisPid: number | undefined = Number(infoField(await redis.info('server').catch(() => ''), 'process_id')) || undefined;

    const sampler = new ResourceSampler(() => [
      ...st.processes(),
      { name: 'receiver', pid: receiver.pid },
      { name: 'loadgen', pid: process.pid },
      { name: 'redis', pid: redisPid },
      ...(flooding ? [{ name: 'flood', pid: flooding.pid }] : []),
    ]);
    const arrivals = new Arrivals(routes, misbehaving ? [misbehaving] : []);
    const pull = () => receiver.pull((a) => arrivals.add(a));

    // The load: batches go round-robin to the sources; every 2xx batch's calls are acknowledged.
    const factories = writeKeys.map((_, i) => bodies(`${tag}-${i}`, calls, { single, timed: true }));
    const acked: number[][] = writeKeys.map(() => []);
    const headers = writeKeys.map((k) => ({
      'content-type': 'application/json',
      authorization: `Basic ${Buffer.from(`${k}:`).toString('base64')}`,
    }));
    const pool = new Pool(st.url('ingest'), { connections, pipelining: 1, keepAliveTimeout: 60_000 });
    let cursor = 0;
    const source = () => order[cursor % order.length] as number;
    const driver = new LoadDriver({
      calls,
      nextCounts: () => !scenario.impaired.includes(source()),
      async send() {
        const i = source();
        cursor++;
        const factory = factories[i] as (typeof factories)[number];
        const body = factory.next(now());
        const counter = factory.counter;
        const res = await pool.request({ method: 'POST', path: single ? '/v1/track' : '/v1/batch', headers: headers[i], body });
        await res.body.dump();
        if (res.statusCode >= 200 && res.statusCode < 300) acked[i]?.push(counter);
        return res.statusCode;
      },
    });
    const counted = new Set(healthyRoutes);
    receiver.onDelivered((byRoute) => driver.received(Object.entries(byRoute).reduce((k, [r, c]) => k + (counted.has(r) ? c : 0), 0)));
    driver.received(receiver.deliveredOn(healthyRoutes));

    const memStart = await usedMemoryMb(redis);
    let memPeak = memStart;
    const t0 = now();
    const acceptedTimeline: number[] = [];
    const memoryTimeline: [number, number][] = [];
    const soak = mode === 'soak';
    const tick = async () => {
      await pull();
      acceptedTimeline.push(driver.acceptedCalls - acceptedTimeline.reduce((a, b) => a + b, 0));
      const mem = await usedMemoryMb(redis);
      if (Number.isFinite(mem)) memPeak = Math.max(memPeak, mem);
      if (Number.isFinite(mem) && soak) memoryTimeline.push([round((now() - t0) / 1000, 1), mem]);
      sampler.sample(soak);
    };
    const ticker = (async () => {
      while (running) {
        const next = performance.now() + 1000;
        await tick().catch(() => undefined);
        await sleep(Math.max(0, next - performance.now()));
      }
    })();

    // The flood's process starts now, so that its start-up is not in the window; it floods from the window's start.
    flooding = flood
      ? await startFlood({
          url: st.url('ingest'),
          writeKey: writeKeys[flood.source] as string,
          tag: `${tag}-${flood.source}`,
          calls,
          connections: flood.connections,
        })
      : undefined;
    if (mode === 'saturation') driver.startWindow(s.windowCalls, connections);
    else driver.startRate(offered);
    await sleep(s.warmupS * 1000);
    const windowStart = now();
    sampler.mark();
    const acceptedAtStart = driver.acceptedCalls;
    driver.recording = opts.detail === true;
    const urlsOf = { ingest: st.url('ingest'), router: st.url('router'), deliveries: st.deliveryUrls() };
    const endDetail = opts.detail ? await startDetail({ redis, prefix, requestMs: driver.requestMs, urls: urlsOf }) : undefined;
    const at = () => round((now() - windowStart) / 1000, 1);
    const note = (what: string) => events.push({ at_s: at(), what });
    // When the misbehaving destination's receiver went away and came back (taken before the change is asked for).
    const switches: Switch[] = [];
    const fire = async (e: ScenarioEvent) => {
      await sleep(Math.max(0, windowStart + e.atS * 1000 - now()));
      if (e.kind === 'receiver-down' || e.kind === 'receiver-up') {
        if (routeOf(e.listener) === misbehaving) switches.push({ up: e.kind === 'receiver-up', atMs: now() });
        await (e.kind === 'receiver-down' ? receiver.down(e.listener) : receiver.up(e.listener));
        note(`receiver ${e.listener} ${e.kind === 'receiver-down' ? 'down' : 'up'}`);
      } else if (e.kind === 'receiver-unavailable' || e.kind === 'receiver-available') {
        const unavailable = e.kind === 'receiver-unavailable';
        if (routeOf(e.listener) === misbehaving) switches.push({ up: !unavailable, atMs: now() });
        // A new plan restarts every route's draws: the other routes of such a scenario answer 2xx whatever they draw.
        const routesNow = { ...scenario.plan.routes, ...(unavailable ? { [routeOf(e.listener)]: { unavailable: 1 } } : {}) };
        await receiver.setPlan({ ...scenario.plan, routes: routesNow });
        note(`receiver ${e.listener} ${unavailable ? 'answers 503' : 'answers 2xx again'}`);
      } else if (e.kind === 'kill-delivery') {
        note('webhook-delivery SIGKILLed');
        await st.restart('webhook-delivery', { signal: 'SIGKILL', afterMs: e.restartAfterS * 1000 });
        note('webhook-delivery ready again');
      } else if (e.kind === 'failover-redis') {
        if (!replicated?.sentinel) throw new Error(`${e.kind} needs the scenario to run on a replicated Redis`);
        const killedAt = now();
        note('Redis primary SIGKILLed');
        await replicated.primary.stop();
        const promoted = async () => {
          if ((await replicated.sentinel?.primaryPort()) !== replicated.replica.port)
            throw new Error('the Sentinel did not promote the replica in 30 s');
        };
        await eventually(promoted, 30_000, 100);
        redisPid = replicated.replica.process()?.pid;
        note('the Sentinel promoted the replica');
        await sleep(Math.max(0, killedAt + e.restartAfterS * 1000 - now()));
        await replicated.primary.start();
        note('old primary back (the Sentinel makes it the new replica)');
      } else {
        if (!privateRedis) throw new Error(`${e.kind} needs the scenario to run on a private Redis`);
        if (e.kind === 'kill-redis') {
          note('Redis SIGKILLed');
          await privateRedis.stop();
          await sleep(e.restartAfterS * 1000);
        } else {
          note('Redis SHUTDOWN (AOF flushed)');
          await privateRedis.close();
        }
        await privateRedis.start();
        redisPid = privateRedis.process()?.pid;
        note('Redis answering again (AOF loaded)');
      }
    };
    const fired = scenario.events.map(fire);
    if (flooding) {
      await flooding.go();
      note(`source ${flood?.source} flooded`);
    }
    await sleep(Math.max(0, windowStart + measuredS * 1000 - now()));
    const windowEnd = now();
    const acceptedInWindow = driver.acceptedCalls - acceptedAtStart;
    const cpu = sampler.cpuPct();
    driver.recording = false;
    const detail = endDetail ? await endDetail(arrivals.arrivalsBetween(windowStart, windowEnd)) : undefined;
    await driver.stop();
    const flooded = await flooding?.stop();
    flooding = undefined;
    if (flood && flooded) acked[flood.source] = [...flooded.acked];
    await Promise.all(fired);
    for (const i of scenario.disableAtEnd) {
      await admin.disable(destinationIdOf(i));
      note(`destination ${i} disabled through the admin API`);
    }

    // Settle: until every acknowledged call arrived, or the queues are empty for 3 s (the rest must
    // then be dead letters, or lost), or the scenario's limit.
    const acknowledgedCount = acked.reduce((k, list) => k + list.length, 0) * calls * (n / sources);
    const settleStart = performance.now();
    for (let idle = 0; idle < 3 && (performance.now() - settleStart) / 1000 < scenario.settleS;) {
      await sleep(1000);
      await pull();
      if (arrivals.deliveredCount() >= acknowledgedCount) break;
      idle = (await queuedJobs(redis, prefix)) === 0 ? idle + 1 : 0;
    }
    const settleS = round((performance.now() - settleStart) / 1000, 1);
    const queuedAtEnd = await queuedJobs(redis, prefix);
    running = false;
    await ticker;
    await pull();

    const deadLettered = new Map<string, Set<string>>();
    for (let i = 0; i < n; i++) deadLettered.set(routeOf(i), await admin.deadLetterIds(destinationIdOf(i)));
    const ackedIds = acked.map((list, i) => list.flatMap((c) => Array.from({ length: calls }, (_, k) => messageIdOf(`${tag}-${i}`, c, k))));
    const acknowledged = new Map(routes.map((r, i) => [r, ackedIds[sourceOfRoute(i)] ?? []]));
    const verdict = verify({ acknowledged, delivered: arrivals.deliveredByRoute(), deadLettered });
    const rxNow = await receiver.stats();
    const rx = {
      tlsRequests: rxNow.tlsRequests - rxBefore.tlsRequests,
      badSignatures: rxNow.badSignatures - rxBefore.badSignatures,
      unsigned: rxNow.unsigned - rxBefore.unsigned,
    };
    const expectationFailures = expectations(scenario, verdict, rx);
    await pool.close();

    const delivered = arrivals.arrivalsBetween(windowStart, windowEnd);
    const latency = (rs?: string[]) => percentiles(arrivals.latenciesOfSentBetween(windowStart, windowEnd, rs), LATENCY_QUANTILES);
    const firstArrivals = arrivals.firsts().map((a) => a.arrivalMs);
    const last = firstArrivals.reduce((a, b) => Math.max(a, b), -Infinity);
    const end = now();
    return {
      scenario: scenario.name,
      mode,
      offered_calls_per_s: mode === 'saturation' ? null : Math.round(offered),
      measured_s: round((windowEnd - windowStart) / 1000, 1),
      accepted_calls_per_s: Math.round(acceptedInWindow / measuredS),
      delivered_calls_per_s: Math.round(delivered / measuredS),
      /** Destinations the scenario does not impair. */
      healthy_delivered_calls_per_s: Math.round(arrivals.arrivalsBetween(windowStart, windowEnd, healthyRoutes) / measuredS),
      latency_ms: latency(),
      healthy_latency_ms: latency(healthyRoutes),
      per_destination: Object.fromEntries(
        routes.map((r) => [
          r,
          {
            delivered_calls_per_s: Math.round(arrivals.arrivalsBetween(windowStart, windowEnd, [r]) / measuredS),
            p99_ms: latency([r]).p99,
          },
        ]),
      ),
      verification: verdict,
      /** The scenario's own expectations beyond "nothing lost" (dead by design, no TLS request); empty when all held. */
      expectation_failures: expectationFailures,
      passed: (verdict.lost === 0 || scenario.lossReported === true) && expectationFailures.length === 0,
      duplicate_examples: arrivals.duplicateExamples,
      refused_batches: driver.refusedBatches,
      transport_errors: driver.errors,
      intake_status_codes: driver.statusCodes,
      /** The flooded source (issue 32): what the intake answered it, by status and code, and the calls acknowledged. */
      ...(flood && flooded
        ? {
            flood: {
              source: flood.source,
              requests: flooded.requests,
              answers: flooded.answers,
              acknowledged_calls: flooded.acked.length * calls,
              transport_errors: flooded.transportErrors,
            },
          }
        : {}),
      /** Requests the receivers recorded over the run (settle included) per call they answered 2xx. */
      attempts_per_delivered_call: arrivals.deliveredCount() === 0 ? null : round(arrivals.requests / arrivals.deliveredCount(), 3),
      receiver: {
        requests: arrivals.requests,
        by_status: arrivals.statuses,
        attempts_to_deliver: arrivals.attemptsToDeliver(),
        bad_signatures: rx.badSignatures,
        unsigned: rx.unsigned,
        tls_requests: rx.tlsRequests,
        tls_client_errors: rxNow.tlsClientErrors - rxBefore.tlsClientErrors,
      },
      cpu_pct: cpu,
      cpu_usec_per_delivered_call: cpuPerCall(cpu, measuredS, delivered),
      peak_rss_mb: sampler.peakRssMb(),
      redis_used_memory_mb: { start: memStart, end: await usedMemoryMb(redis), peak: memPeak },
      settle_s: settleS,
      /** Jobs still in the route and deliver queues when the settle wait ended (0 unless it ran out). */
      queued_at_end: queuedAtEnd,
      /** The last first arrival, seconds after the load stopped: how long the backlog took to clear. */
      last_delivery_after_load_s: Number.isFinite(last) ? round((last - windowEnd) / 1000, 1) : null,
      events,
      /** Per second from the start of the load (warm-up included). */
      timeline: {
        delivered_per_s: perSecond(firstArrivals, t0, Math.ceil((end - t0) / 1000)),
        accepted_per_s: acceptedTimeline,
        warmup_s: s.warmupS,
      },
      /** Soak only: RSS (MB) per process and Redis used memory (MB) over time, [seconds, value]. */
      ...(soak
        ? {
            memory_timeline: { ...Object.fromEntries(sampler.rss), 'redis used_memory': memoryTimeline } as Record<
              string,
              [number, number][]
            >,
          }
        : {}),
      ...(misbehaving
        ? {
            misbehaving: misbehavingFigures({
              route: misbehaving,
              attempts: arrivals.attemptsOf(misbehaving),
              firsts: arrivals.firsts([misbehaving]),
              loadStartMs: t0,
              windowStartMs: windowStart,
              seconds: Math.ceil((end - t0) / 1000),
              switches,
              ratePerS: scenario.plan.routes[misbehaving]?.ratePerS,
            }),
          }
        : {}),
      ...(detail ? { detail: { ...detail, mean_ms: mean(arrivals.latenciesOfSentBetween(windowStart, windowEnd)) } } : {}),
    };
  } finally {
    running = false;
    // A run that failed mid-window: the flood must not go on against what is stopped next.
    await flooding?.stop().catch(() => undefined);
    await stack?.stop();
    if (privateRedis || replicated) {
      redis.disconnect();
      await privateRedis?.close();
      await replicated?.close();
    } else {
      await deletePrefix(redis, prefix).catch(() => 0);
      await redis.quit().catch(() => redis.disconnect());
    }
    rmSync(tmp, { recursive: true, force: true });
  }
}
