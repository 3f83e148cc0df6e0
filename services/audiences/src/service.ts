/**
 * Builds and starts the audiences service from a validated env: profiles, computed audiences and
 * regulations (docs/audiences.md). Used by index.ts and by tests; it never reads process.env and
 * never exits the process.
 */
import { audienceFingerprint, consumedShards, describeEnv, keyspace, queueCatalog, type ConfigSnapshot } from '@eventrelay/config';
import {
  createRedis,
  openQueue,
  openShardedQueue,
  openWorker,
  putJobBack,
  runWorkerProcess,
  type Logger,
  type Registry,
  type RunningWorkerProcess,
} from '@eventrelay/runtime';
import {
  AttemptLog,
  ConfigStore,
  DeletionReceipts,
  ErasureTombstones,
  RegulationStore,
  SourceEvents,
  applyConfigFile,
  purgeUserDeadLetters,
  readConfigFile,
} from '@eventrelay/stores';
import { audiencesEnvSpec, type AudiencesEnv } from './env.js';
import { ConfigView } from './adapters/config-view.js';
import { DeliveryQueue } from './adapters/delivery-queue.js';
import { MembershipStore } from './adapters/membership-store.js';
import { ProfileStore } from './adapters/profile-store.js';
import { SuppressionWriter } from './adapters/suppression-writer.js';
import { MembershipSync } from './membership-sync.js';
import { createAudiencesMetrics } from './metrics.js';
import { createPassProcessor } from './jobs/audience.js';
import { createProfileProcessor } from './jobs/profile.js';
import { createRegulationProcessor } from './jobs/regulation.js';

export interface AudiencesDeps {
  readonly logger: Logger;
  readonly registry: Registry;
  /** Evaluation time (time windows) and the identify calls' timestamps; injected by tests. */
  readonly clock?: () => number;
}

export type RunningAudiences = RunningWorkerProcess & {
  /** Reloads the config now instead of within a second (and queues backfills); for tests. */
  refreshConfig(): Promise<void>;
};

/** Outbox entries older than this are taken as left by a crash between commit and queue. */
const STRANDED_AFTER_MS = 60_000;

