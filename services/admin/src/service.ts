/**
 * Builds and starts the admin API from a validated env. Used by index.ts and by tests; it never
 * reads process.env and never exits the process.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { RequestListener } from 'node:http';
import { describeEnv, keyspace, queueCatalog } from '@eventrelay/config';
import {
  closeRedis,
  createRedis,
  openQueue,
  openShardedQueue,
  transactionsOn,
  serveHttp,
  shutdownGate,
  waitForRedis,
  type Logger,
  type Registry,
  type RunningHttpService,
} from '@eventrelay/runtime';
import {
  AttemptLog,
  AuditLog,
  CallBatches,
  ConfigStore,
  DeadLetterStore,
  DeletionReceipts,
  RegulationStore,
  ReplayProgressStore,
  SourceEvents,
  StatsCounters,
  applyConfigFile,
  readConfigFile,
} from '@eventrelay/stores';
import { adminEnvSpec, type AdminEnv } from './env.js';
import { createAdminMetrics } from './metrics.js';
import { Replayer } from './adapters/replayer.js';
import { IntakeQueue } from './adapters/intake-queue.js';
import { AudienceStatus } from './adapters/audience-status.js';
import { createAdminHandler } from './http/app.js';
import { consoleHandler } from './http/console.js';
import { OPENAPI_VERSION, buildOpenApi } from './http/openapi.js';
import { adminRoutes } from './http/routes/index.js';

/** This package's version (services/admin/package.json, beside src/ and dist/ alike). */
const PACKAGE_VERSION = (JSON.parse(readFileSync(path.join(__dirname, '..', 'package.json'), 'utf8')) as { version: string }).version;

export interface AdminDeps {
  readonly logger: Logger;
  readonly registry: Registry;
  readonly clock?: () => number;
}

export type RunningAdmin = RunningHttpService;

export async function startAdmin(env: AdminEnv, deps: AdminDeps): Promise<RunningAdmin> {
  const { logger, registry } = deps;
  const clock = deps.clock ?? Date.now;
  logger.info({ env: describeEnv(adminEnvSpec, env), tokens: env.ADMIN_TOKEN.map((t) => t.id) }, 'admin.config');
  // Checked before anything connects: a bad file must leave Redis untouched.
  const configFile = await readConfigFile(env.EVENTRELAY_CONFIG, env.EVENTRELAY_CONFIG_MODE);

  const redis = createRedis(env, 'control', 'admin', registry);
  const prefix = env.EVENTRELAY_PREFIX;
  const keys = keyspace(prefix, env.EVENTRELAY_SHARDS);
  const deliverQueues = openShardedQueue('deliver', redis, keys, (err) => logger.warn({ err: err.message }, 'deliver_queue.error'));
  const regulationQueue = openQueue('regulation', redis, prefix, (err) => logger.warn({ err: err.message }, 'regulation_queue.error'));
  const routeQueues = openShardedQueue('route', redis, keys, (err) => logger.warn({ err: err.message }, 'route_queue.error'));
  const gate = shutdownGate();
  const release = async () => {
    await Promise.all([...deliverQueues, regulationQueue, ...routeQueues].map((q) => q.close()));
    await closeRedis(redis);
  };

  let handler: RequestListener;
  try {
    await waitForRedis([redis], () => logger.info('redis.waiting'));
    const store = new ConfigStore(redis, prefix, { auditMax: env.ADMIN_AUDIT_MAX, keys });
    await applyConfigFile(store, configFile, logger, clock);
    // The logs' caps are kept by their writers (webhook-delivery, ingest); this process only reads
    // them, and removes dead letters on replay.
    const deadLetters = new DeadLetterStore(redis, keys, { maxPerDestination: Number.MAX_SAFE_INTEGER });
    const replays = new ReplayProgressStore(redis, keys);
    const batches = keys.prefixes.map((p) => new CallBatches(redis, p));
    const routes = adminRoutes({
      store,
      attempts: new AttemptLog(redis, keys, { maxPerDestination: Number.MAX_SAFE_INTEGER }),
      deadLetters,
      replayer: new Replayer(deadLetters, replays, (destinationId) => deliverQueues[keys.deliverShardOf(destinationId)]!, clock),
      replays,
      intake: new IntakeQueue(
        (sourceId) => {
          const shard = keys.routeShardOf(sourceId);
          return { batches: batches[shard]!, queue: routeQueues[shard]! };
        },
        await transactionsOn(routeQueues[0]!),
        clock,
      ),
      info: { version: PACKAGE_VERSION, intakeUrl: env.ADMIN_INTAKE_URL },
      audit: new AuditLog(redis, prefix, env.ADMIN_AUDIT_MAX),
      events: new SourceEvents(redis, keys, { max: Number.MAX_SAFE_INTEGER }),
      audienceStatus: new AudienceStatus(redis, prefix),
      regulations: new RegulationStore(redis, prefix),
      receipts: new DeletionReceipts(redis, prefix),
      // Read only: webhook-delivery and ingest count and write.
      stats: new StatsCounters(redis, keys),
      queueRegulation: async (job) => void (await regulationQueue.add(queueCatalog.regulation.jobName, job, { jobId: job.id })),
      clock,
      newId: (kind) => `${kind}_${randomBytes(8).toString('hex')}`,
      newWriteKey: () => `wk_${randomBytes(32).toString('base64url')}`,
      // The Standard Webhooks form, which their libraries take as it is (docs/receivers.md).
      newSecret: () => `whsec_${randomBytes(32).toString('base64')}`,
      newTestMessageId: () => `test-${randomBytes(12).toString('hex')}`,
      openApi: () => openApi,
    });
    const openApi = buildOpenApi(routes, OPENAPI_VERSION);
    handler = createAdminHandler({
      routes,
      tokens: env.ADMIN_TOKEN,
      logger,
      metrics: createAdminMetrics(registry),
      console: consoleHandler(env.ADMIN_CONSOLE_DIR ?? defaultConsoleDir()),
      ops: { registry, readiness: { redis: async () => void (await redis.ping()), accepting: gate.check } },
    });
  } catch (err) {
    await release();
    throw err;
  }
  return serveHttp({
    name: 'admin',
    handler,
    port: env.ADMIN_PORT,
    host: env.ADMIN_HOST,
    logger,
    stopAccepting: gate.begin,
    release,
    releasing: 'close queue and Redis',
  });
}

/** The console package's build output, wherever the workspace (or the image) put the package. */
function defaultConsoleDir(): string {
  return path.join(path.dirname(require.resolve('@eventrelay/console/package.json')), 'dist');
}
