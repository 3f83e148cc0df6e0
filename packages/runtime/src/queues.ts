/** Queues are opened only through the catalog, so their payload type follows the queue's name. */
import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { queueCatalog, type PayloadOf, type QueueKey } from '@eventrelay/config';

export function openQueue<K extends QueueKey>(key: K, connection: Redis, prefix: string, onError: (err: Error) => void): Queue<PayloadOf<K>> {
  const def = queueCatalog[key];
  const queue = new Queue<PayloadOf<K>>(def.name, { connection, prefix, defaultJobOptions: def.defaultJobOptions });
  queue.on('error', onError);
  return queue;
}
