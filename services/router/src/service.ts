/**
 * Builds and starts the router from a validated env. Used by index.ts and by tests that run the
 * pipeline in one process; it never reads process.env and never exits the process.
 */
import { describeEnv } from '@eventrelay/config';
import {
  ConfigStore,
  DestinationDirectory,
  closeRedis,
  closeServer,
  createRedis,
  openQueue,
  openWorker,
  readConfigFile,
  shutdownGate,
  startOpsServer,
  whenReady,
  type Logger,
  type Registry,
  type ShutdownStep,
} from '@eventrelay/runtime';
import { routerEnvSpec, type RouterEnv } from './env.js';
import { createRouterMetrics } from './metrics.js';
import { SuppressionList } from './adapters/suppression-list.js';
import { createRouteProcessor } from './worker.js';

export interface RouterDeps {
  readonly logger: Logger;
  readonly registry: Registry;
  readonly clock?: () => number;
}

export interface RunningRouter {
  /** Port of the ops server (/healthz /readyz /metrics). */
  readonly port: number;
  /** Reloads destinations now instead of within a second; for tests. */
  refreshConfig(): Promise<void>;
  readonly shutdownSteps: ShutdownStep[];
  close(): Promise<void>;
}

const REDIS_STARTUP_TIMEOUT_MS = 30_000;

export async function startRouter(env: RouterEnv, deps: RouterDeps): Promise<RunningRouter> {
  const { logger, registry } = deps;
  logger.info({ env: describeEnv(routerEnvSpec, env) }, 'router.config');
  const config = env.EVENTRELAY_CONFIG ? await readConfigFile(env.EVENTRELAY_CONFIG) : undefined;

  const control = createRedis(env.REDIS_URL, 'control', 'router-control');
  const connection = createRedis(env.REDIS_URL, 'worker', 'router-worker');
  const deliverQueue = openQueue('deliver', connection, env.EVENTRELAY_PREFIX, (err) => logger.warn({ err: err.message }, 'deliver_queue.error'));
  const store = new ConfigStore(control, env.EVENTRELAY_PREFIX);
  const destinations = new DestinationDirectory(store, 1000, (err) => logger.warn({ err: String(err) }, 'config.refresh_failed'));
  const suppressions = new SuppressionList(control, env.EVENTRELAY_PREFIX);
  const worker = openWorker(
    'route',
    connection,
    env.EVENTRELAY_PREFIX,
    createRouteProcessor({
      destinations,
      suppressions,
      deliverQueue,
      dedupeWindowMs: env.ROUTER_DEDUPE_WINDOW_S * 1000,
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
  worker.on('failed', (job, err) => logger.error({ requestId: job?.data.requestId, attempt: job?.attemptsMade, err: err.message }, 'route.failed'));
  const gate = shutdownGate();
  const release = async () => {
    destinations.stop();
    suppressions.stop();
    await deliverQueue.close();
    await Promise.all([closeRedis(connection), closeRedis(control)]);
  };

  let ops: Awaited<ReturnType<typeof startOpsServer>>;
  try {
    await Promise.all([whenReady(control, REDIS_STARTUP_TIMEOUT_MS), whenReady(connection, REDIS_STARTUP_TIMEOUT_MS)]);
    if (config) logger.info({ file: env.EVENTRELAY_CONFIG, version: (await store.apply(config)).version }, 'config.applied');
    await destinations.start();
    await suppressions.start();
    ops = await startOpsServer(env.ROUTER_METRICS_PORT, '0.0.0.0', {
      registry,
      readiness: { redis: async () => void (await control.ping()), accepting: gate.check, worker: async () => (worker.isRunning() ? undefined : Promise.reject(new Error('worker not running'))) },
    });
  } catch (err) {
    await worker.close();
    await release();
    throw err;
  }
  worker.run().catch((err: unknown) => logger.error({ err: String(err) }, 'route_worker.stopped'));
  logger.info({ port: ops.port, concurrency: env.ROUTER_CONCURRENCY }, 'router.started');

  const shutdownSteps: ShutdownStep[] = [
    {
      // Active route jobs finish (each is a few Redis calls); waiting ones stay queued.
      name: 'stop taking route jobs, finish active ones',
      run: async () => {
        gate.begin();
        await worker.close();
      },
    },
    { name: 'close queues, Redis and the ops server', run: async () => void (await Promise.all([release(), closeServer(ops.server)])) },
  ];
  return {
    port: ops.port,
    refreshConfig: async () => {
      await destinations.refresh();
      await suppressions.refresh();
    },
    shutdownSteps,
    async close() {
      for (const step of shutdownSteps) await step.run();
    },
  };
}
