/**
 * The pipeline in the test process: ingest and audiences (optional), router and webhook-delivery started through
 * their real start functions against real Redis under a unique prefix, with one source and the
 * destinations the test gives. Receivers on 127.0.0.1 are allowed through the SSRF guard unless
 * the test sets WEBHOOK_ALLOWED_NETWORKS itself.
 */
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import {
  queueCatalog,
  type DeadLetter,
  type DeliverJob,
  type DeliveryAttempt,
  type Destination,
  type NormalizedCall,
  type RouteJob,
  type Source,
} from '@eventrelay/config';
import { createMetricsRegistry, execAll, queueJobAdd, transactionsOn, type Registry } from '@eventrelay/runtime';
import { AttemptLog, CallBatches, ConfigStore, DeadLetterStore } from '@eventrelay/stores';
import { loadEnv as loadIngestEnv } from '../../services/ingest/src/env';
import { startIngest, type RunningIngest } from '../../services/ingest/src/service';
import { loadEnv as loadRouterEnv } from '../../services/router/src/env';
import { startRouter, type RunningRouter } from '../../services/router/src/service';
import { loadEnv as loadDeliveryEnv } from '../../services/webhook-delivery/src/env';
import { startDelivery, type RunningDelivery } from '../../services/webhook-delivery/src/service';
import { loadEnv as loadAudiencesEnv } from '../../services/audiences/src/env';
import { startAudiences, type RunningAudiences } from '../../services/audiences/src/service';
import type { Resolver } from '../../services/webhook-delivery/src/adapters/address-guard';
import { SHARED_REDIS_URL, deletePrefix, uniquePrefix } from '@eventrelay/testkit';

export interface PipelineOptions {
  label?: string;
  /** A Redis of the test's own (startPrivateRedis); the shared one by default. */
  redisUrl?: string;
  destinations?: Destination[];
  /** Start ingest too (default false: tests then put route jobs on the queue themselves). */
  ingest?: boolean;
  /** Start webhook-delivery (default true). */
  delivery?: boolean;
  /** Start the audiences service (default false). */
  audiences?: boolean;
  audiencesEnv?: Record<string, string>;
  /** The audiences service's clock only (time windows), when the rest should keep real time. */
  audiencesClock?: () => number;
  routerEnv?: Record<string, string>;
  deliveryEnv?: Record<string, string>;
  ingestEnv?: Record<string, string>;
  clock?: () => number;
  random?: () => number;
  resolver?: Resolver;
}

export interface TestPipeline {
  readonly prefix: string;
  readonly redisUrl: string;
  readonly source: Source;
  readonly writeKey: string;
  /** Base URL of the intake when started with `ingest: true`. */
  readonly ingestUrl: string;
  readonly store: ConfigStore;
  readonly admin: Redis;
  readonly ingest: RunningIngest | undefined;
  readonly router: RunningRouter;
  readonly delivery: RunningDelivery | undefined;
  readonly audiences: RunningAudiences | undefined;
  readonly deliveryRegistry: Registry;
  readonly routeQueue: Queue<RouteJob>;
  readonly deliverQueue: Queue<DeliverJob>;
  /** Replaces the destinations and makes router and delivery see them at once. */
  setDestinations(destinations: Destination[]): Promise<void>;
  /**
   * Puts one route job on the queue as ingest does: the calls stored in a call batch of that id
   * (`batchId`, a fresh one by default) and claimed for dedupe, with the job, in one MULTI.
   */
  route(calls: NormalizedCall[], batchId?: string, sourceId?: string): Promise<void>;
  readonly batches: CallBatches;
  /** The attempt log of a destination, newest first (buffered entries flushed first). */
  attempts(destinationId: string): Promise<DeliveryAttempt[]>;
  deadLetters(destinationId: string): Promise<DeadLetter[]>;
  close(): Promise<void>;
}

export function webhookDestination(
  id: string,
  urls: (string | { url: string; headers?: Record<string, string> })[],
  extra: Partial<Destination> & { sharedSecret?: string } = {},
): Destination {
  const { sharedSecret, ...rest } = extra;
  return {
    id,
    name: 'Webhooks',
    enabled: true,
    sourceIds: ['src-test'],
    settings: { webhooks: urls.map((u) => (typeof u === 'string' ? { url: u } : u)), ...(sharedSecret ? { sharedSecret } : {}) },
    ...rest,
  };
}

const silent = pino({ level: 'silent' });

