/**
 * Queue depth and age, read from Redis when Prometheus scrapes (docs/metrics.md, "Queues").
 *
 * Age is how long the job that has been ready the longest has waited to be taken. BullMQ keeps
 * when a job was added but forgets when a put-back job (a retry, a park, a hand-back) fell due:
 * it zeroes the delay when it promotes the job to waiting. So put-back jobs go through
 * putJobBack(), which notes the due time in the job's hash, and a job is ready since the latest of: added (plus
 * its initial delay), noted due time, last start (a job whose worker died is ready again about a
 * lock duration after that). Delayed jobs are promoted only when a worker fetches, so an overdue
 * delayed job counts too: with every worker busy or gone, that is where the backlog sits.
 */
import type { Job } from 'bullmq';
import type { ChainableCommander } from 'ioredis';
import type { RedisClient } from './redis.js';
import { queueCatalog, type Keyspace, type QueueKey } from '@eventrelay/config';
import { Gauge, type Registry } from 'prom-client';
import { execAll } from './redis.js';

/** Our field in a BullMQ job hash: epoch ms at which a put-back job falls due. */
const DUE_AT_FIELD = 'eventrelayDueAt';

/** BullMQ scores delayed jobs as due-time × 0x1000 plus a counter. */
const DELAYED_SCORE_FACTOR = 0x1000;

const STATES = ['waiting', 'active', 'delayed', 'failed'] as const;

export interface QueueSnapshot {
  readonly counts: Readonly<Record<(typeof STATES)[number], number>>;
  readonly oldestWaitingSeconds: number;
}

/**
 * Moves an active job back to delayed until `at`, noting the due time first (see above), and with
 * `data` its data too (what it carries back, in the same command). The job is locked to the
 * caller, so nothing else writes its hash meanwhile. `connection` is the one the job's worker
 * moves jobs with: the note alone is sent without waiting for its answer, in the same round trip
 * as the move, Redis running it first (one connection answers in order). Data is waited for: a
 * job moved without what it carries back would come back without it.
 */
export async function putJobBack(connection: RedisClient, job: Job, at: number, token: string | undefined, data?: unknown): Promise<void> {
  if (data === undefined) {
    await Promise.all([connection.hset(jobKey(job), DUE_AT_FIELD, String(at)), job.moveToDelayed(at, token)]);
    return;
  }
  await connection.hset(jobKey(job), { data: JSON.stringify(data), [DUE_AT_FIELD]: String(at) });
  await job.moveToDelayed(at, token);
}

/**
 * Queues on `tx` the rewrite of an active job's data, with the due time noted as putJobBack does:
 * the caller then moves it with job.moveToDelayed(at). Writing the data in the caller's MULTI
 * makes it land with the caller's other changes (webhook-delivery's commit). The job is locked to
 * the caller, so nothing else writes its hash meanwhile.
 */
export function queueJobRewrite(tx: ChainableCommander, job: Job, data: unknown, at: number): void {
  // The object form works on BullMQ's MULTIs too, which take HSET's fields only so.
  tx.hset(jobKey(job), { data: JSON.stringify(data), [DUE_AT_FIELD]: String(at) });
}

/**
 * Queues on `tx` the rewrite of the data of a job no worker holds (a failed one), leaving its due
 * time alone: it is not going anywhere.
 */
export function queueJobDataWrite(tx: ChainableCommander, job: Job, data: unknown): void {
  tx.hset(jobKey(job), { data: JSON.stringify(data) });
}

/**
 * The job's data as stored now (JSON text), or undefined when the job is gone. What a worker holds
 * in memory may be a step behind (a commit whose answer was lost), Redis is not.
 */
export async function readJobData(connection: RedisClient, job: Job): Promise<string | undefined> {
  return (await connection.hget(jobKey(job), 'data')) ?? undefined;
}

/** The hash BullMQ keeps a job in. */
function jobKey(job: Job): string {
  return `${job.queueQualifiedName}:${String(job.id)}`;
}