export async function startAudiences(env: AudiencesEnv, deps: AudiencesDeps): Promise<RunningAudiences> {
  const { logger, registry } = deps;
  const clock = deps.clock ?? Date.now;
  logger.info({ env: describeEnv(audiencesEnvSpec, env) }, 'audiences.config');
  const configFile = await readConfigFile(env.EVENTRELAY_CONFIG, env.EVENTRELAY_CONFIG_MODE);

  const prefix = env.EVENTRELAY_PREFIX;
  const control = createRedis(env, 'control', 'audiences-control', registry);
  const connection = createRedis(env, 'worker', 'audiences-worker', registry);
  const queueError = (name: string) => (err: Error) => logger.warn({ err: err.message }, `${name}_queue.error`);
  const keys = keyspace(prefix, env.EVENTRELAY_SHARDS);
  const deliverQueues = openShardedQueue('deliver', connection, keys, queueError('deliver'));
  const audienceQueue = openQueue('audience', connection, prefix, queueError('audience'));
  const store = new ConfigStore(control, prefix, { keys });
  const metrics = createAudiencesMetrics(registry);
  const profiles = new ProfileStore(
    control,
    prefix,
    {
      maxTraitBytes: env.PROFILE_MAX_TRAIT_BYTES,
      maxEvents: env.PROFILE_MAX_EVENTS,
      daysKept: env.PROFILE_DAYS_KEPT,
      ttlMs: env.AUDIENCES_PROFILE_TTL_DAYS * 86_400_000,
      maxPerSource: env.AUDIENCES_MAX_PROFILES_PER_SOURCE,
    },
    clock,
  );
  const membership = new MembershipStore(control, prefix);
  const deliveries = new DeliveryQueue(
    (destinationId) => deliverQueues[keys.deliverShardOf(destinationId)]!,
    env.AUDIENCES_DEDUPE_WINDOW_S * 1000,
  );
  const tombstones = new ErasureTombstones(control, keys);

  // A new or redefined audience gets a backfill job; its id names the definition, so every
  // process that notices the change queues the same job once.
  const queueBackfills = async (snapshot: ConfigSnapshot) => {
    for (const audience of snapshot.audiences.values()) {
      const fingerprint = audienceFingerprint(audience);
      const state = await membership.passState(audience.id);
      if (state.fingerprint === fingerprint && state.status === 'ready') continue;
      await audienceQueue.add(
        queueCatalog.audience.jobName,
        { kind: 'backfill', audienceId: audience.id, fingerprint },
        { jobId: `backfill-${audience.id}-${fingerprint}` },
      );
    }
  };
  const config = new ConfigView(store, queueBackfills, 1000, (err) => logger.warn({ err: String(err) }, 'config.refresh_failed'));
  const sync = new MembershipSync({ membership, profiles, deliveries, config, clock });

  const workerOptions = (name: string, concurrency: number) => ({
    concurrency,
    lockDurationMs: 30_000,
    stalledIntervalMs: 15_000,
    maxStalledCount: 5,
    onError: (err: Error) => logger.warn({ err: err.message }, `${name}_worker.error`),
  });
  // One profile worker per route shard consumed: the router feeds each shard's profile queue.
  const profileProcessor = createProfileProcessor({
    profiles,
    sync,
    audiencesOf: (sourceId) => config.audiencesOf(sourceId),
    maxProfilesPerSource: env.AUDIENCES_MAX_PROFILES_PER_SOURCE,
    metrics,
    logger,
    clock,
  });
  const profileWorkers = consumedShards(env).map((shard) =>
    openWorker('profile', connection, keys.prefixes[shard]!, profileProcessor, workerOptions('profile', env.AUDIENCES_CONCURRENCY)),
  );
  const passWorker = openWorker(
    'audience',
    connection,
    prefix,
    createPassProcessor({
      profiles,
      membership,
      sync,
      config,
      tombstones,
      pageSize: env.AUDIENCES_PAGE_SIZE,
      strandedAfterMs: STRANDED_AFTER_MS,
      metrics,
      logger,
      clock,
      stopping: () => stopping,
      putBack: (job, at, token) => putJobBack(connection, job, at, token),
    }),
    // A pass can run for minutes on millions of profiles: its lock is renewed meanwhile.
    workerOptions('audience', 2),
  );
  const regulationWorker = openWorker(
    'regulation',
    connection,
    prefix,
    createRegulationProcessor({
      regulations: new RegulationStore(control, prefix),
      suppressions: new SuppressionWriter(control, keys),
      deliveries,
      profiles,
      membership,
      // Only erases; the caps are kept by ingest, which writes the rings.
      events: new SourceEvents(control, keys, { max: Number.MAX_SAFE_INTEGER }),
      tombstones,
      receipts: new DeletionReceipts(control, prefix),
      purgeDeadLetters: (destinationId, sourceIds, userIds) => purgeUserDeadLetters(control, keys, destinationId, sourceIds, userIds),
      // Only erases; the cap is kept by webhook-delivery, which writes the log.
      attempts: new AttemptLog(control, keys, { maxPerDestination: Number.MAX_SAFE_INTEGER }),
      snapshot: () => store.snapshot(),
      pageSize: 500,
      metrics,
      logger,
      clock,
    }),
    workerOptions('regulation', 1),
  );
  for (const profileWorker of profileWorkers)
    profileWorker.on('failed', (job, err) =>
      logger.error({ jobId: job?.id, sourceId: job?.data.sourceId, attempt: job?.attemptsMade, err: err.message }, 'profile.failed'),
    );
  passWorker.on('failed', (job, err) =>
    logger.error({ jobId: job?.id, kind: job?.data.kind, attempt: job?.attemptsMade, err: err.message }, 'audience.pass_failed'),
  );
  regulationWorker.on('failed', (job, err) =>
    logger.error({ regulationId: job?.data.id, attempt: job?.attemptsMade, err: err.message }, 'regulation.failed'),
  );

  let stopping = false;
  const running = await runWorkerProcess({
    onStopping: () => void (stopping = true),
    name: 'audiences',
    workers: [...profileWorkers, passWorker, regulationWorker],
    connections: [control, connection],
    control,
    opsPort: env.AUDIENCES_METRICS_PORT,
    registry,
    keys,
    logger,
    async prepare() {
      await applyConfigFile(store, configFile, logger);
      await config.start();
      // One scheduler for all replicas: upserting the same id keeps one schedule.
      await audienceQueue.upsertJobScheduler(
        'periodic-sync',
        { every: env.AUDIENCES_SYNC_INTERVAL_MS },
        { name: queueCatalog.audience.jobName, data: { kind: 'periodic' } },
      );
    },
    async release() {
      config.stop();
      await Promise.all([...deliverQueues, audienceQueue].map((q) => q.close()));
    },
    finishing: 'finish active profile jobs, passes and regulations (a pass stops after its page and resumes elsewhere)',
  });
  return { ...running, refreshConfig: () => config.refresh() };
}
