/**
 * Builds and starts the admin API from a validated env. Used by index.ts and by tests; it never
 * reads process.env and never exits the process.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { describeEnv } from '@eventrelay/config';
import {
  AttemptLog,
  AuditLog,
  ConfigStore,
  DeadLetterStore,
  SourceEvents,
  applyConfigFile,
  closeRedis,
  closeServer,
  createRedis,
  listen,
  openQueue,
  readConfigFile,
  shutdownGate,
  whenReady,
  type Logger,
  type Registry,
  type ShutdownStep,
} from '@eventrelay/runtime';
import { adminEnvSpec, type AdminEnv } from './env.js';
import { createAdminMetrics } from './metrics.js';
import { Replayer } from './adapters/replayer.js';
import { createAdminHandler } from './http/app.js';
import { OPENAPI_VERSION, buildOpenApi } from './http/openapi.js';
import { adminRoutes } from './http/routes.js';

export interface AdminDeps {
  readonly logger: Logger;
  readonly registry: Registry;
  readonly clock?: () => number;
}

export interface RunningAdmin {
  readonly server: Server;
  readonly port: number;
  readonly shutdownSteps: ShutdownStep[];
  close(): Promise<void>;
}

const REDIS_STARTUP_TIMEOUT_MS = 30_000;

export async function startAdmin(env: AdminEnv, deps: AdminDeps): Promise<RunningAdmin> {
  const { logger, registry } = deps;
  const clock = deps.clock ?? Date.now;
  logger.info({ env: describeEnv(adminEnvSpec, env), tokens: env.ADMIN_TOKEN.map((t) => t.id) }, 'admin.config');
  // Checked before anything connects: a bad file must leave Redis untouched.
  const configFile = await readConfigFile(env.EVENTRELAY_CONFIG);

  const redis = createRedis(env.REDIS_URL, 'control', 'admin');
  const prefix = env.EVENTRELAY_PREFIX;
  const queue = openQueue('deliver', redis, prefix, (err) => logger.warn({ err: err.message }, 'deliver_queue.error'));
  const gate = shutdownGate();
  const release = async () => {
    await queue.close();
    await closeRedis(redis);
  };

  let server: Server;
  try {
    if (redis.status !== 'ready') logger.info('redis.waiting');
    await whenReady(redis, REDIS_STARTUP_TIMEOUT_MS);
    const store = new ConfigStore(redis, prefix, { auditMax: env.ADMIN_AUDIT_MAX });
    await applyConfigFile(store, configFile, logger);
    // The logs' caps are kept by their writers (webhook-delivery, ingest); this process only reads
    // them, and removes dead letters on replay.
    const deadLetters = new DeadLetterStore(redis, prefix, Number.MAX_SAFE_INTEGER);
    const routes = adminRoutes({
      store,
      attempts: new AttemptLog(redis, prefix, { maxPerDestination: Number.MAX_SAFE_INTEGER }),
      deadLetters,
      replayer: new Replayer(deadLetters, queue, clock),
      audit: new AuditLog(redis, prefix, env.ADMIN_AUDIT_MAX),
      events: new SourceEvents(redis, prefix, { max: Number.MAX_SAFE_INTEGER }),
      clock,
      newId: (kind) => `${kind}_${randomBytes(8).toString('hex')}`,
      newWriteKey: () => `wk_${randomBytes(32).toString('base64url')}`,
      openApi: () => openApi,
    });
    const openApi = buildOpenApi(routes, OPENAPI_VERSION);
    const handler = createAdminHandler({
      routes,
      tokens: env.ADMIN_TOKEN,
      logger,
      metrics: createAdminMetrics(registry),
      ops: { registry, readiness: { redis: async () => void (await redis.ping()), accepting: gate.check } },
    });
    server = createServer(handler);
    server.keepAliveTimeout = 65_000;
    server.requestTimeout = 30_000;
    await listen(server, env.ADMIN_PORT, env.ADMIN_HOST);
  } catch (err) {
    await release();
    throw err;
  }
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : env.ADMIN_PORT;
  logger.info({ port }, 'admin.listening');

  const shutdownSteps: ShutdownStep[] = [
    {
      name: 'stop accepting, finish in-flight requests',
      run: () => {
        gate.begin();
        return closeServer(server);
      },
    },
    { name: 'close queue and Redis', run: release },
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
