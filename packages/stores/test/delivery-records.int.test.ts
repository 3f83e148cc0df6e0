/**
 * DeadLetterStore against real Redis: the per-destination caps (count and bytes) evict the oldest
 * letters, keep the index, the data, the messageId index and the byte total in step (through
 * rewrites, replays and user purges too), and tell when an episode of evictions began.
 * RetryBacklog: the per-destination count and bytes of calls held for a retry, changed on a MULTI,
 * their fields removed at 0, and the episodes of the cap. AttemptLog.eraseUsers: a deletion erases
 * bodies in place.
 */
import { Redis } from 'ioredis';
import type { DeadLetter, DeliveryAttempt } from '@eventrelay/config';
import { AttemptLog, DeadLetterStore, RetryBacklog, deliveryKeys } from '../src/delivery-records';
import { purgeUserDeadLetters } from '../src/user-purge';
import { deletePrefix, SHARED_REDIS_URL, sleep, uniquePrefix } from '@eventrelay/testkit';

/** Letter n of a destination; `pad` characters of properties make it as large as a test needs. */
function letter(destinationId: string, n: number, pad = 0, userId = 'u'): DeadLetter {
  return {
    jobId: `${destinationId}-${n}`,
    job: {
      sourceId: 'a',
      destinationId,
      call: {
        type: 'track',
        messageId: `m${n}`,
        userId,
        event: 'E',
        timestamp: 't',
        receivedAt: 't',
        ...(pad > 0 ? { properties: { pad: 'x'.repeat(pad) } } : {}),
      },
    },
    attempts: 1,
    lastError: 'HTTP 400',
    urls: [],
    firstAttemptAt: new Date(1000 * n).toISOString(),
    deadAt: new Date(1000 * n).toISOString(),
  };
}

describe('DeadLetterStore cap', () => {
  let redis: Redis;
  let prefix: string;

  beforeEach(() => {
    redis = new Redis(SHARED_REDIS_URL, { maxRetriesPerRequest: 1 });
    prefix = uniquePrefix('dead-cap');
  });
  afterEach(async () => {
    await deletePrefix(SHARED_REDIS_URL, prefix);
    redis.disconnect();
  });

  it('evicts the oldest beyond the cap, per destination, and reports one episode while evictions keep coming', async () => {
    const store = new DeadLetterStore(redis, prefix, { maxPerDestination: 2, episodeS: 1 });
    const keys = deliveryKeys(prefix);
    const size = bytesOf(letter('d', 1));
    expect(await store.add(letter('d', 1))).toEqual({ evicted: 0, episodeBegan: false, bytes: size, byBytes: false });
    expect(await store.add(letter('d', 2))).toEqual({ evicted: 0, episodeBegan: false, bytes: 2 * size, byBytes: false });
    expect(await store.add(letter('other', 1))).toMatchObject({ evicted: 0, episodeBegan: false });
    expect(await store.add(letter('d', 3))).toEqual({ evicted: 1, episodeBegan: true, bytes: 2 * size, byBytes: false });
    expect(await store.add(letter('d', 4))).toEqual({ evicted: 1, episodeBegan: false, bytes: 2 * size, byBytes: false });
    expect(await redis.ttl(keys.deadEvicting('d'))).toBeGreaterThan(0);

    expect((await store.list('d', 10)).map((l) => l.jobId)).toEqual(['d-4', 'd-3']);
    expect(await redis.hkeys(keys.deadData('d'))).toEqual(expect.arrayContaining(['d-3', 'd-4']));
    expect(await redis.hlen(keys.deadData('d'))).toBe(2);
    expect((await redis.hkeys(keys.deadByMessage('d'))).sort()).toEqual(['m3', 'm4']);
    expect((await store.list('other', 10)).map((l) => l.jobId)).toEqual(['other-1']);
    expect(await redis.exists(keys.deadEvicting('other'))).toBe(0);

    // No eviction for longer than the episode: the next one begins a new episode.
    await sleep(2100);
    expect(await redis.exists(keys.deadEvicting('d'))).toBe(0);
    expect(await store.add(letter('d', 5))).toMatchObject({ evicted: 1, episodeBegan: true });
  });

  it('reads the answer of a write queued on a MULTI', async () => {
    const store = new DeadLetterStore(redis, prefix, { maxPerDestination: 1 });
    await store.add(letter('d', 1));
    const tx = redis.multi();
    store.queueAdd(tx, letter('d', 2));
    store.queueAdd(tx, letter('d', 3));
    const answers = ((await tx.exec()) ?? []).map(([err, value]) => {
      if (err) throw err;
      return store.evictionOf(value);
    });
    expect(answers).toMatchObject([
      { evicted: 1, episodeBegan: true },
      { evicted: 1, episodeBegan: false },
    ]);
  });
});

