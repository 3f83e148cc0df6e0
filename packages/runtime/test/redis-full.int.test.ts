/**
 * A full Redis (maxmemory, noeviction) of the test's own, filled by filler keys or by a maxmemory
 * set below what it holds: a worker keeps the job whose write was
 * refused and finishes it once memory is freed, without running it anywhere else; the refusals are
 * counted as kind="oom"; and a MULTI using a script after one Redis discarded commits whole.
 */
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { queueCatalog, type RouteJob } from '@eventrelay/config';
import { eventually, sleep, startPrivateRedis, type PrivateRedis } from '@eventrelay/testkit';
import { createMetricsRegistry } from '../src/metrics';
import { closeRedis, createRedis, defineScript, execAll, type RedisClient } from '../src/redis';
import { openWorker } from '../src/workers';
import { parsePromText, total } from '../../../test/support/prom-text';

jest.setTimeout(120_000);

async function fill(redis: Redis): Promise<number> {
  let n = 0;
  for (const size of [64 * 1024, 1024, 64]) {
    const value = 'x'.repeat(size);
    for (;;) {
      try {
        await redis.set(`filler:${n}`, value);
        n++;
      } catch {
        break;
      }
    }
  }
  return n;
}

async function free(redis: Redis, fillers: number): Promise<void> {
  for (let i = 0; i < fillers; i += 500)
    await redis.del(...Array.from({ length: Math.min(500, fillers - i) }, (_, k) => `filler:${i + k}`));
}

describe('a full Redis', () => {
  let redis: PrivateRedis;
  let direct: Redis;
  const opened: RedisClient[] = [];

  beforeAll(async () => {
    redis = await startPrivateRedis({ aof: false, args: ['--maxmemory', '16mb', '--maxmemory-policy', 'noeviction'] });
    direct = new Redis(redis.url, { maxRetriesPerRequest: 1 });
  });
  afterAll(async () => {
    for (const c of opened) await closeRedis(c);
    direct?.disconnect();
    await redis?.close();
  });

  it('commits a MULTI using a script whole after Redis discarded one (no NOSCRIPT, no half commit)', async () => {
    const client = createRedis(redis.url, 'worker', 'test-scripts');
    opened.push(client);
    defineScript(client, 'setTwice', `redis.call('SET', KEYS[1], ARGV[1]); return redis.call('SET', KEYS[2], ARGV[1])`);
    type SetTwice = { setTwice(n: number, a: string, b: string, v: string): unknown };
    const multi = () => {
      const tx = client.multi();
      (tx as unknown as SetTwice).setTwice(2, 'script:a', 'script:b', 'v');
      tx.set('script:c', 'v');
      return tx;
    };
    const fillers = await fill(direct);
    await expect(execAll(multi())).rejects.toThrow(/EXECABORT/);
    await free(direct, fillers);
    await execAll(multi());
    expect(await direct.mget('script:a', 'script:b', 'script:c')).toEqual(['v', 'v', 'v']);
    await direct.del('script:a', 'script:b', 'script:c');
  });

  it('keeps the job whose write was refused and finishes it once freed, counting the refusals', async () => {
    const registry = createMetricsRegistry('test');
    const connection = createRedis(redis.url, 'worker', 'test-worker', registry);
    opened.push(connection);
    const prefix = 'full-worker';
    const queue = new Queue<RouteJob>(queueCatalog.route.name, { connection: direct, prefix });
    let runs = 0;
    let done = 0;
    const worker = openWorker(
      'route',
      connection,
      prefix,
      async (job) => {
        runs++;
        // The first run fills Redis before its write, as a flood would meanwhile.
        // The first run finds Redis full before its write: a maxmemory below what Redis holds
        // refuses every write, whatever is freed meanwhile.
        if (runs === 1) await direct.config('SET', 'maxmemory', '1mb');
        await connection.set(`${prefix}:out:${job.id}`, 'done');
        done++;
      },
      { concurrency: 1, lockDurationMs: 3_000, stalledIntervalMs: 1_000, maxStalledCount: 1, onError: () => undefined },
    );
    void worker.run();
    await queue.add('route', { batchId: 'b1' }, { jobId: 'b1' });
    await eventually(() => expect(runs).toBeGreaterThan(1), 60_000);
    const oom = async () => total(parsePromText(await registry.metrics()), 'eventrelay_redis_errors_total', { kind: 'oom' });
    await eventually(async () => expect(await oom()).toBeGreaterThan(0), 60_000);
    // Held: still active, locked to this worker past twice its lock duration (kept alive while
    // refused, although BullMQ's renewal is refused too).
    await sleep(6_000);
    await eventually(async () => expect(await direct.pttl(`${prefix}:${queueCatalog.route.name}:b1:lock`)).toBeGreaterThan(0));
    expect(await queue.getJobState('b1')).toBe('active');
    await direct.config('SET', 'maxmemory', '16mb');
    await eventually(async () => expect(await direct.get(`${prefix}:out:b1`)).toBe('done'), 60_000);
    await eventually(
      async () =>
        expect(await queue.getJobCounts('active', 'wait', 'failed', 'delayed')).toEqual({ active: 0, wait: 0, failed: 0, delayed: 0 }),
      60_000,
    );
    expect(done).toBe(1);
    await worker.close();
    await queue.obliterate({ force: true });
    await queue.close();
  });
});
