/**
 * With Redis gone the intake answers 503 + Retry-After, never 200 and never a crash, and serves
 * again once Redis is back. Uses a private redis-server: the shared one is never stopped.
 */
import { post, startTestIngest, type TestIngest } from '../../../test/support/ingest';
import { type PrivateRedis, startPrivateRedis } from '@eventrelay/testkit';

describe('intake during a Redis outage', () => {
  let redis: PrivateRedis;
  let t: TestIngest;
  beforeAll(async () => {
    redis = await startPrivateRedis();
    t = await startTestIngest({ label: 'outage', redisUrl: redis.url });
  });
  afterAll(async () => {
    await redis.start().catch(() => undefined);
    await t.close();
    await redis.stop();
  });

  it('answers 503, then 200 again when Redis is back, and loses no call answered 200', async () => {
    const before = await post(t.url, '/v1/track', { userId: 'u', event: 'Before', messageId: 'before' }, { writeKey: t.writeKey });
    expect(before.status).toBe(200);

    await redis.stop();
    const during = [];
    for (let i = 0; i < 5; i++)
      during.push(
        await post(
          t.url,
          '/v1/batch',
          { batch: [{ type: 'track', userId: 'u', event: 'During', messageId: `during-${i}` }] },
          { writeKey: t.writeKey },
        ),
      );
    for (const res of during) {
      expect(res.status).toBe(503);
      expect(res.json).toMatchObject({ success: false, code: 'service_unavailable' });
      expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
    }
    const health = await fetch(`${t.url}/healthz`);
    expect(health.status).toBe(200);
    const ready = await fetch(`${t.url}/readyz`);
    expect(ready.status).toBe(503);

    // Redis comes back with what it had acknowledged (AOF), as a production Redis would.
    await redis.start();
    let after = { status: 0 };
    const deadline = Date.now() + 10_000;
    while (Date.now() < deadline) {
      after = await post(t.url, '/v1/track', { userId: 'u', event: 'After', messageId: `after-${Date.now()}` }, { writeKey: t.writeKey });
      if (after.status === 200) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(after.status).toBe(200);
    expect((await fetch(`${t.url}/readyz`)).status).toBe(200);
    const queued = (await t.routeJobs()).flatMap((j) => j.calls.map((c) => c.messageId));
    expect(queued).toContain('before');
    expect(queued.some((id) => id.startsWith('after-'))).toBe(true);
    expect(queued.some((id) => id.startsWith('during-'))).toBe(false);
  });
});