/** What a letter costs against the byte cap: its JSON, in bytes, as Redis stores it. */
const bytesOf = (l: DeadLetter) => Buffer.byteLength(JSON.stringify(l));

describe('DeadLetterStore byte cap', () => {
  let redis: Redis;
  let prefix: string;

  beforeEach(() => {
    redis = new Redis(SHARED_REDIS_URL, { maxRetriesPerRequest: 1 });
    prefix = uniquePrefix('dead-bytes');
  });
  afterEach(async () => {
    await deletePrefix(SHARED_REDIS_URL, prefix);
    redis.disconnect();
  });

  /** The destination's byte total as Redis keeps it, and the bytes its letters really take. */
  async function totals(destinationId: string): Promise<{ kept: number | null; actual: number }> {
    const keys = deliveryKeys(prefix);
    const kept = await redis.hget(keys.deadBytes(destinationId), destinationId);
    const values = Object.values(await redis.hgetall(keys.deadData(destinationId)));
    return { kept: kept === null ? null : Number(kept), actual: values.reduce((n, v) => n + Buffer.byteLength(v), 0) };
  }

  it('evicts the oldest beyond the byte cap while the count cap is far away, and keeps the total exact through rewrites, replays and purges', async () => {
    const keys = deliveryKeys(prefix);
    // Letters of about 20 KB (calls near the 32 KB intake limit are no rarer): three fit, not four.
    const size = bytesOf(letter('d', 1, 20_000));
    const store = new DeadLetterStore(redis, prefix, { maxPerDestination: 1000, maxBytesPerDestination: 3 * size + 100 });
    for (const n of [1, 2, 3])
      expect(await store.add(letter('d', n, 20_000))).toEqual({ evicted: 0, episodeBegan: false, bytes: n * size, byBytes: false });
    expect(await totals('d')).toEqual({ kept: 3 * size, actual: 3 * size });

    // The fourth evicts the oldest, as the count cap would: index, data and messageId entry together.
    expect(await store.add(letter('d', 4, 20_000))).toEqual({ evicted: 1, episodeBegan: true, bytes: 3 * size, byBytes: true });
    expect((await store.list('d', 10)).map((l) => l.jobId)).toEqual(['d-4', 'd-3', 'd-2']);
    expect((await redis.hkeys(keys.deadByMessage('d'))).sort()).toEqual(['m2', 'm3', 'm4']);
    expect(await redis.ttl(keys.deadEvicting('d'))).toBeGreaterThan(0);

    // One letter as large as two evicts two; small letters of another destination are untouched.
    await store.add(letter('other', 1));
    const big = bytesOf(letter('d', 5, 40_100));
    expect(await store.add(letter('d', 5, 40_100))).toEqual({ evicted: 2, episodeBegan: false, bytes: size + big, byBytes: true });
    expect((await store.list('d', 10)).map((l) => l.jobId)).toEqual(['d-5', 'd-4']);
    expect((await store.list('other', 10)).map((l) => l.jobId)).toEqual(['other-1']);
    expect(await totals('other')).toEqual({ kept: bytesOf(letter('other', 1)), actual: bytesOf(letter('other', 1)) });

    // The same letter written again (a job run twice) replaces its bytes, and a smaller one lowers them.
    expect(await store.add(letter('d', 4, 20_000))).toEqual({ evicted: 0, episodeBegan: false, bytes: size + big, byBytes: false });
    const smaller = bytesOf(letter('d', 4, 10));
    expect(await store.add(letter('d', 4, 10))).toMatchObject({ evicted: 0, bytes: smaller + big });
    expect(await totals('d')).toEqual({ kept: smaller + big, actual: smaller + big });

    // A letter alone larger than the cap is kept: only older letters are ever evicted for it.
    const huge = bytesOf(letter('d', 6, 100_000));
    expect(await store.add(letter('d', 6, 100_000))).toEqual({ evicted: 2, episodeBegan: false, bytes: huge, byBytes: true });
    expect((await store.list('d', 10)).map((l) => l.jobId)).toEqual(['d-6']);

    // Replayed (removed) and purged letters give their bytes back; none left, no field (the gauge
    // reads it as 0), and the next letter starts from nothing.
    expect(await store.remove('d', [letter('d', 6, 100_000)])).toBe(1);
    expect(await redis.hexists(keys.deadBytes('d'), 'd')).toBe(0);
    const [purged, replayed, last] = [letter('d', 7, 10, 'gone'), letter('d', 8, 10), letter('d', 9)];
    for (const l of [purged, replayed, last]) await store.add(l);
    const all = bytesOf(purged) + bytesOf(replayed) + bytesOf(last);
    expect(await totals('d')).toEqual({ kept: all, actual: all });
    expect(await store.remove('d', [replayed])).toBe(1);
    expect(await totals('d')).toEqual({ kept: all - bytesOf(replayed), actual: all - bytesOf(replayed) });
    expect(await purgeUserDeadLetters(redis, prefix, 'd', ['a'], ['gone'])).toBe(1);
    expect(await totals('d')).toEqual({ kept: bytesOf(last), actual: bytesOf(last) });
    expect(await store.allBytes()).toEqual(
      new Map([
        ['d', bytesOf(letter('d', 9))],
        ['other', bytesOf(letter('other', 1))],
      ]),
    );
  });

  it('evicts at most 200 letters per add for the byte cap, so a lowered cap is reached over the next adds, without a long script', async () => {
    const size = bytesOf(letter('d', 100));
    const before = new DeadLetterStore(redis, prefix, { maxPerDestination: 1000 });
    const tx = redis.pipeline();
    for (let n = 100; n < 350; n++) before.queueAdd(tx, letter('d', n));
    await tx.exec();
    // The byte cap lowered to ten letters: 240 must go.
    const store = new DeadLetterStore(redis, prefix, { maxPerDestination: 1000, maxBytesPerDestination: 10 * size });
    expect(await store.add(letter('d', 350))).toEqual({ evicted: 200, episodeBegan: true, bytes: 51 * size, byBytes: true });
    expect(await store.add(letter('d', 351))).toEqual({ evicted: 42, episodeBegan: false, bytes: 10 * size, byBytes: true });
    expect((await store.list('d', 1000)).map((l) => l.jobId)).toEqual(Array.from({ length: 10 }, (_, i) => `d-${351 - i}`));
  });

  it('sums the letters written before the byte total existed once, at the next add, and never trusts a total without letters', async () => {
    const keys = deliveryKeys(prefix);
    const size = bytesOf(letter('d', 1, 5000));
    // Two letters as the store wrote them before the byte cap: index, data, messageId entry, no total.
    for (const n of [1, 2]) {
      const l = letter('d', n, 5000);
      await redis.hset(keys.deadData('d'), l.jobId, JSON.stringify(l));
      await redis.zadd(keys.deadIndex('d'), Date.parse(l.deadAt), l.jobId);
      await redis.hset(keys.deadByMessage('d'), l.job.call.messageId, l.jobId);
    }
    const store = new DeadLetterStore(redis, prefix, { maxPerDestination: 1000, maxBytesPerDestination: 2 * size + 100 });
    // A removal while the total is unknown leaves it unknown, rather than starting it too low.
    await store.add(letter('x', 1));
    expect(await store.remove('d', [letter('d', 1, 5000)])).toBe(1);
    expect(await redis.hexists(keys.deadBytes('d'), 'd')).toBe(0);
    await redis.hset(keys.deadData('d'), 'd-1', JSON.stringify(letter('d', 1, 5000)));
    await redis.zadd(keys.deadIndex('d'), 1000, 'd-1');
    // The next add counts what is there: the third letter evicts the oldest.
    expect(await store.add(letter('d', 3, 5000))).toEqual({ evicted: 1, episodeBegan: true, bytes: 2 * size, byBytes: true });
    expect((await store.list('d', 10)).map((l) => l.jobId)).toEqual(['d-3', 'd-2']);
    expect(await totals('d')).toEqual({ kept: 2 * size, actual: 2 * size });

    // A total left behind its letters (a deleted destination's records removed apart from it) is not trusted.
    await redis.hset(keys.deadBytes('y'), 'y', 999_999_999);
    expect(await store.add(letter('y', 1))).toEqual({ evicted: 0, episodeBegan: false, bytes: bytesOf(letter('y', 1)), byBytes: false });
  });
});

