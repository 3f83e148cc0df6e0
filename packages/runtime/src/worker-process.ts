/**
 * The life of a worker process (router, webhook-delivery, audiences): wait for Redis, prepare
 * (apply the config file, load caches), serve /healthz /readyz /metrics, run the BullMQ workers, and shut down
 * in order on request: stop taking jobs and let active ones finish → release queues, caches and
 * Redis → close the ops server.
 */
import type { Worker } from 'bullmq';
import type { RedisClient } from './redis.js';
import type { Logger } from 'pino';
import type { Keyspace } from '@eventrelay/config';
import type { Registry } from 'prom-client';
import { closeServer, shutdownGate, startOpsServer } from './ops.js';
import { registerQueueMetrics } from './queue-metrics.js';
import { closeRedis, waitForRedis } from './redis.js';
import type { ShutdownStep } from './shutdown.js';

export interface WorkerProcessParts {
  /** For log lines: `<name>.started`, `<name>_worker.stopped`. */
  readonly name: string;
  /** One per queue the process consumes. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- any payload: only lifecycle methods are used
  readonly workers: readonly Worker<any>[];
  /** Every connection the process uses; start-up waits for all of them, shutdown closes them after release(). */
  readonly connections: readonly RedisClient[];
  /** Pinged by /readyz. */
  readonly control: RedisClient;
  readonly opsPort: number;
  /** Gets the process's metrics and, from every worker process, each queue's depth and age. */
  readonly registry: Registry;
  /** Where the queues live (EVENTRELAY_PREFIX and its shards). */
  readonly keys: Keyspace;
  readonly logger: Logger;
  /** Runs once Redis answers and before the worker takes jobs. */
  prepare(): Promise<void>;
  /** Closes what the process opened besides the workers and connections: queues, caches, buffers. */
  release(): Promise<void>;
  /** What finishing an active job means, for the shutdown log. */
  readonly finishing: string;
  /**
   * Called once when shutdown begins, before waiting for the active jobs: a long job (a full pass)
   * can then stop at its next step and hand itself back instead of holding the shutdown up.
   */
  onStopping?(): void;
}

/** A started worker process; the services add what their tests need (refreshConfig, …). */
export interface RunningWorkerProcess {
  readonly port: number;
  readonly shutdownSteps: ShutdownStep[];
  close(): Promise<void>;
}

export async function runWorkerProcess(parts: WorkerProcessParts): Promise<RunningWorkerProcess> {
  const { workers, logger } = parts;
  const closeWorkers = async () => void (await Promise.all(workers.map((w) => w.close())));
  // Queues and buffers are flushed over the connections, so those close last.
  const releaseAll = async () => {
    await parts.release();
    await Promise.all(parts.connections.map(closeRedis));
  };
  const gate = shutdownGate();
  // Every worker process reports every queue, so one that dies does not blind the figures.
  registerQueueMetrics(parts.registry, parts.control, parts.keys);
  let ops: Awaited<ReturnType<typeof startOpsServer>>;
  try {
    await waitForRedis(parts.connections);
    await parts.prepare();
    ops = await startOpsServer(parts.opsPort, '0.0.0.0', {
      registry: parts.registry,
      readiness: {
        redis: async () => void (await parts.control.ping()),
        accepting: gate.check,
        // A worker paused while Redis is full (openWorker) is whole: it resumes by itself.
        worker: () =>
          workers.every((w) => w.isRunning() || w.isPaused()) ? Promise.resolve() : Promise.reject(new Error('worker not running')),
      },
    });
  } catch (err) {
    await closeWorkers();
    await releaseAll();
    throw err;
  }
  for (const w of workers)
    w.run().catch((err: unknown) => logger.error({ queue: w.name, err: String(err) }, `${parts.name}_worker.stopped`));
  logger.info({ port: ops.port, concurrency: Object.fromEntries(workers.map((w) => [w.name, w.concurrency])) }, `${parts.name}.started`);

  const shutdownSteps: ShutdownStep[] = [
    {
      // Waiting jobs stay queued for the next worker; worker.close() waits for the active ones.
      name: `stop taking jobs, ${parts.finishing}`,
      run: async () => {
        gate.begin();
        parts.onStopping?.();
        await closeWorkers();
      },
    },
    {
      name: 'release queues and Redis, close the ops server',
      run: async () => void (await Promise.all([releaseAll(), closeServer(ops.server)])),
    },
  ];
  return {
    port: ops.port,
    shutdownSteps,
    async close() {
      for (const step of shutdownSteps) await step.run();
    },
  };
}
