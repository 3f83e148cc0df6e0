/**
 * Routing across shards (EVENTRELAY_SHARDS > 1) on the shared Redis: the batch is marked routed,
 * its holds set and its plan kept, then the delivery jobs are added on their destinations' shards.
 * A router that dies between the two steps is retried into the plan the first run kept, adding
 * each job once.
 */
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import pino from 'pino';
import {
  batchDeliveryJobId,
  keyspace,
  queueCatalog,
  type DeliverJob,
  type Destination,
  type Keyspace,
  type RouteJob,
} from '@eventrelay/config';
import { createMetricsRegistry, execAll, pipelinesOn, queueJobAdd, transactionsOn } from '@eventrelay/runtime';
import { CallBatches } from '@eventrelay/stores';
import { SHARED_REDIS_URL, deletePrefix, uniquePrefix } from '@eventrelay/testkit';
import { createRouteProcessor } from '../src/jobs/route';
import { createRouterMetrics } from '../src/metrics';
import { trackCall, webhookDestination } from '../../../test/support/pipeline';

const SOURCE = 'src-test';

let redis: Redis;
let keys: Keyspace;
let deliverQueues: Queue<DeliverJob>[];
let routeQueue: Queue<RouteJob>;
/** MULTIs on which BullMQ can add jobs (what the router's own come from). */
let transaction: () => ReturnType<Redis['multi']>;
let pipeline: () => ReturnType<Redis['pipeline']>;

/** Destination ids on three different shards than one another. */
function destinationsOnDistinctShards(): Destination[] {
  const found = new Map<number, string>();
  for (let i = 0; found.size < 3; i++) {
    const shard = keys.deliverShardOf(`dst-${i}`);
    if (!found.has(shard)) found.set(shard, `dst-${i}`);
  }
  return [...found.values()].map((id) => webhookDestination(id, [`https://${id}.example/hook`]));
}

beforeEach(async () => {
  redis = new Redis(SHARED_REDIS_URL, { maxRetriesPerRequest: 1 });
  keys = keyspace(uniquePrefix('sharded-route'), 4);
  deliverQueues = keys.prefixes.map((prefix) => new Queue<DeliverJob>(queueCatalog.deliver.name, { connection: redis, prefix }));
  routeQueue = new Queue<RouteJob>(queueCatalog.route.name, { connection: redis, prefix: keys.sourcePrefix(SOURCE) });
  transaction = await transactionsOn(routeQueue);
  pipeline = await pipelinesOn(routeQueue);
});

afterEach(async () => {
  await Promise.all([...deliverQueues, routeQueue].map((q) => q.close()));
  for (const prefix of [keys.home, ...keys.prefixes]) await deletePrefix(redis, prefix);
  redis.disconnect();
});

/** Stores a batch of `count` calls of SOURCE on its route shard, as the intake does. */
async function storeBatch(batches: CallBatches, batchId: string, count: number): Promise<void> {
  const calls = Array.from({ length: count }, (_, i) => trackCall(`m-${i}`));
  const tx = transaction();
  batches.queueIntake(tx, batchId, [{ sourceId: SOURCE, ratePerSecond: 1000, calls, callsJson: JSON.stringify(calls) }], {
    nowMs: Date.now(),
    dedupeTtlS: 0,
  });
  queueJobAdd(tx, routeQueue, { batchId }, batchId);
  await execAll(tx);
}

function processor(destinations: readonly Destination[], adds: () => ReturnType<Redis['pipeline']> = () => pipeline()) {
  return createRouteProcessor({
    destinations: { forSource: () => destinations, audienceSources: () => new Set<string>() },
    suppressions: { count: () => Promise.resolve(0), lookup: () => Promise.resolve(new Map()) },
    batches: new CallBatches(redis, keys.sourcePrefix(SOURCE)),
    transaction: () => transaction(),
    pipeline: adds,
    deliverQueueOf: (destinationId) => deliverQueues[keys.deliverShardOf(destinationId)]!,
    metrics: createRouterMetrics(createMetricsRegistry('router')),
    logger: pino({ level: 'silent' }),
    clock: Date.now,
  });
}