describe('DeadLetterStore filtered pages', () => {
  let redis: Redis;
  let prefix: string;

  beforeEach(() => {
    redis = new Redis(SHARED_REDIS_URL, { maxRetriesPerRequest: 1 });
    prefix = uniquePrefix('dead-filter');
  });
  afterEach(async () => {
    await deletePrefix(SHARED_REDIS_URL, prefix);
    redis.disconnect();
  });

  it('looks at most 5,000 letters per page for q, with a cursor that goes on where it stopped', async () => {
    const store = new DeadLetterStore(redis, prefix, { maxPerDestination: 100_000 });
    // 5,100 letters; only the oldest (m1) matches. Written in one pipeline: the test is about reading.
    const tx = redis.pipeline();
    for (let n = 1; n <= 5100; n++) store.queueAdd(tx, { ...letter('d', n), lastError: n === 1 ? 'needle' : 'HTTP 400' });
    await tx.exec();

    const first = await store.page('d', { limit: 10, filter: { q: 'needle' } });
    expect(first.items).toEqual([]);
    expect(first.nextCursor).toBe(`${1000 * 101}_d-101`);
    const second = await store.page('d', { limit: 10, cursor: first.nextCursor!, filter: { q: 'needle' } });
    expect(second.items.map((l) => l.jobId)).toEqual(['d-1']);
    expect(second.nextCursor).toBeNull();
  });

  it('starts at until and stops at since through the index, both inclusive', async () => {
    const store = new DeadLetterStore(redis, prefix, { maxPerDestination: 100 });
    for (let n = 1; n <= 6; n++) await store.add(letter('d', n));
    const page = await store.page('d', { limit: 10, filter: { sinceMs: 2000, untilMs: 4000 } });
    expect(page.items.map((l) => l.jobId)).toEqual(['d-4', 'd-3', 'd-2']);
    expect(page.nextCursor).toBeNull();
    const paged = await store.page('d', { limit: 2, filter: { sinceMs: 2000, untilMs: 4000 } });
    expect(paged.items.map((l) => l.jobId)).toEqual(['d-4', 'd-3']);
    const rest = await store.page('d', { limit: 2, cursor: paged.nextCursor!, filter: { sinceMs: 2000, untilMs: 4000 } });
    expect(rest.items.map((l) => l.jobId)).toEqual(['d-2']);
  });
});

