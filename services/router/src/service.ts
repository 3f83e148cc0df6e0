/**
 * Builds and starts the router from a validated env. Used by index.ts and by tests that run the
 * pipeline in one process; it never reads process.env and never exits the process.
 */
import type { ChainableCommander } from 'ioredis';
import { describeEnv } from '@eventrelay/config';
import {
  createRedis,
  openQueue,
  openWorker,
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
  /** Reloads destinations now instead of within a second; for tests. (Suppressions are read per route job.) */
  refreshConfig(): Promise<void>;
};

export async function startRouter(env: RouterEnv, deps: RouterDeps): Promise<RunningRouter> {
  const { logger, registry } = deps;
  logger.info({ env: describeEnv(routerEnvSpec, env) }, 'router.config');
  const configFile = await readConfigFile(env.EVENTRELAY_CONFIG, env.EVENTRELAY_CONFIG_MODE);

  const control = createRedis(env, 'control', 'router-control', registry);
  const connection = createRedis(env, 'worker', 'router-worker', registry);
  const deliverQueue = openQueue('deliver', connection, env.EVENTRELAY_PREFIX, (err) =>
    logger.warn({ err: err.message }, 'deliver_queue.error'),
  );
  const profileQueue =
    env.ROUTER_FEED_PROFILES === 'true'
      ? openQueue('profile', connection, env.EVENTRELAY_PREFIX, (err) => logger.warn({ err: err.message }, 'profile_queue.error'))
      : undefined;
  const store = new ConfigStore(control, env.EVENTRELAY_PREFIX);
  const destinations = new DestinationDirectory(store, 1000, (err) => logger.warn({ err: String(err) }, 'config.refresh_failed'));
  const suppressions = new SuppressionList(control, env.EVENTRELAY_PREFIX, (what, detail) => logger.warn(detail, what));
  // The batch's mark and the jobs it becomes go in one MULTI, so both live on `connection`.
  const batches = new CallBatches(connection, env.EVENTRELAY_PREFIX);
  // Known once BullMQ has set the connection up (prepare, below), before the worker takes a job.
  let transaction: (() => ChainableCommander) | undefined;
  const worker = openWorker(
    'route',
    connection,
    env.EVENTRELAY_PREFIX,
    createRouteProcessor({
      destinations,
      suppressions,
      batches,
      transaction: () => transaction!(),
      deliverQueue,
      ...(profileQueue ? { profileQueue } : {}),
      metrics: createRouterMetrics(registry),
      logger,
      clock: deps.clock ?? Date.now,
    }),
    {
      concurrency: env.ROUTER_CONCURRENCY,
      lockDurationMs: 30_000,
      stalledIntervalMs: 15_000,
      maxStalledCount: 5,
      onError: (err) => logger.warn({ err: err.message }, 'route_worker.error'),
    },
  );
  worker.on('failed', (job, err) =>
    logger.error({ batchId: job?.data.batchId, attempt: job?.attemptsMade, err: err.message }, 'route.failed'),
  );
  const running = await runWorkerProcess({
    name: 'router',
    workers: [worker],
    connections: [control, connection],
    control,
    opsPort: env.ROUTER_METRICS_PORT,
    registry,
    prefix: env.EVENTRELAY_PREFIX,
    logger,
    async prepare() {
      await applyConfigFile(store, configFile, logger);
      await destinations.start();
      transaction = await transactionsOn(deliverQueue);
    },
    async release() {
      destinations.stop();
      await deliverQueue.close();
      await profileQueue?.close();
    },
    finishing: 'finish active route jobs (two Redis round trips each)',
  });
  return {
    ...running,
    refreshConfig: () => destinations.refresh(),
  };
}
