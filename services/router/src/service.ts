/**
 * Builds and starts the router from a validated env. Used by index.ts and by tests that run the
 * pipeline in one process; it never reads process.env and never exits the process.
 */
import type { ChainableCommander } from 'ioredis';
import { consumedShards, describeEnv, keyspace } from '@eventrelay/config';
import {
  createRedis,
  openShardedQueue,
  openWorker,
  pipelinesOn,
  runWorkerProcess,
  transactionsOn,
  type Logger,
  type Registry,
  type RunningWorkerProcess,
} from '@eventrelay/runtime';
import { CallBatches, ConfigStore, DestinationDirectory, applyConfigFile, readConfigFile } from '@eventrelay/stores';
import { routerEnvSpec, type RouterEnv } from './env.js';
import { createRouterMetrics } from './metrics.js';
import { SuppressionList } from './adapters/suppression-list.js';
import { createRouteProcessor } from './jobs/route.js';

export interface RouterDeps {
  readonly logger: Logger;
  readonly registry: Registry;
  readonly clock?: () => number;
}

export type RunningRouter = RunningWorkerProcess & {
  /** Reloads destinations and audience sources now instead of within a second; for tests. (Suppressions are read per route job.) */
  refreshConfig(): Promise<void>;
};

export async function startRouter(env: RouterEnv, deps: RouterDeps): Promise<RunningRouter> {
  const { logger, registry } = deps;
  logger.info({ env: describeEnv(routerEnvSpec, env) }, 'router.config');
  const configFile = await readConfigFile(env.EVENTRELAY_CONFIG, env.EVENTRELAY_CONFIG_MODE);

  const control = createRedis(env, 'control', 'router-control', registry);
  const connection = createRedis(env, 'worker', 'router-worker', registry);
  const keys = keyspace(env.EVENTRELAY_PREFIX, env.EVENTRELAY_SHARDS);
  const deliverQueues = openShardedQueue('deliver', connection, keys, (err) => logger.warn({ err: err.message }, 'deliver_queue.error'));
  const profileQueues =
    env.ROUTER_FEED_PROFILES === 'true'
      ? openShardedQueue('profile', connection, keys, (err) => logger.warn({ err: err.message }, 'profile_queue.error'))
      : undefined;
  const store = new ConfigStore(control, env.EVENTRELAY_PREFIX, { keys });
  const destinations = new DestinationDirectory(store, 1000, (err) => logger.warn({ err: String(err) }, 'config.refresh_failed'));
  const metrics = createRouterMetrics(registry);
  // Known once BullMQ has set the connection up (prepare, below), before the worker takes a job.
  let transaction: (() => ChainableCommander) | undefined;
  let pipeline: (() => ChainableCommander) | undefined;
  // One worker per route shard consumed; the batch's mark and the jobs it becomes go in one MULTI
  // (or, across shards, in steps), so the batches live on `connection` too.
  const workers = consumedShards(env).map((shard) => {
    const profileQueue = profileQueues?.[shard];
    const worker = openWorker(
      'route',
      connection,
      keys.prefixes[shard] as string,
      createRouteProcessor({
        destinations,
        // The count of suppressed users is read on this shard (its copy), the users themselves at home.
        suppressions: new SuppressionList(control, keys, keys.prefixes[shard] as string, (what, detail) => logger.warn(detail, what)),
        batches: new CallBatches(connection, keys.prefixes[shard] as string),
        transaction: () => transaction!(),
        pipeline: () => pipeline!(),
        deliverQueueOf: (destinationId) => deliverQueues[keys.deliverShardOf(destinationId)]!,
        ...(profileQueue ? { profileQueue } : {}),
        metrics,
        logger,
        clock: deps.clock ?? Date.now,
      }),
      {
        concurrency: env.ROUTER_CONCURRENCY,
        lockDurationMs: 30_000,
        stalledIntervalMs: 15_000,
        maxStalledCount: 5,
        onError: (err) => logger.warn({ err: err.message, shard }, 'route_worker.error'),
      },
    );
    worker.on('failed', (job, err) =>
      logger.error({ batchId: job?.data.batchId, attempt: job?.attemptsMade, err: err.message, shard }, 'route.failed'),
    );
    return worker;
  });
  const running = await runWorkerProcess({
    name: 'router',
    workers,
    connections: [control, connection],
    control,
    opsPort: env.ROUTER_METRICS_PORT,
    registry,
    keys,
    logger,
    async prepare() {
      await applyConfigFile(store, configFile, logger);
      await destinations.start();
      transaction = await transactionsOn(deliverQueues[0]!);
      pipeline = await pipelinesOn(deliverQueues[0]!);
    },
    async release() {
      destinations.stop();
      await Promise.all([...deliverQueues, ...(profileQueues ?? [])].map((q) => q.close()));
    },
    finishing: 'finish active route jobs (two Redis round trips each)',
  });
  return {
    ...running,
    refreshConfig: () => destinations.refresh(),
  };
}
