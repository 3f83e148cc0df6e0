/**
 * What ingest counts for the stats (GET /admin/v1/stats): per source, the calls accepted
 * (duplicates included) and rejected (invalid items, a single call refused, every call of a
 * request refused as a whole), in the minute of the request; nothing for an unknown write key.
 */
import { Redis } from 'ioredis';
import { StatsCounters } from '@eventrelay/stores';
import { eventually, SHARED_REDIS_URL } from '@eventrelay/testkit';
import { post, startTestIngest, type TestIngest } from '../../../test/support/ingest';

const NOW = Date.UTC(2026, 10, 25, 9, 41, 20);

describe('ingest stats', () => {
  let t: TestIngest;
  let redis: Redis;

  beforeEach(async () => {
    t = await startTestIngest({ label: 'ingest-stats', clock: () => NOW, source: { rateLimitPerSecond: 5 } });
    redis = new Redis(SHARED_REDIS_URL, { maxRetriesPerRequest: 1 });
  });
  afterEach(async () => {
    redis.disconnect();
    await t.close();
  });

  it('counts accepted and rejected calls per source in the minute they arrived', async () => {
    const ok = (n: number) => ({ type: 'track', userId: `u-${n}`, event: 'Counted', messageId: `m-${n}` });
    const invalid = { type: 'track', userId: 'u-x' }; // no event
    expect((await post(t.url, '/v1/batch', { batch: [ok(1), ok(2), invalid] }, { writeKey: t.writeKey })).status).toBe(200);
    // A duplicate is answered as accepted, and counted so.
    expect((await post(t.url, '/v1/track', ok(1), { writeKey: t.writeKey })).status).toBe(200);
    expect((await post(t.url, '/v1/track', invalid, { writeKey: t.writeKey })).status).toBe(400);
    expect((await post(t.url, '/v1/track', ok(3), { writeKey: 'wk_nobody_0000000000' })).status).toBe(401);
    // Ten calls against a limit of 5 a second: refused whole, all ten rejected.
    const tooMany = Array.from({ length: 10 }, (_, i) => ok(10 + i));
    expect((await post(t.url, '/v1/batch', { batch: tooMany }, { writeKey: t.writeKey })).status).toBe(429);

    const stats = new StatsCounters(redis, t.prefix);
    const minute = Math.floor(NOW / 60_000);
    await eventually(async () => {
      const [bucket] = await stats.read('1m', [minute]);
      expect(bucket).toEqual({ 's:src-test:accepted': '3', 's:src-test:rejected': '12' });
    });
  });
});
