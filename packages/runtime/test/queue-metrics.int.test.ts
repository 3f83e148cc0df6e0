/**
 * Queue depth and age against a real Redis and real BullMQ queues: counts by state, and the age of
 * the job ready the longest, whether it waits fresh, was put back, or sits overdue in delayed.
 */
import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { keyspace, queueCatalog, type RouteJob } from '@eventrelay/config';
import { createMetricsRegistry } from '../src/metrics';
import { createRedis } from '../src/redis';
import { putJobBack, queueJobDataWrite, readJobData, readQueues, readySinceOf, registerQueueMetrics } from '../src/queue-metrics';
import { deletePrefix, eventually, freePort, SHARED_REDIS_URL, sleep, uniquePrefix } from '@eventrelay/testkit';
import { parsePromText, total } from '../../../test/support/prom-text';

const routeJob = (id: string): RouteJob => ({ batchId: id });

describe('queue metrics', () => {
  let prefix: string;
  let redis: Redis;
  let queue: Queue<RouteJob>;
  const workers: Worker[] = [];
  const connections: Redis[] = [];

  beforeEach(() => {
    prefix = uniquePrefix('qm');
    redis = new Redis(SHARED_REDIS_URL);
    queue = new Queue<RouteJob>(queueCatalog.route.name, { connection: redis, prefix });
  });
  afterEach(async () => {
    for (const w of workers.splice(0)) await w.close(true);
    for (const c of connections.splice(0)) c.disconnect();
    await queue.close();
    await deletePrefix(SHARED_REDIS_URL, prefix);
    redis.disconnect();
  });

  /** A worker that only fetches by hand, so jobs stay active as long as the test wants. */
  function manualWorker(): Worker<RouteJob> {
    const connection = new Redis(SHARED_REDIS_URL, { maxRetriesPerRequest: null });
    connections.push(connection);
    const w = new Worker<RouteJob>(queueCatalog.route.name, null, { connection, prefix, autorun: false });
    workers.push(w);
    return w;
  }

  it('is empty and 0 s old for queues with nothing in them', async () => {
    const snapshot = await readQueues(redis, prefix, ['route', 'deliver'], Date.now());
    expect(snapshot.get('deliver')).toEqual({ counts: { waiting: 0, active: 0, delayed: 0, failed: 0 }, oldestWaitingSeconds: 0 });
  });

  it('counts jobs by state and ages a fresh waiting job from when it was added', async () => {
    const added = Date.now();
    await queue.add('route', routeJob('a'), { jobId: 'a' });
    await queue.add('route', routeJob('b'), { jobId: 'b' });
    await queue.add('route', routeJob('c'), { jobId: 'c' });
    await queue.add('route', routeJob('later'), { jobId: 'later', delay: 60_000 });
    const worker = manualWorker();
    const active = await worker.getNextJob('tok-1');
    expect(active.id).toBe('a');
    const failing = await worker.getNextJob('tok-2');
    await failing.moveToFailed(new Error('defect'), 'tok-2', false);
    const jobC = await queue.getJob('c');

    const now = added + 10_000;
    const s = (await readQueues(redis, prefix, ['route'], now)).get('route');
    expect(s?.counts).toEqual({ waiting: 1, active: 1, delayed: 1, failed: 1 });
    // c is next in line; it waited since it was added.
    expect(s?.oldestWaitingSeconds).toBeCloseTo((now - (jobC?.timestamp ?? 0)) / 1000, 3);
  });

  it('ages a put-back job from when it fell due, not from when it was first added', async () => {
    await queue.add('route', routeJob('r'), { jobId: 'r' });
    await sleep(300);
    const worker = manualWorker();
    const job = await worker.getNextJob('tok');
    const due = Date.now() + 50;
    await putJobBack(redis, job, due, 'tok');
    expect((await readQueues(redis, prefix, ['route'], due - 10)).get('route')).toEqual({
      counts: { waiting: 0, active: 0, delayed: 1, failed: 0 },
      oldestWaitingSeconds: 0,
    });
    // Overdue and not yet promoted (no worker fetched): counted from its due time.
    expect((await readQueues(redis, prefix, ['route'], due + 2000)).get('route')?.oldestWaitingSeconds).toBeCloseTo(2, 3);
    await sleep(80);
    await (await queue.getJob('r'))?.promote();
    const promoted = (await readQueues(redis, prefix, ['route'], due + 1000)).get('route');
    expect(promoted?.counts.waiting).toBe(1);
    // Promotion zeroed BullMQ's delay; the noted due time still says when it became ready.
    expect(promoted?.oldestWaitingSeconds).toBeCloseTo(1, 3);
  });

  it('reads and rewrites the stored data of a failed job, leaving its other fields alone', async () => {
    await queue.add('route', routeJob('f'), { jobId: 'f' });
    const worker = manualWorker();
    const job = await worker.getNextJob('tok-1');
    await job.moveToFailed(new Error('defect'), 'tok-1', false);
    job.data = routeJob('stale copy');
    expect(await readJobData(redis, job)).toBe(JSON.stringify(routeJob('f')));
    const tx = redis.multi();
    queueJobDataWrite(tx, job, routeJob('rewritten'));
    await tx.exec();
    const stored = await queue.getJob('f');
    expect(stored?.data).toEqual(routeJob('rewritten'));
    expect(await stored?.getState()).toBe('failed');
    expect(stored?.failedReason).toBe('defect');
    await queue.remove('f');
    expect(await readJobData(redis, job)).toBeUndefined();
  });

  it('readySinceOf: the latest of added (plus its initial delay), noted due time, and last start', () => {
    expect(readySinceOf(['1000', '{}', null, null], 5000)).toBe(1000);
    expect(readySinceOf(['1000', '{"delay":500}', null, null], 5000)).toBe(1500);
    expect(readySinceOf(['1000', '{}', '2000', '3000'], 5000)).toBe(3000);
    expect(readySinceOf(['1000', '{}', '2000', null], 5000)).toBe(2000);
    expect(readySinceOf(['1000', 'not json', null, null], 5000)).toBe(1000);
    expect(readySinceOf([null, null, null, null], 5000)).toBe(5000);
  });

  it('serves the gauges in /metrics form from one read per scrape', async () => {
    await queue.add('route', routeJob('x'), { jobId: 'x' });
    const registry = createMetricsRegistry('router');
    const control = createRedis(SHARED_REDIS_URL, 'control', 'test-control', registry);
    try {
      registerQueueMetrics(registry, control, keyspace(prefix));
      const samples = parsePromText(await registry.metrics());
      expect(total(samples, 'eventrelay_queue_jobs', { queue: 'route', state: 'waiting' })).toBe(1);
      expect(total(samples, 'eventrelay_queue_jobs', { queue: 'deliver', state: 'waiting' })).toBe(0);
      expect(
        Number.isFinite(samples.find((x) => x.name === 'eventrelay_queue_oldest_waiting_seconds' && x.labels['queue'] === 'route')?.value),
      ).toBe(true);
      expect(
        samples
          .filter((s) => s.name === 'eventrelay_queue_oldest_waiting_seconds')
          .map((s) => s.labels['queue'])
          .sort(),
      ).toEqual(['audience', 'deliver', 'profile', 'regulation', 'route']);
    } finally {
      control.disconnect();
    }
  });
});

