/**
 * The baselines, measured in the same run on the same machine: a bare Node HTTP server answering
 * 200 to the same batches over the same connections (the intake ceiling), and the bare BullMQ →
 * undici chain of baselines/bullmq-chain.ts delivering to the same receiver (the delivery ceiling).
 */
import path from 'node:path';
import { Pool } from 'undici';
import type { ChaosReceiver } from './chaos-client.js';
import { startDetail } from './detail.js';
import { LoadDriver } from './drive.js';
import { IpcClient } from './ipc.js';
import { timedBatchBodies } from './payloads.js';
import { deletePrefix, freePort, SERVICE_NODE_FLAGS, sleep, startChild, type ChildHandle } from '@eventrelay/testkit';
import { BENCH_DIR, connectRedis, startServer } from './proc.js';
import { ResourceSampler } from './resources.js';
import type { RunResult, RunSettings } from './run.js';
import { LATENCY_QUANTILES, percentiles } from './series.js';

async function startChainProcess(
  name: string,
  role: 'producer' | 'worker',
  env: NodeJS.ProcessEnv,
): Promise<{ handle: ChildHandle; ipc: IpcClient }> {
  let ready = false;
  let ipc: IpcClient | undefined;
  const handle = await startChild({
    name,
    // The services' Node flags, so that the comparison is of the code alone.
    args: [...SERVICE_NODE_FLAGS, '--import', 'tsx', path.join(BENCH_DIR, 'baselines', 'bullmq-chain.ts'), role],
    cwd: BENCH_DIR,
    env,
    ipc: true,
    echo: 'prefixed',
    ready: (h) => {
      ipc ??= new IpcClient(h.child, name, (msg) => (ready ||= msg.type === 'ready'));
      return Promise.resolve(ready);
    },
  });
  return { handle, ipc: ipc as IpcClient };
}

/** Calls/s a bare node:http server answers 200 for, with the same batches, connections and windows. */
export async function measureBareHttp(s: RunSettings): Promise<number> {
  const port = await freePort();
  const bare = await startServer({
    name: 'bare-http',
    args: ['--import', 'tsx', path.join(BENCH_DIR, 'baselines', 'bare-http.ts')],
    env: { ...process.env, PORT: String(port) },
    port,
    readyPath: '/',
  });
  try {
    const pool = new Pool(bare.url, { connections: s.connections, pipelining: 1 });
    const bodies = timedBatchBodies(`${s.runTag}-bare`, s.batchSize);
    let ok = 0;
    let counting = false;
    let stop = false;
    const loop = async () => {
      while (!stop) {
        const res = await pool.request({
          method: 'POST',
          path: '/v1/batch',
          headers: { 'content-type': 'application/json' },
          body: bodies.next(Date.now()),
        });
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
export async function runChain(s: RunSettings, receiver: ChaosReceiver, opts: { detail?: boolean } = {}): Promise<ChainResult> {
  const prefix = `{bench-${s.runTag}-chain}`;
  const env = {
    ...process.env,
    REDIS_URL: s.redisUrl,
    PREFIX: prefix,
    BATCH_SIZE: String(s.batchSize),
    RUN_TAG: s.runTag,
    TARGET_URL: `${receiver.urlOf(0)}/chain`,
    CONCURRENCY: process.env['DELIVERY_CONCURRENCY'] ?? '256',
    CONNECTIONS: process.env['DELIVERY_CONNECTIONS_PER_ORIGIN'] ?? '64',
    NODE_ENV: 'production',
  };
  const worker = await startChainProcess('chain-worker', 'worker', env);
  const producer = await startChainProcess('chain-producer', 'producer', env);
  const redis = connectRedis(s.redisUrl);
  try {
    await receiver.setPlan({ routes: {} });
    await receiver.pull(() => undefined);
    const redisPid = Number(/process_id:(\d+)/.exec(await redis.info('server'))?.[1]) || undefined;
    const sampler = new ResourceSampler(() => [
      { name: 'chain-producer', pid: producer.handle.child.pid },
      { name: 'chain-worker', pid: worker.handle.child.pid },
      { name: 'receiver', pid: receiver.pid },
      { name: 'loadgen', pid: process.pid },
      { name: 'redis', pid: redisPid },
    ]);
    const driver = new LoadDriver({ calls: s.batchSize, send: () => producer.ipc.call<number>('add').then(() => 200) });
    receiver.onDelivered((byRoute) => driver.received(byRoute['chain'] ?? 0));
    driver.received(receiver.deliveredOn(['chain']));
    driver.startWindow(s.windowCalls, s.connections);
    await sleep(s.warmupS * 1000);
    const from = performance.timeOrigin + performance.now();
    const acceptedBefore = driver.acceptedCalls;
    sampler.mark();
    const endDetail = opts.detail ? await startDetail({ redis, prefix, chain: true }) : undefined;
    await receiver.pull(() => undefined);
    await sleep(s.durationS * 1000);
    const to = performance.timeOrigin + performance.now();
    const cpu = sampler.cpuPct();
    const latencies: number[] = [];
    await receiver.pull((a) => {
      if (a.route !== 'chain' || a.status !== 200 || a.arrivalMs < from || a.arrivalMs >= to) return;
      if (Number.isFinite(a.sentAtMs)) latencies.push(a.arrivalMs - a.sentAtMs);
    });
    const delivered = latencies.length;
    const detail = endDetail ? await endDetail(delivered) : undefined;
    await driver.stop();
    const usec = Object.fromEntries(
      Object.entries(cpu)
        .filter(([n]) => n !== 'other' && n !== 'machine')
        .map(([n, pct]) => [n, Math.round(((pct / 100) * 1e6 * s.durationS) / Math.max(1, delivered))]),
    );
    return {
      delivered_calls_per_s: Math.round(delivered / s.durationS),
      accepted_calls_per_s: Math.round((driver.acceptedCalls - acceptedBefore) / s.durationS),
      measured_s: s.durationS,
      latency_ms: percentiles(latencies, LATENCY_QUANTILES),
      cpu_pct: cpu,
      cpu_usec_per_delivered_call: { ...usec, sum: Object.values(usec).reduce((a, b) => a + b, 0) },
      peak_rss_mb: sampler.peakRssMb(),
      ...(detail
        ? {
            detail: {
              ...detail,
              mean_ms: latencies.length ? Math.round((latencies.reduce((a, b) => a + b, 0) / latencies.length) * 100) / 100 : null,
            },
          }
        : {}),
    };
  } finally {
    await producer.handle.stop();
    await worker.handle.stop();
    await deletePrefix(redis, prefix).catch(() => 0);
    redis.disconnect();
  }
}