/** One round trip for the counts of every queue, one more for the jobs at the front of the lines. */
export async function readQueues(
  redis: RedisClient,
  prefix: string,
  keys: readonly QueueKey[],
  now: number,
): Promise<Map<QueueKey, QueueSnapshot>> {
  const base = (key: QueueKey) => `${prefix}:${queueCatalog[key].name}`;
  const counting = redis.pipeline();
  for (const key of keys) {
    const b = base(key);
    counting.llen(`${b}:wait`).zcard(`${b}:prioritized`).llen(`${b}:active`).zcard(`${b}:delayed`).zcard(`${b}:failed`);
    // Workers take from the right of the wait list: its last element is next in line.
    counting.lindex(`${b}:wait`, -1).zrange(`${b}:delayed`, 0, 0, 'WITHSCORES');
  }
  const counted = await execAll(counting);
  const per = 7;
  const fronts = keys.map((_key, i) => ({
    waitingId: counted[i * per + 5] as string | null,
    firstDelayed: counted[i * per + 6] as string[],
  }));

  const reading = redis.pipeline();
  keys.forEach((key, i) => {
    const id = fronts[i]?.waitingId;
    if (id) reading.hmget(`${base(key)}:${id}`, 'timestamp', 'opts', 'processedOn', DUE_AT_FIELD);
  });
  const jobs = (await execAll(reading)) as (string | null)[][];

  const snapshots = new Map<QueueKey, QueueSnapshot>();
  let nextJob = 0;
  keys.forEach((key, i) => {
    const n = (offset: number) => Number(counted[i * per + offset] ?? 0);
    const front = fronts[i];
    let readySince = Infinity;
    if (front?.waitingId) readySince = readySinceOf(jobs[nextJob++] ?? [], now);
    const score = front?.firstDelayed[1];
    if (score !== undefined) {
      const due = Math.floor(Number(score) / DELAYED_SCORE_FACTOR);
      if (due < now) readySince = Math.min(readySince, due);
    }
    snapshots.set(key, {
      counts: { waiting: n(0) + n(1), active: n(2), delayed: n(3), failed: n(4) },
      oldestWaitingSeconds: Number.isFinite(readySince) ? Math.max(0, now - readySince) / 1000 : 0,
    });
  });
  return snapshots;
}

/** From a job hash's timestamp, opts, processedOn and due-at fields (strings, or null when absent). */
export function readySinceOf([timestamp, opts, processedOn, dueAt]: readonly (string | null | undefined)[], now: number): number {
  let initialDelay = 0;
  try {
    const parsed = JSON.parse(opts ?? '{}') as { delay?: unknown };
    if (typeof parsed.delay === 'number') initialDelay = parsed.delay;
  } catch {
    // a hash written by another BullMQ version: count from when it was added
  }
  const candidates = [Number(timestamp) + initialDelay, Number(dueAt), Number(processedOn)].filter((v) => Number.isFinite(v) && v > 0);
  return candidates.length > 0 ? Math.max(...candidates) : now;
}

/** Where each queue lives: every shard for a sharded queue (labelled by index), else home (no label). */
function placesOf(keys: Keyspace): { prefix: string; shard: string; queues: QueueKey[] }[] {
  const all = Object.keys(queueCatalog) as QueueKey[];
  const sharded = all.filter((k) => queueCatalog[k].sharded);
  const home = all.filter((k) => !queueCatalog[k].sharded);
  const places = keys.prefixes.map((prefix, i) => ({ prefix, shard: String(i), queues: sharded }));
  // With one shard, shard 0 is home: its one read covers every queue.
  if (keys.shards === 1) return [{ ...places[0]!, queues: all }];
  return [...places, { prefix: keys.home, shard: '', queues: home }];
}

/**
 * Registers the queue gauges, per queue and shard (`shard` is empty for the queues that are not
 * sharded: Prometheus then shows no label). Each scrape reads each shard once (its keys share a
 * slot, so each is one pipeline on a cluster too); when Redis does not answer, the gauges keep
 * their last values and the failure reaches eventrelay_redis_errors_total through the connection's
 * own instrumentation.
 */
export function registerQueueMetrics(registry: Registry, redis: RedisClient, keys: Keyspace, clock: () => number = Date.now): void {
  const places = placesOf(keys);
  type Read = { queue: string; shard: string; snapshot: QueueSnapshot }[];
  let pending: Promise<Read | undefined> | undefined;
  // A scrape starts every collect() before awaiting any, so both gauges share this one read.
  const read = () =>
    (pending ??= Promise.all(
      places.map(async (p) => {
        const snapshots = await readQueues(redis, p.prefix, p.queues, clock());
        return [...snapshots].map(([key, snapshot]) => ({ queue: queueCatalog[key].name, shard: p.shard, snapshot }));
      }),
    )
      .then((parts) => parts.flat())
      .catch(() => undefined)
      .finally(() => (pending = undefined)));
  new Gauge({
    name: 'eventrelay_queue_jobs',
    help: 'Jobs per queue, shard and state: waiting (ready, not taken), active, delayed (retries, parked, overdue or not), failed (BullMQ attempts used up)',
    labelNames: ['queue', 'shard', 'state'] as const,
    registers: [registry],
    async collect() {
      for (const { queue, shard, snapshot } of (await read()) ?? [])
        for (const state of STATES) this.set({ queue, shard, state }, snapshot.counts[state]);
    },
  });
  new Gauge({
    name: 'eventrelay_queue_oldest_waiting_seconds',
    help: 'How long the job ready the longest has waited to be taken (waiting, or delayed and overdue), per queue and shard; 0 when none waits',
    labelNames: ['queue', 'shard'] as const,
    registers: [registry],
    async collect() {
      for (const { queue, shard, snapshot } of (await read()) ?? []) this.set({ queue, shard }, snapshot.oldestWaitingSeconds);
    },
  });
}
