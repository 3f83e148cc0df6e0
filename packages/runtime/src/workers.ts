/** Workers are opened only through the catalog, so the processor's job type follows the queue's name. */
import { Worker, type Job } from 'bullmq';
import type { RedisClient } from './redis.js';
import { queueCatalog, type PayloadOf, type QueueKey } from '@eventrelay/config';

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

export function openWorker<K extends QueueKey>(
  key: K,
  connection: RedisClient,
  prefix: string,
  processor: (job: Job<PayloadOf<K>>, token?: string) => Promise<unknown>,
  options: WorkerOptions,
): Worker<PayloadOf<K>> {
  const worker = new Worker<PayloadOf<K>>(queueCatalog[key].name, processor, {
    connection,
    prefix,
    concurrency: options.concurrency,
    lockDuration: options.lockDurationMs,
    stalledInterval: options.stalledIntervalMs,
    maxStalledCount: options.maxStalledCount,
    autorun: false,
  });
  worker.on('error', options.onError);
  return worker;
}
