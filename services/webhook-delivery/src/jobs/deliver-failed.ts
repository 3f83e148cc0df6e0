/**
 * The deliver worker's 'failed' handler (BullMQ's own failures of a job, not a receiver's): one log
 * line per failed run, and the retry backlog count given back when a job is failed for good.
 */
import type { Job } from 'bullmq';
import type { ChainableCommander } from 'ioredis';
import type { DeliverJob } from '@eventrelay/config';
import { execAll, queueJobDataWrite, type Logger } from '@eventrelay/runtime';
import type { RetryBacklog } from '@eventrelay/stores';
import { countedBytes, countedCalls } from '../domain/retry-cap.js';

export interface FailedJobDeps {
  readonly retryBacklog: Pick<RetryBacklog, 'queueChange'>;
  /** A MULTI on the connection the deliver jobs live on. */
  readonly transaction: () => ChainableCommander;
  /** The job's data as stored now (runtime readJobData). */
  readonly readData: (job: Job) => Promise<string | undefined>;
  readonly logger: Logger;
}

/**
 * The worker's 'failed' handler: one log line per failed run. A job BullMQ failed for good (its
 * attempts used up: a defect, or Redis trouble for longer than its backoff) no longer holds calls
 * for a retry, so it gives its counted calls back: the count and bytes and the job's `counted` and
 * `countedBytes` (read from Redis, not from this process's copy, which can be a commit behind) go
 * down together in one MULTI, so an operator who retries the failed job later keeps the count right too. What still
 * makes the count drift upward (docs/delivery.md, "The retry backlog cap"): this process dying
 * between BullMQ's final failure and this MULTI, or a job failed by BullMQ's stalled-job check
 * (no worker sees that failure), when such a failed job is then deleted (after 7 days, or by
 * hand) without being retried.
 */
export function createFailedJobHandler(deps: FailedJobDeps): (job: Job<DeliverJob> | undefined, err: Error) => Promise<void> {
  const { logger } = deps;
  return async (job, err) => {
    const line = { jobId: job?.id, destinationId: job?.data.destinationId, err: err.message };
    // attemptsMade already counts this run; a job added without attempts has one.
    if (!job || job.attemptsMade < (job.opts.attempts ?? 1)) {
      logger.error({ ...line, final: false }, 'delivery.job_failed');
      return;
    }
    let given: number;
    try {
      given = await giveBack(job);
    } catch (giveErr) {
      logger.error({ ...line, final: true, retryCountError: String(giveErr) }, 'delivery.job_failed');
      return;
    }
    logger.error({ ...line, final: true, retryCountReturned: given }, 'delivery.job_failed');
  };

  async function giveBack(job: Job<DeliverJob>): Promise<number> {
    const raw = await deps.readData(job);
    if (raw === undefined) return 0;
    const stored = JSON.parse(raw) as DeliverJob;
    const counted = countedCalls(stored);
    const bytes = countedBytes(stored);
    if ((counted === 0 && bytes === 0) || !('calls' in stored)) return 0;
    const tx = deps.transaction();
    deps.retryBacklog.queueChange(tx, stored.destinationId, -counted, -bytes);
    queueJobDataWrite(tx, job, { ...stored, counted: 0, countedBytes: 0 });
    await execAll(tx);
    return counted;
  }
}
