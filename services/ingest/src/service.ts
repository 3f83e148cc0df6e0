/**
 * Builds and starts ingest from a validated env. Used by index.ts and by tests that run the whole
 * pipeline in one process; it never reads process.env and never exits the process.
 */
import { randomUUID } from 'node:crypto';
import type { RequestListener } from 'node:http';
import { describeEnv, keyspace } from '@eventrelay/config';
import {
  closeRedis,
  createRedis,
  infoOfPrimaries,
  openShardedQueue,
  replicaWaitOn,
  serveHttp,
  shutdownGate,
  transactionsOn,
  waitForRedis,
  type Logger,
  type Registry,
  type RunningHttpService,
} from '@eventrelay/runtime';
import { CallBatches, ConfigStore, SourceEvents, StatsCounters, applyConfigFile, readConfigFile } from '@eventrelay/stores';
import { ingestEnvSpec, type IngestEnv } from './env.js';
import { createIngestMetrics } from './metrics.js';
import { SourceDirectory } from './adapters/source-directory.js';
import { IntakeWriter } from './adapters/intake-writer.js';
import { ShardedIntake } from './adapters/sharded-intake.js';
import { QueueDepthGuard } from './adapters/queue-depth-guard.js';
import { RedisMemoryGuard } from './adapters/redis-memory-guard.js';
import { ReplicaGuard } from './adapters/replica-guard.js';
import { createIngestHandler } from './http/app.js';
import { redactSecrets } from './domain/redact.js';
import { RefusalHold } from './http/refusal-hold.js';

/** Refusals held at once per process (INGEST_REFUSAL_HOLD_MS): a few percent of INGEST_MAX_CONNECTIONS's default. */
const MAX_HELD_REFUSALS = 1000;

export interface IngestDeps {
  readonly logger: Logger;
  readonly registry: Registry;
  readonly clock?: () => number;
  readonly newId?: () => string;
  /** How held refusals wait (http/refusal-hold.ts); a timer by default. */
  readonly sleep?: (ms: number) => Promise<void>;
}

/** In shutdown order: stop accepting and finish in-flight requests, then close queue and Redis. */
export type RunningIngest = RunningHttpService;

