/**
 * Builds and starts webhook-delivery from a validated env. Used by index.ts and by tests that run
 * the pipeline in one process; it never reads process.env and never exits the process.
 */
import { randomInt } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { rootCertificates } from 'node:tls';
import { ConfigError, consumedShards, describeEnv, keyspace } from '@eventrelay/config';
import {
  createRedis,
  openWorker,
  putJobBack,
  readJobData,
  runWorkerProcess,
  type Logger,
  type Registry,
  type ShutdownStep,
} from '@eventrelay/runtime';
import {
  AttemptLog,
  AuditLog,
  CallBatches,
  ConfigStore,
  DeadLetterStore,
  DeletionReceipts,
  ReplayProgressStore,
  DestinationDirectory,
  ErasureTombstones,
  RetryBacklog,
  StatsCounters,
  applyConfigFile,
  readConfigFile,
} from '@eventrelay/stores';
import { deliveryEnvSpec, type DeliveryEnv } from './env.js';
import { createDeliveryMetrics } from './metrics.js';
import { keepsAnswer } from './domain/attempt-detail.js';
import { parseNetworkList } from './domain/networks.js';
import type { RetryPolicy } from './domain/schedule.js';
import { createSender } from './adapters/http-sender.js';
import { DestinationEpisodes } from './adapters/destination-episodes.js';
import { RateReservations } from './adapters/rate-reservations.js';
import { createDestinationSwitches } from './adapters/destination-switches.js';
import { NO_NOTIFIER, createOperatorWebhook } from './adapters/operator-webhook.js';
import { createOperatorEvents } from './jobs/operator-events.js';
import type { Resolver } from './adapters/address-guard.js';
import { DestinationGate } from './destination-gate.js';
import { createDeliverProcessor } from './jobs/deliver.js';
import { createFailedJobHandler } from './jobs/deliver-failed.js';

export interface DeliveryDeps {
  readonly logger: Logger;
  readonly registry: Registry;
  readonly clock?: () => number;
  /** Uniform in [0, 1); tests pass a fixed one to make backoff exact. */
  readonly random?: () => number;
  /** Hostname → addresses; tests map made-up names onto 127.0.0.1. */
  readonly resolver?: Resolver;
}

export interface RunningDelivery {
  readonly port: number;
  /** Reloads destinations now instead of within a second; for tests. */
  refreshConfig(): Promise<void>;
  /** Writes buffered attempt-log entries now; for tests. */
  flushAttemptLog(): Promise<void>;
  /** Writes the counted stats now; for tests. */
  flushStats(): Promise<void>;
  readonly shutdownSteps: ShutdownStep[];
  close(): Promise<void>;
}

const uniform = () => randomInt(0, 2 ** 32) / 2 ** 32;

