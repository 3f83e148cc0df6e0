/**
 * The Redis memory guard against a real redis-server with a small maxmemory and `noeviction`: the
 * intake answers 503 overloaded before Redis refuses a write, keeps everything it acknowledged, and
 * serves again once memory is freed. A private redis-server: the shared one is never reconfigured.
 */
import { Redis } from 'ioredis';
import { post, startTestIngest, type TestIngest } from '../../../test/support/ingest';
import { type PrivateRedis, startPrivateRedis } from '@eventrelay/testkit';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('intake under Redis memory pressure', () => {
  let redis: PrivateRedis;
  let t: TestIngest;
  let client: Redis;
  beforeAll(async () => {
    redis = await startPrivateRedis({ aof: false, args: ['--maxmemory', '8mb', '--maxmemory-policy', 'noeviction'] });
    client = new Redis(redis.url);
    t = await startTestIngest({ label: 'memory', redisUrl: redis.url, source: { rateLimitPerSecond: 1_000_000 } });
  });
  afterAll(async () => {
    await t.close();
    client.disconnect();
    await redis.close();
  });

  const usedRatio = async () => {
    const info = await client.info('memory');
    const field = (name: string) => Number(new RegExp(`^${name}:(\\d+)`, 'm').exec(info)?.[1]);
    return field('used_memory') / field('maxmemory');
  };

  it('answers 503 overloaded before Redis is full, loses nothing it acknowledged, and serves again once memory is freed', async () => {
    // Most of the room taken by something else (a backlog, dead letters…), 256 KB at a time.
    let fillers = 0;
    while ((await usedRatio()) < 0.75) await client.set(`filler:${fillers++}`, 'f'.repeat(256 * 1024));

    // Then calls, about 100 KB a request, paced so the guard's 500 ms samples keep up: at most
    // 0.5 MB between two samples, within the 0.8 MB from the guard's 90% to a full 8 MB (at 50 ms a
    // request it was 1 MB, and a late sample on a loaded machine let Redis refuse first).
    const acknowledged: string[] = [];
    let refused: Awaited<ReturnType<typeof post>> | undefined;
    for (let r = 0; r < 200 && !refused; r++) {
      const batch = Array.from({ length: 50 }, (_, i) => ({
        type: 'track',
        userId: 'u',
        event: 'Fill',
        messageId: `fill-${r}-${i}`,
        properties: { pad: 'p'.repeat(2000) },
      }));
      const res = await post(t.url, '/v1/batch', { batch }, { writeKey: t.writeKey });
      if (res.status === 200) acknowledged.push(...batch.map((c) => c.messageId));
      else refused = res;
      await sleep(100);
    }
    // Refused by the guard, not by Redis (which would be service_unavailable after an OOM error).
    expect(refused).toMatchObject({ status: 503, json: { success: false, code: 'overloaded' } });
    expect(Number(refused?.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(acknowledged.length).toBeGreaterThan(0);
    const ratio = await usedRatio();
    expect(ratio).toBeGreaterThanOrEqual(0.9);
    expect(ratio).toBeLessThan(1);
    // A single call is refused too, and nothing of it is stored.
    const single = await post(t.url, '/v1/track', { userId: 'u', event: 'E', messageId: 'while-full' }, { writeKey: t.writeKey });
    expect(single).toMatchObject({ status: 503, json: { code: 'overloaded' } });

    const metrics = await (await fetch(`${t.url}/metrics`)).text();
    expect(Number(/^eventrelay_ingest_redis_memory_ratio\S* (\S+)$/m.exec(metrics)?.[1])).toBeGreaterThanOrEqual(0.9);
    expect(metrics).toMatch(/^eventrelay_ingest_calls_total\{[^}]*outcome="rejected"[^}]*reason="overloaded"[^}]*\} [1-9]/m);

    // Everything answered 200 is still stored and queued for routing, once each; the refused call is not.
    const queued = (await t.routeJobs()).flatMap((j) => j.calls.map((c) => c.messageId));
    expect(queued.filter((id) => id.startsWith('fill-')).sort()).toEqual([...acknowledged].sort());
    expect(queued).not.toContain('while-full');

    // Memory freed: the intake serves again within a sample or two.
    for (let i = 0; i < fillers; i++) await client.del(`filler:${i}`);
    let after = { status: 0 };
    const deadline = Date.now() + 5000;
    while (Date.now() < deadline) {
      after = await post(t.url, '/v1/track', { userId: 'u', event: 'E', messageId: `after-${Date.now()}` }, { writeKey: t.writeKey });
      if (after.status === 200) break;
      await sleep(100);
    }
    expect(after.status).toBe(200);
  });
});