export async function startIngest(env: IngestEnv, deps: IngestDeps): Promise<RunningIngest> {
  const { logger, registry } = deps;
  const clock = deps.clock ?? Date.now;
  const newId = deps.newId ?? randomUUID;
  logger.info({ env: describeEnv(ingestEnvSpec, env) }, 'ingest.config');
  // Checked before anything connects: a bad file must leave Redis untouched.
  const configFile = await readConfigFile(env.EVENTRELAY_CONFIG, env.EVENTRELAY_CONFIG_MODE);

  const control = createRedis(env, 'control', 'ingest-control', registry);
  const hot = createRedis(env, 'hot-path', 'ingest-hot', registry);
  // Durable mode's WAIT holds its connection until the replicas answer: the writes get their own,
  // so write-key lookups and the debugger never queue behind it.
  const durable = env.INGEST_DURABLE_REPLICAS > 0;
  const writes = durable ? createRedis(env, 'hot-path', 'ingest-writes', registry) : hot;
  const keys = keyspace(env.EVENTRELAY_PREFIX, env.EVENTRELAY_SHARDS);
  const queues = openShardedQueue('route', writes, keys, (err) => logger.warn({ err: err.message }, 'route_queue.error'));
  const directory = new SourceDirectory(new ConfigStore(hot, env.EVENTRELAY_PREFIX, { keys }), clock);
  // The route queue's depth summed over its shards: a stalled router shows in any of them.
  const depthGuard = new QueueDepthGuard(
    { getWaitingCount: async () => (await Promise.all(queues.map((q) => q.getWaitingCount()))).reduce((a, b) => a + b, 0) },
    env.INGEST_MAX_QUEUE_DEPTH,
  );
  const info = (section: string) => infoOfPrimaries(control, section);
  const sourceDefaults = {
    serverRatePerSecond: env.INGEST_RATE_LIMIT,
    clientRatePerSecond: env.INGEST_CLIENT_RATE_LIMIT,
    serverMemoryShare: env.INGEST_SERVER_SOURCE_MEMORY_SHARE,
    clientMemoryShare: env.INGEST_CLIENT_SOURCE_MEMORY_SHARE,
  };
  // A source's own memoryShare needs maxmemory too: sampled whenever claims are kept.
  const memoryGuard = new RedisMemoryGuard(info, env.INGEST_REDIS_MEMORY_LIMIT_RATIO, env.INGEST_DEDUPE_WINDOW_S > 0);
  const replicaGuard = durable ? new ReplicaGuard(info, env.INGEST_DURABLE_REPLICAS) : undefined;
  const debugEvents =
    env.INGEST_DEBUG_EVENTS > 0
      ? new SourceEvents(hot, keys, {
          max: env.INGEST_DEBUG_EVENTS,
          prepare: redactSecrets,
          onError: (err) => logger.warn({ err }, 'debug_events.write_failed'),
        })
      : undefined;
  const stats = new StatsCounters(hot, keys, {
    clock,
    onError: (err) => logger.warn({ err: String(err) }, 'stats.write_failed'),
  });
  const gate = shutdownGate();
  const release = async () => {
    await Promise.all([debugEvents?.close(), stats.close()]);
    directory.stop();
    depthGuard.stop();
    memoryGuard.stop();
    replicaGuard?.stop();
    await Promise.all(queues.map((q) => q.close()));
    await Promise.all([closeRedis(hot), closeRedis(control), ...(durable ? [closeRedis(writes)] : [])]);
  };

  let handler: RequestListener;
  try {
    await waitForRedis(durable ? [control, hot, writes] : [control, hot], () => logger.info('redis.waiting'));
    await applyConfigFile(new ConfigStore(control, env.EVENTRELAY_PREFIX, { keys }), configFile, logger);
    await directory.start();
    depthGuard.start();
    await memoryGuard.start();
    await replicaGuard?.start();
    debugEvents?.start();
    stats.start();
    const metrics = createIngestMetrics(
      registry,
      () => depthGuard.depth,
      () => memoryGuard.ratio,
      () => replicaGuard?.replicas,
      () => directory.sourceIds(),
    );
    // Durable mode's series exist from the start, so dashboards and alerts see 0 rather than nothing.
    if (durable) for (const result of ['confirmed', 'not_replicated']) metrics.replicaWait.zero({ result });
    // Each shard's batch and its route job go in one MULTI on the route queue's connection.
    const writers = await Promise.all(
      queues.map(
        async (queue) =>
          new IntakeWriter({
            batches: new CallBatches(writes, queue.opts.prefix as string),
            transaction: await transactionsOn(queue),
            queue,
            dedupeWindowSeconds: env.INGEST_DEDUPE_WINDOW_S,
            flushMs: env.INGEST_FLUSH_MS,
            clock,
            newBatchId: newId,
            ...(durable
              ? {
                  durable: {
                    replicas: env.INGEST_DURABLE_REPLICAS,
                    timeoutMs: env.INGEST_DURABLE_TIMEOUT_MS,
                    wait: await replicaWaitOn(queue),
                    observe: (seconds: number, confirmed: boolean) =>
                      metrics.replicaWait.observe({ result: confirmed ? 'confirmed' : 'not_replicated' }, seconds),
                  },
                }
              : {}),
          }),
      ),
    );
    const writer =
      writers.length === 1 ? (writers[0] as IntakeWriter) : new ShardedIntake(writers, (sourceId) => keys.routeShardOf(sourceId));
    if (replicaGuard?.short)
      logger.warn(
        { replicasOnline: replicaGuard.replicas, INGEST_DURABLE_REPLICAS: env.INGEST_DURABLE_REPLICAS },
        'ingest.durable_without_replicas: until enough replicas are online, every request is answered 503 not_replicated',
      );
    handler = createIngestHandler({
      directory,
      writer,
      depthGuard,
      memoryGuard,
      ...(replicaGuard ? { replicaGuard } : {}),
      ...(debugEvents ? { debugEvents } : {}),
      stats,
      sourceDefaults,
      refusals: {
        hold: new RefusalHold(MAX_HELD_REFUSALS, deps.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)))),
        maxMs: env.INGEST_REFUSAL_HOLD_MS,
      },
      clock,
      newId,
      logger,
      metrics,
      ops: { registry, readiness: { redis: async () => void (await control.ping()), accepting: gate.check } },
    });
  } catch (err) {
    await release();
    throw err;
  }
  return serveHttp({
    name: 'ingest',
    handler,
    port: env.INGEST_PORT,
    host: env.INGEST_HOST,
    limits: {
      headersTimeoutMs: env.INGEST_HEADERS_TIMEOUT_MS,
      requestTimeoutMs: env.INGEST_REQUEST_TIMEOUT_MS,
      keepAliveTimeoutMs: env.INGEST_KEEP_ALIVE_TIMEOUT_MS,
      maxConnections: env.INGEST_MAX_CONNECTIONS,
    },
    logger,
    stopAccepting: gate.begin,
    release,
    releasing: 'close route queue and Redis',
  });
}