describe('RetryBacklog', () => {
  let redis: Redis;
  let prefix: string;

  beforeEach(() => {
    redis = new Redis(SHARED_REDIS_URL, { maxRetriesPerRequest: 1 });
    prefix = uniquePrefix('retry-backlog');
  });
  afterEach(async () => {
    await deletePrefix(SHARED_REDIS_URL, prefix);
    redis.disconnect();
  });

  /** Queues the changes on one MULTI, as a commit does, and reads their answers. */
  async function change(store: RetryBacklog, ...changes: [string, number, number, number?][]) {
    const tx = redis.multi();
    for (const [destinationId, delta, bytes, capped] of changes) store.queueChange(tx, destinationId, delta, bytes, capped);
    return ((await tx.exec()) ?? []).map(([err, value]) => {
      if (err) throw err;
      return store.changeOf(value);
    });
  }

  it('counts calls and bytes per destination, in one hash each, and removes a field that reaches 0', async () => {
    const store = new RetryBacklog(redis, prefix);
    const keys = deliveryKeys(prefix);
    expect(await change(store, ['d1', 3, 300], ['d2', 2, 50], ['d1', 4, 4000])).toEqual([
      { held: 3, bytes: 300, episodeBegan: false },
      { held: 2, bytes: 50, episodeBegan: false },
      { held: 7, bytes: 4300, episodeBegan: false },
    ]);
    expect(await store.held('d1')).toEqual({ calls: 7, bytes: 4300 });
    expect(await store.held('none')).toEqual({ calls: 0, bytes: 0 });
    expect(await store.all()).toEqual(
      new Map([
        ['d1', 7],
        ['d2', 2],
      ]),
    );
    expect(await store.allBytes()).toEqual(
      new Map([
        ['d1', 4300],
        ['d2', 50],
      ]),
    );
    // A held call's retry state grew: the bytes change alone.
    expect(await change(store, ['d1', 0, 20])).toEqual([{ held: 7, bytes: 4320, episodeBegan: false }]);
    expect(await change(store, ['d2', -2, -50], ['d1', -5, -4020])).toEqual([
      { held: 0, bytes: 0, episodeBegan: false },
      { held: 2, bytes: 300, episodeBegan: false },
    ]);
    expect(await redis.hkeys(keys.retryHeld('d1'))).toEqual(['d1']);
    expect(await redis.hkeys(keys.retryHeldBytes('d1'))).toEqual(['d1']);
    // Below 0 (a total lowered by hand while jobs held calls): reported, and the fields removed.
    expect(await change(store, ['d1', -3, -400])).toEqual([{ held: -1, bytes: -100, episodeBegan: false }]);
    expect(await redis.exists(keys.retryHeld('d1'))).toBe(0);
    expect(await redis.exists(keys.retryHeldBytes('d1'))).toBe(0);
  });

  it('reports one episode while the cap keeps dead-lettering, per destination', async () => {
    const store = new RetryBacklog(redis, prefix, 60);
    const keys = deliveryKeys(prefix);
    expect(await change(store, ['d', 5, 500])).toEqual([{ held: 5, bytes: 500, episodeBegan: false }]);
    // A change of 0 with calls capped reads the totals and marks the episode.
    expect(await change(store, ['d', 0, 0, 3], ['d', 1, 100, 2], ['other', 0, 0, 1])).toEqual([
      { held: 5, bytes: 500, episodeBegan: true },
      { held: 6, bytes: 600, episodeBegan: false },
      { held: 0, bytes: 0, episodeBegan: true },
    ]);
    expect(await redis.ttl(keys.retryCapping('d'))).toBeGreaterThan(0);
    expect(await redis.ttl(keys.retryCapping('d'))).toBeLessThanOrEqual(60);
    // Changes without calls capped neither begin nor renew an episode.
    await redis.expire(keys.retryCapping('d'), 5);
    expect(await change(store, ['d', -1, -100])).toEqual([{ held: 5, bytes: 500, episodeBegan: false }]);
    expect(await redis.ttl(keys.retryCapping('d'))).toBeLessThanOrEqual(5);
    // Capped again: the marker is renewed, still the same episode.
    expect(await change(store, ['d', 0, 0, 1])).toEqual([{ held: 5, bytes: 500, episodeBegan: false }]);
    expect(await redis.ttl(keys.retryCapping('d'))).toBeGreaterThan(5);
    // The marker gone (an hour without calls capped, here by hand): the next one begins an episode.
    await redis.del(keys.retryCapping('d'));
    expect(await change(store, ['d', 0, 0, 1])).toEqual([{ held: 5, bytes: 500, episodeBegan: true }]);
  });
});