export async function startTestPipeline(options: PipelineOptions = {}): Promise<TestPipeline> {
  const redisUrl = options.redisUrl ?? SHARED_REDIS_URL;
  const prefix = uniquePrefix(options.label ?? 'pipeline');
  const source: Source = { id: 'src-test', name: 'Test source', type: 'server', writeKey: `wk_${prefix.replace(/\W/g, '')}` };
  const admin = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
  const store = new ConfigStore(admin, prefix);
  let destinations = options.destinations ?? [];
  await store.apply({ sources: [source], destinations, audiences: [] });
  const common = { REDIS_URL: redisUrl, EVENTRELAY_PREFIX: prefix, LOG_LEVEL: 'silent' };
  const deliveryRegistry = createMetricsRegistry('webhook-delivery');
  const started: { close(): Promise<void> }[] = [];
  try {
    const router = await startRouter(loadRouterEnv({ ...common, ROUTER_METRICS_PORT: '0', ...options.routerEnv }), {
      logger: silent,
      registry: createMetricsRegistry('router'),
      ...(options.clock ? { clock: options.clock } : {}),
    });
    started.push(router);
    const delivery =
      options.delivery === false
        ? undefined
        : await startDelivery(
            loadDeliveryEnv({
              ...common,
              DELIVERY_METRICS_PORT: '0',
              WEBHOOK_ALLOWED_NETWORKS: '127.0.0.0/8,::1/128',
              ...options.deliveryEnv,
            }),
            {
              logger: silent,
              registry: deliveryRegistry,
              ...(options.clock ? { clock: options.clock } : {}),
              ...(options.random ? { random: options.random } : {}),
              ...(options.resolver ? { resolver: options.resolver } : {}),
            },
          );
    if (delivery) started.push(delivery);
    const ingest = options.ingest
      ? await startIngest(loadIngestEnv({ ...common, INGEST_PORT: '0', INGEST_HOST: '127.0.0.1', ...options.ingestEnv }), {
          logger: silent,
          registry: createMetricsRegistry('ingest'),
        })
      : undefined;
    if (ingest) started.push(ingest);
    const audiences = options.audiences
      ? await startAudiences(loadAudiencesEnv({ ...common, AUDIENCES_METRICS_PORT: '0', ...options.audiencesEnv }), {
          logger: silent,
          registry: createMetricsRegistry('audiences'),
          ...((options.audiencesClock ?? options.clock) ? { clock: options.audiencesClock ?? options.clock } : {}),
        })
      : undefined;
    if (audiences) started.push(audiences);
    const routeQueue = new Queue<RouteJob>(queueCatalog.route.name, { connection: admin, prefix });
    const batches = new CallBatches(admin, prefix);
    const transaction = await transactionsOn(routeQueue);
    const deliverQueue = new Queue<DeliverJob>(queueCatalog.deliver.name, { connection: admin, prefix });
    const attemptLog = new AttemptLog(admin, prefix, { maxPerDestination: 1_000_000 });
    const deadLetters = new DeadLetterStore(admin, prefix, { maxPerDestination: 1_000_000 });
    let batchSeq = 0;
    return {
      prefix,
      redisUrl,
      source,
      writeKey: source.writeKey,
      ingestUrl: ingest ? `http://127.0.0.1:${ingest.port}` : '',
      store,
      admin,
      ingest,
      router,
      delivery,
      audiences,
      deliveryRegistry,
      routeQueue,
      deliverQueue,
      batches,
      async setDestinations(next) {
        const removed = destinations.filter((d) => !next.some((n) => n.id === d.id));
        if (removed.length > 0) await admin.hdel(`${prefix}:cfg:destinations`, ...removed.map((d) => d.id));
        destinations = next;
        await store.apply({ sources: [source], destinations: next, audiences: [] });
        await router.refreshConfig();
        await delivery?.refreshConfig();
        await audiences?.refreshConfig();
      },
      async route(calls, batchId, sourceId = source.id) {
        const id = batchId ?? `b-${++batchSeq}-${Date.now().toString(36)}`;
        const tx = transaction();
        batches.queueIntake(tx, id, [{ sourceId, ratePerSecond: 1_000_000_000, calls, callsJson: JSON.stringify(calls) }], {
          nowMs: Date.now(),
          dedupeTtlS: 3600,
        });
        queueJobAdd(tx, routeQueue, { batchId: id }, id);
        await execAll(tx);
      },
      async attempts(destinationId) {
        await delivery?.flushAttemptLog();
        return attemptLog.recent(destinationId, 1_000_000);
      },
      deadLetters: (destinationId) => deadLetters.list(destinationId, 1_000_000),
      async close() {
        for (const s of started.reverse()) await s.close();
        await routeQueue.close();
        await deliverQueue.close();
        await deletePrefix(redisUrl, prefix).catch(() => undefined);
        admin.disconnect();
      },
    };
  } catch (err) {
    for (const s of started.reverse()) await s.close().catch(() => undefined);
    await deletePrefix(redisUrl, prefix).catch(() => undefined);
    admin.disconnect();
    throw err;
  }
}

/** A normalized call as ingest stores it, for tests that put route jobs on the queue directly. */
export function trackCall(messageId: string, extra: Record<string, unknown> = {}): NormalizedCall {
  const now = new Date().toISOString();
  return { type: 'track', messageId, userId: 'user-1', event: 'Tested', properties: { n: 1 }, timestamp: now, receivedAt: now, ...extra };
}