describe('eventrelay_redis_errors_total', () => {
  it('counts a command answered with an error once, by connection and kind', async () => {
    const registry = createMetricsRegistry('router');
    const client = createRedis(SHARED_REDIS_URL, 'control', 'test-commands', registry);
    try {
      await expect(client.call('NO-SUCH-COMMAND')).rejects.toThrow(/unknown command/i);
      const results = await client
        .pipeline()
        .set(`${uniquePrefix('re')}:k`, 'v')
        .call('NO-SUCH-COMMAND')
        .exec();
      expect(results?.[1]?.[0]).toBeInstanceOf(Error);
      await client.ping();
      const samples = parsePromText(await registry.metrics());
      expect(total(samples, 'eventrelay_redis_errors_total', { connection: 'test-commands', kind: 'command' })).toBe(2);
      expect(total(samples, 'eventrelay_redis_errors_total', { kind: 'connection' })).toBe(0);
    } finally {
      client.disconnect();
    }
  });

  it('counts failed connections while Redis is away', async () => {
    const registry = createMetricsRegistry('router');
    const port = await freePort();
    const client = createRedis(`redis://127.0.0.1:${port}`, 'control', 'test-nowhere', registry);
    try {
      await eventually(async () =>
        expect(
          total(parsePromText(await registry.metrics()), 'eventrelay_redis_errors_total', {
            connection: 'test-nowhere',
            kind: 'connection',
          }),
        ).toBeGreaterThanOrEqual(2),
      );
    } finally {
      client.disconnect();
    }
  });
});
