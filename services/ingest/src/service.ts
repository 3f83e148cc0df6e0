/**
 * Builds and starts ingest from a validated env. Used by index.ts and by tests that run the whole
 * pipeline in one process; it never reads process.env and never exits the process.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { Queue } from 'bullmq';
import { describeEnv, queueCatalog, type RouteJob } from '@eventrelay/config';
import { ConfigStore, closeRedis, closeServer, createRedis, listen, readConfigFile, whenReady, type Logger, type Registry, type ShutdownStep } from '@eventrelay/runtime';
import { ingestEnvSpec, type IngestEnv } from './env.js';
import { createIngestMetrics } from './metrics.js';
import { SourceDirectory } from './adapters/source-directory.js';
import { IntakeWriter } from './adapters/intake-writer.js';
import { QueueDepthGuard } from './adapters/queue-depth-guard.js';
import { createIngestHandler } from './http/app.js';

export interface IngestDeps {
  readonly logger: Logger;
  readonly registry: Registry;
  readonly clock?: () => number;
  readonly newId?: () => string;
}

export interface RunningIngest {
  readonly server: Server;
  readonly port: number;
  /** In order: stop accepting, then close queue and Redis. */
  readonly shutdownSteps: ShutdownStep[];
  close(): Promise<void>;
}

export async function startIngest(env: IngestEnv, deps: IngestDeps): Promise<RunningIngest> {
  const { logger, registry } = deps;
  const clock = deps.clock ?? Date.now;
  const newId = deps.newId ?? randomUUID;
  logger.info({ env: describeEnv(ingestEnvSpec, env) }, 'ingest.config');

  const control = createRedis(env.REDIS_URL, 'control', 'ingest-control');
  const hot = createRedis(env.REDIS_URL, 'hot-path', 'ingest-hot');
  const closeConnections = () => Promise.all([closeRedis(hot), closeRedis(control)]).then(() => undefined);
  try {
    await waitForRedis(control, logger);
    if (env.EVENTRELAY_CONFIG) {
      const applied = await new ConfigStore(control, env.EVENTRELAY_PREFIX).apply(await readConfigFile(env.EVENTRELAY_CONFIG));
      logger.info({ file: env.EVENTRELAY_CONFIG, version: applied.version }, 'config.applied');
    }
    await whenReady(hot, 10_000);
  } catch (err) {
    await closeConnections();
    throw err;
  }

  const queue = new Queue<RouteJob>(queueCatalog.route.name, { connection: hot, prefix: env.EVENTRELAY_PREFIX, defaultJobOptions: queueCatalog.route.defaultJobOptions });
  queue.on('error', () => undefined);
  const directory = new SourceDirectory(new ConfigStore(hot, env.EVENTRELAY_PREFIX), clock);
  await directory.start();
  const depthGuard = new QueueDepthGuard(queue, env.INGEST_MAX_QUEUE_DEPTH);
  depthGuard.start();
  const writer = new IntakeWriter({
    redis: hot,
    queue,
    prefix: env.EVENTRELAY_PREFIX,
    dedupeWindowSeconds: env.INGEST_DEDUPE_WINDOW_S,
    clock,
    onMarkFailed: (err) => logger.warn({ err }, 'dedupe.mark_failed'),
  });
  const handler = createIngestHandler({
    directory,
    writer,
    depthGuard,
    defaultRatePerSecond: env.INGEST_RATE_LIMIT,
    clock,
    newId,
    logger,
    metrics: createIngestMetrics(registry, () => depthGuard.depth),
    ops: { registry, readiness: { redis: async () => void (await control.ping()) } },
  });
  const server = await listen(createServer(handler), env.INGEST_PORT, env.INGEST_HOST ?? '0.0.0.0');
  // Longer than common load balancer idle timeouts, so the balancer closes first.
  server.keepAliveTimeout = 65_000;
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : env.INGEST_PORT;
  logger.info({ port }, 'ingest.listening');

  const shutdownSteps: ShutdownStep[] = [
    { name: 'stop accepting requests', run: () => closeServer(server) },
    { name: 'stop background polls', run: () => Promise.resolve((directory.stop(), depthGuard.stop())) },
    { name: 'close route queue', run: () => queue.close() },
    { name: 'quit redis', run: closeConnections },
  ];
  return {
    server,
    port,
    shutdownSteps,
    async close() {
      for (const step of shutdownSteps) await step.run();
    },
  };
}

async function waitForRedis(client: ReturnType<typeof createRedis>, logger: Logger): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await client.ping();
      return;
    } catch (err) {
      if (attempt === 1 || attempt % 10 === 0) logger.warn({ err: (err as Error).message, attempt }, 'redis.waiting');
      if (attempt >= 30) throw err;
      await new Promise((r) => setTimeout(r, 1000));
    }
  }
}