describe('AttemptLog.eraseUsers', () => {
  let redis: Redis;
  let prefix: string;

  beforeEach(() => {
    redis = new Redis(SHARED_REDIS_URL, { maxRetriesPerRequest: 1 });
    prefix = uniquePrefix('attempt-erase');
  });
  afterEach(async () => {
    await deletePrefix(SHARED_REDIS_URL, prefix);
    redis.disconnect();
  });

  const attempt = (messageId: string, sourceId: string, userId?: string): DeliveryAttempt => ({
    destinationId: 'd',
    sourceId,
    messageId,
    url: 'https://example.com/hook',
    attempt: 1,
    outcome: 'retryable',
    status: 503,
    error: 'HTTP 503',
    latencyMs: 12.5,
    at: '2026-11-25T00:00:00.000Z',
    request: { method: 'POST', headers: { 'x-signature': 'abc' }, body: `{"userId":"${userId ?? ''}"}`, bodyTruncated: true },
    response: { headers: { 'content-type': 'text/plain' }, body: `no ${userId ?? ''}` },
    ...(userId !== undefined ? { userId } : {}),
  });

  it('erases the bodies and userId of the users’ calls from the given sources, in place, and keeps the rest', async () => {
    const log = new AttemptLog(redis, prefix, { maxPerDestination: 100, flushMs: 60_000 });
    const entries = [
      attempt('m1', 'a', 'gone'),
      attempt('m2', 'a', 'stays'),
      attempt('m3', 'b', 'gone'), // another source: not affected
      attempt('m4', 'a'),
      attempt('m5', 'a', 'gone'),
    ];
    for (const e of entries) log.record(e);
    await log.flush();
    const before = await log.page('d', { limit: 10 });

    expect(await log.eraseUsers('d', ['a'], ['gone', 'nobody'])).toBe(2);
    const after = await log.page('d', { limit: 10 });
    expect(after.nextCursor).toBe(before.nextCursor);
    const byId = new Map(after.items.map((a) => [a.messageId, a]));
    for (const id of ['m1', 'm5'])
      expect(byId.get(id)).toEqual({
        ...attempt(id, 'a'),
        request: { method: 'POST', headers: { 'x-signature': 'abc' }, body: '' },
        response: { headers: { 'content-type': 'text/plain' }, body: '' },
        erased: true,
      });
    expect(byId.get('m2')).toEqual(attempt('m2', 'a', 'stays'));
    expect(byId.get('m3')).toEqual(attempt('m3', 'b', 'gone'));
    expect(byId.get('m4')).toEqual(attempt('m4', 'a'));
    expect(after.items.map((a) => a.messageId)).toEqual(before.items.map((a) => a.messageId));
    await log.close();
  });

  it('erases through a log longer than one script reads, to its last entry', async () => {
    const log = new AttemptLog(redis, prefix, { maxPerDestination: 5000, flushMs: 60_000 });
    // 1,203 entries: every 100th is the user's, so matches sit in each 500-entry slice and in the last, short one.
    for (let i = 0; i < 1203; i++) log.record(attempt(`m${i}`, 'a', i % 100 === 0 || i === 1202 ? 'gone' : 'stays'));
    await log.flush();
    expect(await log.eraseUsers('d', ['a'], ['gone'])).toBe(14);
    const all = (await redis.lrange(deliveryKeys(prefix).attempts('d'), 0, -1)).map((e) => JSON.parse(e) as DeliveryAttempt);
    expect(all).toHaveLength(1203);
    expect(all.filter((a) => a.erased).length).toBe(14);
    expect(all.filter((a) => a.userId === 'gone')).toEqual([]);
    await log.close();
  });
});
