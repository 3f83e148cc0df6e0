/**
 * Issue 32 from outside, against a real ingest on a Redis with a maxmemory: a source flooding unique
 * messageIds is refused with 429 source_over_budget once its claims hold its share of Redis, while
 * another source keeps getting 200; and a web source's default rate is the client one.
 */
import { eventually, startPrivateRedis, type PrivateRedis } from '@eventrelay/testkit';
import type { Source } from '@eventrelay/config';
import { post, startTestIngest, type TestIngest } from '../../../test/support/ingest';

const MAXMEMORY = 64 * 1024 * 1024;

describe('per-source budgets', () => {
  let redis: PrivateRedis;
  let t: TestIngest;
  const quiet: Source = { id: 'src-quiet', name: 'Quiet', type: 'web', writeKey: 'wk_quiet_source_0001' };

  beforeAll(async () => {
    redis = await startPrivateRedis({ aof: false, args: ['--maxmemory', String(MAXMEMORY), '--maxmemory-policy', 'noeviction'] });
    // About a hundred claims' worth: the flood reaches it within a few batches.
    // One second throughout, so a refused source stays known as refused (see the last assertions).
    const now = Date.parse('2026-11-29T09:30:00.200Z');
    t = await startTestIngest({
      label: 'budgets',
      clock: () => now,
      // Refusals answered at once: the flood here is sequential (holding is tested apart).
      env: { INGEST_REFUSAL_HOLD_MS: '0' },
      redisUrl: redis.url,
      source: { id: 'src-flood', type: 'web', memoryShare: 20_000 / MAXMEMORY, rateLimitPerSecond: 1_000_000 },
    });
    await t.store.apply({ sources: [t.source, quiet], destinations: [], audiences: [] });
  });
  afterAll(async () => {
    await t.close();
    await redis.stop();
  });

  it('refuses the flooding source alone, with a code, a Retry-After and a metric naming it', async () => {
    const batch = (tag: string) => ({
      batch: Array.from({ length: 40 }, (_, i) => ({ type: 'track', userId: `${tag}-user-${i}`, event: 'E', messageId: `${tag}-${i}` })),
    });
    const flood: Awaited<ReturnType<typeof post>>[] = [];
    const quietAnswers: number[] = [];
    for (let k = 0; k < 10; k++) {
      flood.push(await post(t.url, '/v1/batch', batch(`flood-${k}`), { writeKey: t.writeKey }));
      quietAnswers.push(
        (await post(t.url, '/v1/track', { userId: 'q', event: 'Quiet', messageId: `quiet-${k}` }, { writeKey: quiet.writeKey })).status,
      );
    }
    expect(quietAnswers).toEqual(Array(10).fill(200));
    const statuses = flood.map((a) => a.status);
    // Stored until the budget is reached, refused from then on.
    const firstRefused = statuses.indexOf(429);
    expect(firstRefused).toBeGreaterThan(0);
    expect(statuses.slice(firstRefused)).toEqual(Array(statuses.length - firstRefused).fill(429));
    const refused = flood[firstRefused]!;
    expect(refused.json).toMatchObject({ success: false, code: 'source_over_budget', message: expect.stringMatching(/src-flood/) });
    // Room comes back when its first claims expire, a dedupe window (24 h) later.
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(23 * 3600);
    // Nothing of a refused request was stored; the quiet source's calls all were.
    const stored = (await t.routeJobs()).flatMap((j) => j.calls.map((c) => c.messageId));
    expect(stored.filter((id) => id.startsWith(`flood-${firstRefused}-`))).toEqual([]);
    expect(stored.filter((id) => id.startsWith('quiet-')).sort()).toEqual(quietAnswers.map((_, k) => `quiet-${k}`).sort());
    const metrics = await (await fetch(`${t.url}/metrics`)).text();
    const counted = (source: string) =>
      new RegExp(`^eventrelay_ingest_source_over_budget_total\\{source="${source}"[^}]*\\} (\\d+)$`, 'm').exec(metrics)?.[1];
    expect(counted('src-flood')).toBe(String(statuses.length - firstRefused));
    // Every configured source has its series, at 0 until refused, so an alert sees the first refusal.
    expect(counted('src-quiet')).toBe('0');
  });

  it('refuses a source known to be over its budget before reading its body: a flood costs no parsing', async () => {
    // Not JSON at all: read and parsed, it would be answered 400 invalid_request.
    const garbage = await post(t.url, '/v1/batch', undefined, { writeKey: t.writeKey, raw: '{"batch": [ not json' });
    expect(garbage).toMatchObject({ status: 429, json: { code: 'source_over_budget' } });
    // The quiet source's body is read as ever.
    const quietGarbage = await post(t.url, '/v1/batch', undefined, { writeKey: quiet.writeKey, raw: '{"batch": [ not json' });
    expect(quietGarbage).toMatchObject({ status: 400, json: { code: 'invalid_request' } });
  });

  it("holds the 429 of a refused request until it would fit, so a flood sends at its limit's pace", async () => {
    const now = Date.parse('2026-11-29T09:30:00.200Z');
    const holds: { ms: number; release: () => void }[] = [];
    const held = await startTestIngest({
      label: 'held',
      clock: () => now,
      source: { rateLimitPerSecond: 4 },
      sleep: (ms) => new Promise<void>((release) => holds.push({ ms, release })),
    });
    try {
      const track = (id: string) => post(held.url, '/v1/track', { userId: 'u', event: 'E', messageId: id }, { writeKey: held.writeKey });
      const batch = { batch: Array.from({ length: 4 }, (_, i) => ({ type: 'track', userId: 'u', event: 'E', messageId: `first-${i}` })) };
      expect((await post(held.url, '/v1/batch', batch, { writeKey: held.writeKey })).status).toBe(200);
      const order: string[] = [];
      const refused = track('second').then((res) => (order.push('answered'), res));
      await eventually(() => expect(holds).toHaveLength(1), 5000, 10);
      // 4 calls at 4/s are paid for a second ahead, the allowance: one more fits 250 ms from now
      // (of the injected clock), and its answer is held until then.
      expect(holds[0]!.ms).toBe(250);
      order.push('released');
      holds[0]!.release();
      expect(await refused).toMatchObject({ status: 429, json: { code: 'rate_limited' } });
      expect(order).toEqual(['released', 'answered']);
    } finally {
      await held.close();
    }
  });

  it('holds a web source to INGEST_CLIENT_RATE_LIMIT by default', async () => {
    // The clock stands still: the pace never moves on under the test.
    const now = Date.parse('2026-11-29T09:30:00.200Z');
    const web = await startTestIngest({
      label: 'client-rate',
      clock: () => now,
      env: { INGEST_CLIENT_RATE_LIMIT: '5' },
      source: { type: 'web' },
    });
    try {
      const batch = { batch: Array.from({ length: 6 }, (_, i) => ({ type: 'track', userId: 'u', event: 'E', messageId: `web-${i}` })) };
      expect(await post(web.url, '/v1/batch', batch, { writeKey: web.writeKey })).toMatchObject({ status: 200 });
      expect(
        await post(web.url, '/v1/track', { userId: 'u', event: 'E', messageId: 'web-over' }, { writeKey: web.writeKey }),
      ).toMatchObject({
        status: 429,
        json: { code: 'rate_limited' },
      });
    } finally {
      await web.close();
    }
  });
});
