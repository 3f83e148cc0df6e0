/**
 * Baseline of `pnpm bench:pipeline`: the bare minimum chain, BullMQ producer → worker → undici POST,
 * with nothing eventrelay adds (no HTTP intake, auth, validation, dedupe, routing, signing, attempt
 * log or per-destination gate). Run as two processes, like the pipeline's stages:
 *   producer  on each IPC call `add`, one addBulk of BATCH_SIZE jobs, one job per call (the same
 *             ~600 B track call the load generator sends, with properties.sentAtMs = now)
 *   worker    CONCURRENCY jobs at once, each POSTing its job's JSON to TARGET_URL through an undici
 *             Pool of CONNECTIONS keep-alive connections; a non-2xx fails the job
 * Finished jobs are removed at once, as eventrelay's deliver queue does.
 * Env: REDIS_URL, PREFIX, BATCH_SIZE, RUN_TAG (producer); TARGET_URL, CONCURRENCY, CONNECTIONS (worker).
 */
import { Queue, Worker, type ConnectionOptions } from 'bullmq';
import { Pool } from 'undici';
import { serveIpc } from '@eventrelay/testkit';
import { trackCall } from '../lib/payloads.js';

const env = process.env;
const redisUrl = new URL(env['REDIS_URL'] ?? 'redis://127.0.0.1:6379');
const connection: ConnectionOptions = {
  host: redisUrl.hostname,
  port: Number(redisUrl.port || 6379),
  db: Number(redisUrl.pathname.slice(1) || 0),
};
const prefix = env['PREFIX'] ?? 'bull';
const QUEUE = 'chain';

if (process.argv[2] === 'producer') {
  const queue = new Queue(QUEUE, { connection, prefix, defaultJobOptions: { removeOnComplete: true, removeOnFail: { age: 3600 } } });
  const size = Number(env['BATCH_SIZE'] ?? 20);
  const tag = env['RUN_TAG'] ?? 'x';
  let n = 0;
  serveIpc(async () => {
    const sentAtMs = Math.round((performance.timeOrigin + performance.now()) * 1000) / 1000;
    const ts = new Date().toISOString();
    const jobs = Array.from({ length: size }, () => {
      const call = trackCall(`c-${tag}-${++n}`, ts);
      return { name: QUEUE, data: { ...call, properties: { ...(call['properties'] as object), sentAtMs } } };
    });
    await queue.addBulk(jobs);
    return size;
  });
  void queue.waitUntilReady().then(() => process.send?.({ type: 'ready' }));
  process.on('SIGTERM', () => void queue.close().finally(() => process.exit(0)));
} else if (process.argv[2] === 'worker') {
  const target = new URL(env['TARGET_URL'] ?? 'http://127.0.0.1:8080/hook');
  const pool = new Pool(target.origin, { connections: Number(env['CONNECTIONS'] ?? 64), pipelining: 1 });
  const worker = new Worker(
    QUEUE,
    async (job) => {
      const res = await pool.request({
        method: 'POST',
        path: target.pathname,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(job.data),
      });
      await res.body.dump();
      if (res.statusCode >= 300) throw new Error(`receiver answered ${res.statusCode}`);
    },
    { connection, prefix, concurrency: Number(env['CONCURRENCY'] ?? 256) },
  );
  worker.on('error', (err) => process.stderr.write(`worker error: ${err.message}\n`));
  void worker.waitUntilReady().then(() => process.send?.({ type: 'ready' }));
  process.on('disconnect', () => process.exit(0));
  process.on('SIGTERM', () => void worker.close().finally(() => void pool.close().finally(() => process.exit(0))));
} else {
  throw new Error('usage: bullmq-chain.ts producer|worker');
}