const routeJob = (batchId: string) => ({ data: { batchId }, attemptsMade: 0 }) as never;

/** Every delivery job on every shard, as "shard/jobId". */
async function jobsByShard(): Promise<string[]> {
  const found: string[] = [];
  for (const [shard, queue] of deliverQueues.entries())
    for (const job of await queue.getJobs(['wait', 'delayed', 'active'])) found.push(`${shard}/${job.id}`);
  return found.sort();
}

it('adds each destination’s job on its own shard and marks the batch routed, holding it for each', async () => {
  const batches = new CallBatches(redis, keys.sourcePrefix(SOURCE));
  const destinations = destinationsOnDistinctShards();
  await storeBatch(batches, 'b1', 3);
  await processor(destinations)(routeJob('b1'));

  expect(await jobsByShard()).toEqual(destinations.map((d) => `${keys.deliverShardOf(d.id)}/${batchDeliveryJobId(d.id, 'b1')}`).sort());
  const batch = await redis.hgetall(batches.key('b1'));
  expect(batch['r']).toBeUndefined();
  expect(JSON.parse(batch['p'] ?? '[]')).toHaveLength(3);
  expect(batch['h']).toBe('3');
  for (const d of destinations)
    expect(await batches.readCalls(d.id, { id: 'b1', parts: [{ sourceId: SOURCE, part: 0, indexes: [0, 1, 2] }] })).toHaveLength(3);
  // Routed: a retry finds no route entries, and the kept plan's jobs are all still queued.
  await processor(destinations)(routeJob('b1'));
  expect(await jobsByShard()).toHaveLength(3);
});

it('carries out the kept plan when the router died between the steps, even if the config changed meanwhile, adding each job once', async () => {
  const batches = new CallBatches(redis, keys.sourcePrefix(SOURCE));
  const destinations = destinationsOnDistinctShards();
  await storeBatch(batches, 'b2', 2);
  // The first run dies after the batch was marked routed and held, before any job was added.
  const dying = () => {
    throw new Error('killed');
  };
  await expect(processor(destinations, dying)(routeJob('b2'))).rejects.toThrow('killed');
  expect(await redis.hexists(batches.key('b2'), 'r')).toBe(0);
  expect(await jobsByShard()).toEqual([]);
  // The retry sees a config with one destination fewer: it still carries out the first run's plan.
  await processor(destinations.slice(1))(routeJob('b2'));
  expect(await jobsByShard()).toEqual(destinations.map((d) => `${keys.deliverShardOf(d.id)}/${batchDeliveryJobId(d.id, 'b2')}`).sort());
  // One destination's first round ran meanwhile: its job completed (removed) and its hold ended.
  const [first] = destinations;
  const firstQueue = deliverQueues[keys.deliverShardOf(first!.id)]!;
  await firstQueue.remove(batchDeliveryJobId(first!.id, 'b2'));
  const release = redis.multi();
  batches.queueRelease(release, 'b2', first!.id);
  await execAll(release);

  // Run again: the finished destination's job is added again, the others' are still queued.
  await processor(destinations)(routeJob('b2'));
  expect(await jobsByShard()).toEqual(destinations.map((d) => `${keys.deliverShardOf(d.id)}/${batchDeliveryJobId(d.id, 'b2')}`).sort());
  // The job added again for the destination that finished finds its hold gone and does nothing.
  const ref = { id: 'b2', parts: [{ sourceId: SOURCE, part: 0, indexes: [0, 1] }] };
  expect(await batches.readCalls(first!.id, ref)).toBeUndefined();
  for (const d of destinations.slice(1)) expect(await batches.readCalls(d.id, ref)).toHaveLength(2);
  expect(await redis.hmget(batches.key('b2'), 'r', 'h')).toEqual([null, '2']);
});