export async function startDelivery(env: DeliveryEnv, deps: DeliveryDeps): Promise<RunningDelivery> {
  const { logger, registry } = deps;
  const clock = deps.clock ?? Date.now;
  const random = deps.random ?? uniform;
  logger.info({ env: describeEnv(deliveryEnvSpec, env) }, 'delivery.config');
  // Files are read before anything connects: a bad one must leave Redis untouched.
  const configFile = await readConfigFile(env.EVENTRELAY_CONFIG, env.EVENTRELAY_CONFIG_MODE);
  const ca = await trustedCas(env);

  const control = createRedis(env, 'control', 'delivery-control', registry);
  const connection = createRedis(env, 'worker', 'delivery-worker', registry);
  const keys = keyspace(env.EVENTRELAY_PREFIX, env.EVENTRELAY_SHARDS);
  const store = new ConfigStore(control, env.EVENTRELAY_PREFIX, { keys });
  const destinations = new DestinationDirectory(store, 1000, (err) => logger.warn({ err: String(err) }, 'config.refresh_failed'));
  const attemptLog = new AttemptLog(connection, keys, {
    maxPerDestination: env.DELIVERY_LOG_MAX_PER_DESTINATION,
    onError: (err) => logger.warn({ err: String(err) }, 'attempt_log.write_failed'),
  });
  const stats = new StatsCounters(connection, keys, {
    clock,
    onError: (err) => logger.warn({ err: String(err) }, 'stats.write_failed'),
  });
  const sender = createSender({
    timeoutMs: env.DELIVERY_TIMEOUT_MS,
    allowedNetworks: parseNetworkList(env.WEBHOOK_ALLOWED_NETWORKS.join(',')).networks,
    connectionsPerOrigin: env.DELIVERY_CONNECTIONS_PER_ORIGIN,
    ca,
    keepsAnswer: keepsAnswer(env.DELIVERY_LOG_DETAIL),
    ...(deps.resolver ? { resolver: deps.resolver } : {}),
  });
  const policy: RetryPolicy = {
    windowMs: env.RETRY_WINDOW_MS,
    baseDelayMs: env.DELIVERY_RETRY_BASE_MS,
    maxDelayMs: env.DELIVERY_RETRY_MAX_MS,
  };
  let stopping = false;
  const gate = new DestinationGate({
    maxInFlight: env.DELIVERY_MAX_IN_FLIGHT_PER_DESTINATION,
    slowMs: Math.min(1000, env.DELIVERY_TIMEOUT_MS),
    maxParkMs: env.DELIVERY_TIMEOUT_MS,
    clock,
    random,
  });
  // Changed in each job's commit (the worker connection's MULTI); read at scrape time on the control
  // connection, like the queue gauges.
  const retryBacklog = new RetryBacklog(connection, keys);
  const retryBacklogView = new RetryBacklog(control, keys);
  const deadLetterCaps = {
    maxPerDestination: env.DELIVERY_DEAD_LETTER_MAX_PER_DESTINATION,
    maxBytesPerDestination: env.DELIVERY_DEAD_LETTER_MAX_BYTES_PER_DESTINATION,
  };
  const deadLetterView = new DeadLetterStore(control, keys, deadLetterCaps);
  const notifier = env.NOTIFY_WEBHOOK_URL
    ? createOperatorWebhook({ url: env.NOTIFY_WEBHOOK_URL, secret: env.NOTIFY_WEBHOOK_SECRET, clock, logger })
    : NO_NOTIFIER;
  // The admin's ADMIN_AUDIT_MAX trims the audit log at its next write; this process never does.
  const events = createOperatorEvents({
    audit: new AuditLog(control, env.EVENTRELAY_PREFIX, Number.MAX_SAFE_INTEGER),
    notifier,
    logger,
    clock,
  });
  // A batch lives on the route shard of its sources (ingest writes each shard's flush apart).
  const batches = keys.prefixes.map((prefix) => new CallBatches(connection, prefix));
  const processor = createDeliverProcessor({
    destinations,
    gate,
    // Batches, dead letters and job data are written in one MULTI per job run: one connection.
    batchesOf: (batch) => batches[keys.routeShardOf(batch.parts[0]?.sourceId ?? '')]!,
    tombstones: new ErasureTombstones(connection, keys),
    receipts: new DeletionReceipts(connection, env.EVENTRELAY_PREFIX),
    replays: new ReplayProgressStore(connection, keys),
    deadLetters: new DeadLetterStore(connection, keys, deadLetterCaps),
    deadLetterMax: env.DELIVERY_DEAD_LETTER_MAX_PER_DESTINATION,
    deadLetterMaxBytes: env.DELIVERY_DEAD_LETTER_MAX_BYTES_PER_DESTINATION,
    events,
    episodes: new DestinationEpisodes(connection, keys),
    switches: createDestinationSwitches(store),
    maxInFlight: env.DELIVERY_MAX_IN_FLIGHT_PER_DESTINATION,
    rateSlots: new RateReservations(connection, keys),
    maxSlotWaitMs: Math.min(1000, env.DELIVERY_TIMEOUT_MS),
    timeoutMs: env.DELIVERY_TIMEOUT_MS,
    retryBacklog,
    retryMax: env.DELIVERY_RETRY_MAX_PER_DESTINATION,
    retryMaxBytes: env.DELIVERY_RETRY_MAX_BYTES_PER_DESTINATION,
    transaction: () => connection.multi(),
    stopping: () => stopping,
    sender,
    record: (a) => attemptLog.record(a),
    detail: env.DELIVERY_LOG_DETAIL,
    policy,
    clock,
    random,
    metrics: createDeliveryMetrics(registry, gate, {
      retryHeld: () => retryBacklogView.all(),
      retryHeldBytes: () => retryBacklogView.allBytes(),
      deadLetterBytes: () => deadLetterView.allBytes(),
    }),
    stats,
    logger,
    putBack: (job, at, token, data) => putJobBack(connection, job, at, token, data),
    // A round is kept while its job waits for Redis to take its commit: at most the jobs run at once.
    keptRoundsMax: env.DELIVERY_CONCURRENCY * consumedShards(env).length,
  });
  const onFailed = createFailedJobHandler({
    retryBacklog,
    transaction: () => connection.multi(),
    readData: (job) => readJobData(connection, job),
    logger,
  });
  // One worker per deliver shard consumed: a destination's jobs are all on the shard of its id.
  const workers = consumedShards(env).map((shard) => {
    const worker = openWorker('deliver', connection, keys.prefixes[shard]!, processor, {
      concurrency: env.DELIVERY_CONCURRENCY,
      // The lock is renewed while a job runs (however many of its calls wait for the destination's
      // places), so a short one only decides how soon the jobs of a process that died are handed
      // to another worker.
      lockDurationMs: Math.max(15_000, env.DELIVERY_TIMEOUT_MS * 3),
      stalledIntervalMs: 5_000,
      // A job whose worker keeps dying (say, a process killed over and over) is still retried;
      // BullMQ would otherwise fail it after the first stall.
      maxStalledCount: 20,
      onError: (err) => logger.warn({ err: err.message, shard }, 'deliver_worker.error'),
    });
    worker.on('failed', (job, err) => void onFailed(job, err));
    return worker;
  });
  const running = await runWorkerProcess({
    name: 'delivery',
    workers,
    connections: [control, connection],
    control,
    opsPort: env.DELIVERY_METRICS_PORT,
    registry,
    keys,
    logger,
    async prepare() {
      await applyConfigFile(store, configFile, logger);
      await destinations.start();
      attemptLog.start();
      stats.start();
    },
    async release() {
      destinations.stop();
      await Promise.all([attemptLog.close(), stats.close()]);
      await Promise.all([sender.close(), notifier.close()]);
    },
    // Requests already sent finish (at most DELIVERY_TIMEOUT_MS); a job's calls not sent yet stay
    // in it, unattempted, for another worker.
    onStopping: () => void (stopping = true),
    finishing: 'let active attempts finish (at most DELIVERY_TIMEOUT_MS), record them and hand back the calls not sent',
  });
  return {
    ...running,
    refreshConfig: () => destinations.refresh(),
    flushAttemptLog: () => attemptLog.flush(),
    flushStats: () => stats.flush(),
  };
}

/**
 * The CA list for https receivers: undefined keeps Node's own (which NODE_EXTRA_CA_CERTS extends).
 * With WEBHOOK_CA_FILE the list is given explicitly, and Node then ignores NODE_EXTRA_CA_CERTS, so
 * its file is added here too.
 */
async function trustedCas(env: DeliveryEnv): Promise<string[] | undefined> {
  if (!env.WEBHOOK_CA_FILE) return undefined;
  const extra = env.NODE_EXTRA_CA_CERTS ? await readPem('NODE_EXTRA_CA_CERTS', env.NODE_EXTRA_CA_CERTS) : [];
  return [...rootCertificates, ...(await readPem('WEBHOOK_CA_FILE', env.WEBHOOK_CA_FILE)), ...extra];
}

async function readPem(variable: string, path: string): Promise<string[]> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new ConfigError(
      'invalid_env',
      `${variable}: cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
      { cause: err },
    );
  }
  const pems = text.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  if (pems.length === 0) throw new ConfigError('invalid_env', `${variable}: ${path} holds no PEM certificate`);
  return pems;
}
