/** Workers are opened only through the catalog, so the processor's job type follows the queue's name. */
import { Worker, type Job } from 'bullmq';
import type { RedisClient } from './redis.js';
import { queueCatalog, type PayloadOf, type QueueKey } from '@eventrelay/config';
import { redisFullOf } from './redis-full.js';

export interface WorkerOptions {
  readonly concurrency: number;
  /**
   * How long a job stays locked to a worker that stopped renewing the lock (it died): after this
   * its jobs are handed to another worker. Renewal runs every half of it.
   */
  readonly lockDurationMs: number;
  /** How often jobs whose lock lapsed are looked for. */
  readonly stalledIntervalMs: number;
  /** How often a job may be found stalled before BullMQ fails it. */
  readonly maxStalledCount: number;
  readonly onError: (err: Error) => void;
}

/**
 * A worker of queue `key`. While Redis is full (docs/runbook.md, EventrelayRedisFull) it takes no
 * new jobs, backing off (runtime redis-full.ts), and a job whose processor meets the refusal is run
 * again in place after the wait, still locked to this worker, instead of failing: BullMQ could not
 * record the failure anyway, and the lock would lapse and the job run again elsewhere, over and
 * over. Processors are therefore safe to run twice (they are: a job may always run again after a
 * crash), and one that must not redo work it did before the refusal (webhook-delivery's requests)
 * keeps that work itself.
 */
export function openWorker<K extends QueueKey>(
  key: K,
  connection: RedisClient,
  prefix: string,
  processor: (job: Job<PayloadOf<K>>, token?: string) => Promise<unknown>,
  options: WorkerOptions,
): Worker<PayloadOf<K>> {
  const full = redisFullOf(connection);
  const worker: Worker<PayloadOf<K>> = new Worker<PayloadOf<K>>(
    queueCatalog[key].name,
    (job, token) =>
      full.hold(
        job,
        token,
        options.lockDurationMs,
        () => worker.closing !== undefined,
        () => processor(job, token),
      ),
    {
      connection,
      prefix,
      concurrency: options.concurrency,
      lockDuration: options.lockDurationMs,
      stalledInterval: options.stalledIntervalMs,
      maxStalledCount: options.maxStalledCount,
      autorun: false,
    },
  );
  worker.on('error', (err) => {
    full.noteWorkerError(worker, err);
    options.onError(err);
  });
  // Taking or finishing a job is a write: Redis takes writes again.
  worker.on('active', () => full.written());
  worker.on('completed', () => full.written());
  return worker;
}
