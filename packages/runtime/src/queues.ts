/** Queues are opened only through the catalog, so their payload type follows the queue's name. */
import { Job, Queue } from 'bullmq';
import { Cluster, type ChainableCommander, type Redis } from 'ioredis';
import type { RedisClient } from './redis.js';
import { keySlot, queueCatalog, type Keyspace, type PayloadOf, type QueueKey } from '@eventrelay/config';

export function openQueue<K extends QueueKey>(
  key: K,
  connection: RedisClient,
  prefix: string,
  onError: (err: Error) => void,
): Queue<PayloadOf<K>> {
  const def = queueCatalog[key];
  const queue = new Queue<PayloadOf<K>>(def.name, { connection, prefix, defaultJobOptions: def.defaultJobOptions });
  queue.on('error', onError);
  return queue;
}

/** One queue per shard of the keyspace (docs/deployment.md, "Redis Cluster"), by shard index. */
export function openShardedQueue<K extends QueueKey>(
  key: K,
  connection: RedisClient,
  keys: Keyspace,
  onError: (err: Error) => void,
): readonly Queue<PayloadOf<K>>[] {
  return keys.prefixes.map((prefix) => openQueue(key, connection, prefix, onError));
}

/**
 * Makes MULTIs on the queue's connection on which `queueJobAdd` can put job adds beside other
 * commands (a batch's writes, a release): everything in one is applied together, or nothing is.
 * Our own scripts defined on that connection are callable on them too. Resolves once BullMQ has
 * set the connection up; the function it gives works synchronously (and, when Redis is away,
 * its MULTIs fail as the connection's commands do).
 */
export async function transactionsOn(queue: Queue): Promise<() => ChainableCommander> {
  const client = await clientOf(queue);
  return () => client.multi();
}

/** Like transactionsOn, with pipelines: job adds that need no MULTI around them. */
export async function pipelinesOn(queue: Queue): Promise<() => ChainableCommander> {
  const client = await clientOf(queue);
  return () => client.pipeline();
}

/** The connection BullMQ set up for the queue: its MULTIs and pipelines carry what job adds need. */
async function clientOf(queue: Queue): Promise<RedisClient> {
  return (await queue.getBackend().client) as unknown as RedisClient;
}

/**
 * Redis WAIT on the queue's connection, the one transactionsOn's MULTIs write on: resolves with how
 * many replicas hold everything that connection wrote so far (at most `timeoutMs` later). WAIT
 * holds the connection until it answers, so durable mode gives the queue a connection of its own.
 */
export async function replicaWaitOn(
  queue: Queue,
): Promise<(replicas: number, timeoutMs: number, written: Promise<unknown>) => Promise<number>> {
  const client = await clientOf(queue);
  if (!(client instanceof Cluster)) return (replicas, timeoutMs) => client.wait(replicas, timeoutMs);
  // On a cluster the MULTI may wait for the slot map before it is sent, so the WAIT follows its
  // answer (one round trip later), on the connection to the node that serves the queue's slot:
  // the connection the MULTI went out on.
  const slot = keySlot(`${queue.opts.prefix}:${queue.name}`);
  return async (replicas, timeoutMs, written) => {
    await written;
    return primaryOfSlot(client, slot).wait(replicas, timeoutMs);
  };
}

/** The cluster client's connection to the primary that serves `slot` now, as its slot map says. */
function primaryOfSlot(cluster: Cluster, slot: number): Redis {
  const key = cluster.slots[slot]?.[0];
  const node = key === undefined ? undefined : cluster.nodes('master').find((n) => `${n.options.host}:${n.options.port}` === key);
  if (!node) throw new Error(`redis: no primary is known for slot ${slot}`);
  return node;
}

/**
 * The text of `INFO <section>` from every primary: the one Redis, or each primary of a cluster
 * (the guards judge the fullest or the least replicated).
 */
export async function infoOfPrimaries(client: RedisClient, section: string): Promise<string[]> {
  if (!(client instanceof Cluster)) return [await client.info(section)];
  return Promise.all(client.nodes('master').map((n) => n.info(section)));
}

/**
 * Queues on `tx` (from transactionsOn for this queue) the add of one job with the catalog's
 * options and the given id. BullMQ enqueues the command synchronously; the add happens at EXEC.
 * As with Queue.add, a job whose id is still in the queue is not added again.
 */
export function queueJobAdd<K extends QueueKey>(
  tx: ChainableCommander,
  queue: Queue<PayloadOf<K>>,
  data: PayloadOf<K>,
  jobId: string,
): void {
  const job = new Job(queue, jobNameOf(queue.name), data, { ...queue.defaultJobOptions, jobId }, jobId);
  // The promise settles with the transaction; its outcome is read from EXEC's answers.
  job.addJob(tx as never).catch(() => undefined);
}

function jobNameOf(queueName: string): string {
  const def = Object.values(queueCatalog).find((d) => d.name === queueName);
  if (!def) throw new Error(`${queueName} is not a queue of the catalog`);
  return def.jobName;
}
