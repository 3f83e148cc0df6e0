/**
 * A full Redis is survivable (issue 32): ingest, the router and webhook-delivery run against a
 * Redis of the test's own (maxmemory, noeviction). Calls are accepted and their requests reach
 * the receiver, which holds its answers; Redis is then filled (as a flood would, topped up while
 * it lasts) so every commit of those deliveries is refused, the answers are let go, and later
 * Redis is freed. What must hold: no accepted call is lost, the receiver gets each call at most
 * once more than once per call in flight when Redis filled (a process that keeps its job commits
 * the round it sent instead of sending it again), the processes back off rather than spin while
 * Redis refuses writes, and they deliver again without a restart once memory is back.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Redis } from 'ioredis';
import { eventually, sleep, startPrivateRedis, type PrivateRedis } from '@eventrelay/testkit';
import { startTestPipeline, webhookDestination, type TestPipeline } from '../support/pipeline';

jest.setTimeout(300_000);

/** A receiver that records each request's message id and answers only once let go. */
async function startHoldingReceiver() {
  const ids: string[] = [];
  let held: (() => void)[] = [];
  let holding = true;
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      ids.push(String(req.headers['x-eventrelay-message-id']));
      const answer = () => res.writeHead(200).end('ok');
      if (holding) held.push(answer);
      else answer();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    ids,
    held: () => held.length,
    letGo() {
      holding = false;
      for (const answer of held) answer();
      held = [];
    },
    close() {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Writes filler keys until Redis refuses one, from large to small, so it ends at its maxmemory. */
async function fill(redis: Redis, from: number): Promise<number> {
  let n = from;
  for (const size of [256 * 1024, 16 * 1024, 1024, 64]) {
    const value = 'x'.repeat(size);
    for (;;) {
      try {
        await redis.set(`filler:${n}`, value);
        n++;
      } catch (err) {
        if (!String(err).includes('OOM')) throw err;
        break;
      }
    }
  }
  return n;
}

/** Redis's count of writes it refused for lack of memory (INFO errorstats). */
async function refusals(redis: Redis): Promise<number> {
  const info = await redis.info('errorstats');
  return Number(/errorstat_OOM:count=(\d+)/.exec(info)?.[1] ?? 0);
}

async function post(pipeline: TestPipeline, ids: readonly string[]): Promise<number> {
  const res = await fetch(`${pipeline.ingestUrl}/v1/batch`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      authorization: `Basic ${Buffer.from(`${pipeline.writeKey}:`).toString('base64')}`,
    },
    body: JSON.stringify({ batch: ids.map((messageId) => ({ type: 'track', messageId, userId: 'u-1', event: 'Filled' })) }),
  });
  await res.arrayBuffer();
  return res.status;
}

describe('a Redis that fills up and is freed again', () => {
  let redis: PrivateRedis;
  let direct: Redis;
  let receiver: Awaited<ReturnType<typeof startHoldingReceiver>>;
  let pipeline: TestPipeline;

  beforeAll(async () => {
    redis = await startPrivateRedis({ aof: false, args: ['--maxmemory', '48mb', '--maxmemory-policy', 'noeviction'] });
    direct = new Redis(redis.url, { maxRetriesPerRequest: 1 });
    receiver = await startHoldingReceiver();
    pipeline = await startTestPipeline({
      label: 'redis-full',
      redisUrl: redis.url,
      ingest: true,
      destinations: [webhookDestination('d-full', [receiver.url])],
      // The receiver holds its answers while the test fills Redis: longer than that.
      deliveryEnv: { DELIVERY_TIMEOUT_MS: '10000' },
    });
  });

  afterAll(async () => {
    receiver?.letGo();
    await pipeline?.close();
    await receiver?.close();
    direct?.disconnect();
    await redis?.close();
  });

  it('loses no accepted call, repeats none more than once, backs off while full and recovers without a restart', async () => {
    // Accepted, routed and sent: every call's request is at the receiver, unanswered.
    const before = Array.from({ length: 60 }, (_, i) => `before-${i}`);
    for (let i = 0; i < before.length; i += 10) expect(await post(pipeline, before.slice(i, i + 10))).toBe(200);
    await eventually(() => expect(receiver.held()).toBe(before.length), 60_000);
    const inFlight = receiver.held();

    // Full, and kept full as a flood would: whatever is freed is taken again.
    let fillers = await fill(direct, 0);
    let flooding = true;
    const flood = (async () => {
      while (flooding) {
        fillers = await fill(direct, fillers);
        await sleep(100);
      }
    })();
    const refusedAtFull = await refusals(direct);
    receiver.letGo();
    // Every round's commit is refused; the processes keep trying (or spin) for a while.
    const startedFull = Date.now();
    await sleep(10_000);
    const fullSeconds = (Date.now() - startedFull) / 1000;
    const refusedWhileFull = (await refusals(direct)) - refusedAtFull;
    flooding = false;
    await flood;

    // Freed: the filler keys go, as a flood's keys would expire.
    for (let i = 0; i < fillers; i += 500)
      await direct.del(...Array.from({ length: Math.min(500, fillers - i) }, (_, k) => `filler:${i + k}`));

    // The same processes take calls and deliver them again.
    const after = Array.from({ length: 20 }, (_, i) => `after-${i}`);
    await eventually(async () => expect(await post(pipeline, after)).toBe(200), 60_000);
    await eventually(() => expect(new Set(receiver.ids)).toEqual(new Set([...before, ...after])), 120_000);
    // Settled: nothing left to run that could send a call again.
    await eventually(async () => {
      const counts = await pipeline.deliverQueue.getJobCounts('active', 'wait', 'delayed', 'prioritized');
      expect(Object.values(counts).reduce((a, b) => a + b, 0)).toBe(0);
    }, 180_000);

    const duplicates = receiver.ids.length - new Set(receiver.ids).size;
    // At most once more per call in flight when Redis filled; this one process kept its jobs, so none.
    expect(duplicates).toBeLessThanOrEqual(inFlight);
    expect(duplicates).toBe(0);
    // Backing off: refusals come at the pace of the waits (250 ms, doubling to 5 s) for each job
    // held and each worker, not as fast as Redis answers (thousands a second).
    expect(refusedWhileFull).toBeGreaterThan(0);
    expect(refusedWhileFull / fullSeconds).toBeLessThan(100);
  });
});
