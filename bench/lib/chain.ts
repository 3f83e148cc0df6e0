/**
 * The baselines, measured in the same run on the same machine: a bare Node HTTP server answering
 * 200 to the same batches over the same connections (the intake ceiling), and the bare BullMQ →
 * undici chain of baselines/bullmq-chain.ts delivering to the same receiver (the delivery ceiling).
 */
import path from 'node:path';
import { Pool } from 'undici';
import { deletePrefix, IpcClient, SERVICE_NODE_FLAGS, sleep, startChild, type ChaosProcess } from '@eventrelay/testkit';
import { startDetail } from './detail.js';
import { LoadDriver } from './drive.js';
import { bodies } from './payloads.js';
import { connectRedis, cpuPerCall, infoField, ResourceSampler, startBaseline } from './proc.js';
import { BENCH_DIR, mean, now } from './report.js';
import type { RunResult, RunSettings } from './run.js';
import { LATENCY_QUANTILES, percentiles } from './series.js';

/** Calls/s a bare node:http server answers 200 for, with the same batches, connections and windows. */
export async function measureBareHttp(s: RunSettings): Promise<number> {
  const bare = await startBaseline('bare-http.ts');
  try {
    const pool = new Pool(bare.url, { connections: s.connections, pipelining: 1 });
    const body = bodies(`${s.runTag}-bare`, s.batchSize, { timed: true });
    let [ok, counting, stop] = [0, false, false];
    const loop = async () => {
      while (!stop) {
        const headers = { 'content-type': 'application/json' };
        const res = await pool.request({ method: 'POST', path: '/v1/batch', headers, body: body.next(Date.now()) });
        await res.body.dump();
        if (counting && res.statusCode === 200) ok++;
      }
    };
    const loops = Array.from({ length: s.connections }, loop);
    await sleep(s.warmupS * 1000);
    counting = true;
    await sleep(s.durationS * 1000);
    [counting, stop] = [false, true];
    await Promise.all(loops);
    await pool.close();
    return Math.round((ok * s.batchSize) / s.durationS);
  } finally {
    await bare.stop();
  }
}

export type ChainResult = Pick<
  RunResult,
  | 'delivered_calls_per_s'
  | 'accepted_calls_per_s'
  | 'measured_s'
  | 'latency_ms'
  | 'cpu_pct'
  | 'cpu_usec_per_delivered_call'
  | 'peak_rss_mb'
  | 'detail'
>;

/** The bare chain at saturation (the same window of calls), posting to the receiver's route /chain. */
export async function runChain(s: RunSettings, receiver: ChaosProcess, o: { detail?: boolean } = {}): Promise<ChainResult> {
  const prefix = `{bench-${s.runTag}-chain}`;
  const env = {
    ...process.env,
    ...{
      REDIS_URL: s.redisUrl,
      PREFIX: prefix,
      BATCH_SIZE: String(s.batchSize),
      RUN_TAG: s.runTag,
      TARGET_URL: `${receiver.urls[0]}/chain`,
    },
    CONCURRENCY: process.env['DELIVERY_CONCURRENCY'] ?? '256',
    CONNECTIONS: process.env['DELIVERY_CONNECTIONS_PER_ORIGIN'] ?? '64',
    NODE_ENV: 'production',
  };
  const start = async (role: 'producer' | 'worker') => {
    let [ready, ipc] = [false, undefined as IpcClient | undefined];
    const handle = await startChild({
      name: `chain-${role}`,
      // The services' Node flags, so that the comparison is of the code alone.
      args: [...SERVICE_NODE_FLAGS, '--import', 'tsx', path.join(BENCH_DIR, 'baselines', 'bullmq-chain.ts'), role],
      ...{ cwd: BENCH_DIR, env, ipc: true, echo: 'prefixed' },
      ready: (h) => Promise.resolve(((ipc ??= new IpcClient(h.child, `chain-${role}`, (m) => (ready ||= m.type === 'ready'))), ready)),
    });
    return { handle, ipc: ipc as IpcClient };
  };
  const worker = await start('worker');
  const producer = await start('producer');
  const redis = connectRedis(s.redisUrl);
  try {
    await receiver.setPlan({ routes: {} });
    await receiver.pull(() => undefined);
    const redisPid = Number(infoField(await redis.info('server'), 'process_id')) || undefined;
    const sampler = new ResourceSampler(() => [
      { name: 'chain-producer', pid: producer.handle.pid },
      { name: 'chain-worker', pid: worker.handle.pid },
      { name: 'receiver', pid: receiver.pid },
      { name: 'loadgen', pid: process.pid },
      { name: 'redis', pid: redisPid },
    ]);
    const driver = new LoadDriver({ calls: s.batchSize, send: () => producer.ipc.call('add').then(() => 200) });
    receiver.onDelivered((byRoute) => driver.received(byRoute['chain'] ?? 0));
    driver.received(receiver.deliveredOn(['chain']));
    driver.startWindow(s.windowCalls, s.connections);
    await sleep(s.warmupS * 1000);
    const [from, acceptedBefore] = [now(), driver.acceptedCalls];
    sampler.mark();
    const endDetail = o.detail ? await startDetail({ redis, prefix, chain: true }) : undefined;
    await receiver.pull(() => undefined);
    await sleep(s.durationS * 1000);
    const to = now();
    const cpu = sampler.cpuPct();
    const latencies: number[] = [];
    await receiver.pull((a) => {
      if (a.route === 'chain' && a.status === 200 && a.arrivalMs >= from && a.arrivalMs < to && Number.isFinite(a.sentAtMs))
        latencies.push(a.arrivalMs - a.sentAtMs);
    });
    const detail = endDetail ? await endDetail(latencies.length) : undefined;
    await driver.stop();
    return {
      delivered_calls_per_s: Math.round(latencies.length / s.durationS),
      accepted_calls_per_s: Math.round((driver.acceptedCalls - acceptedBefore) / s.durationS),
      measured_s: s.durationS,
      latency_ms: percentiles(latencies, LATENCY_QUANTILES),
      cpu_pct: cpu,
      cpu_usec_per_delivered_call: cpuPerCall(cpu, s.durationS, latencies.length),
      peak_rss_mb: sampler.peakRssMb(),
      ...(detail ? { detail: { ...detail, mean_ms: mean(latencies) } } : {}),
    };
  } finally {
    await producer.handle.stop();
    await worker.handle.stop();
    await deletePrefix(redis, prefix).catch(() => 0);
    redis.disconnect();
  }
}
