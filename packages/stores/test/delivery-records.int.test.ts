/**
 * DeadLetterStore against real Redis: the per-destination cap evicts the oldest letters, keeps the
 * index, the data and the messageId index in step, and tells when an episode of evictions began.
 * RetryBacklog: the per-destination count of calls held for a retry, changed on a MULTI, its field
 * removed at 0, and the episodes of the cap. AttemptLog.eraseUsers: a deletion erases bodies in place.
 */
import { Redis } from 'ioredis';
import type { DeadLetter, DeliveryAttempt } from '@eventrelay/config';
import { AttemptLog, DeadLetterStore, RetryBacklog, deliveryKeys } from '../src/delivery-records';
import { deletePrefix, SHARED_REDIS_URL, sleep, uniquePrefix } from '@eventrelay/testkit';

function letter(destinationId: string, n: number): DeadLetter {
  return {
    jobId: `${destinationId}-${n}`,
    job: {
      sourceId: 'a',
      destinationId,
      call: { type: 'track', messageId: `m${n}`, userId: 'u', event: 'E', timestamp: 't', receivedAt: 't' },
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
    const store = new DeadLetterStore(redis, prefix, 2, 1);
    const keys = deliveryKeys(prefix);
    expect(await store.add(letter('d', 1))).toEqual({ evicted: 0, episodeBegan: false });
    expect(await store.add(letter('d', 2))).toEqual({ evicted: 0, episodeBegan: false });
    expect(await store.add(letter('other', 1))).toEqual({ evicted: 0, episodeBegan: false });
    expect(await store.add(letter('d', 3))).toEqual({ evicted: 1, episodeBegan: true });
    expect(await store.add(letter('d', 4))).toEqual({ evicted: 1, episodeBegan: false });
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
    expect(await store.add(letter('d', 5))).toEqual({ evicted: 1, episodeBegan: true });
  });

  it('reads the answer of a write queued on a MULTI', async () => {
    const store = new DeadLetterStore(redis, prefix, 1);
    await store.add(letter('d', 1));
    const tx = redis.multi();
    store.queueAdd(tx, letter('d', 2));
    store.queueAdd(tx, letter('d', 3));
    const answers = ((await tx.exec()) ?? []).map(([err, value]) => {
      if (err) throw err;
      return store.evictionOf(value);
    });
    expect(answers).toEqual([
      { evicted: 1, episodeBegan: true },
      { evicted: 1, episodeBegan: false },
    ]);
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
    const store = new DeadLetterStore(redis, prefix, 100_000);
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
    const store = new DeadLetterStore(redis, prefix, 100);
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
  async function change(store: RetryBacklog, ...changes: [string, number, number?][]) {
    const tx = redis.multi();
    for (const [destinationId, delta, capped] of changes) store.queueChange(tx, destinationId, delta, capped);
    return ((await tx.exec()) ?? []).map(([err, value]) => {
      if (err) throw err;
      return store.changeOf(value);
    });
  }

  it('counts per destination, in one hash, and removes a field that reaches 0', async () => {
    const store = new RetryBacklog(redis, prefix);
    const keys = deliveryKeys(prefix);
    expect(await change(store, ['d1', 3], ['d2', 2], ['d1', 4])).toEqual([
      { held: 3, episodeBegan: false },
      { held: 2, episodeBegan: false },
      { held: 7, episodeBegan: false },
    ]);
    expect(await store.held('d1')).toBe(7);
    expect(await store.held('none')).toBe(0);
    expect(await store.all()).toEqual(
      new Map([
        ['d1', 7],
        ['d2', 2],
      ]),
    );
    expect(await change(store, ['d2', -2], ['d1', -5])).toEqual([
      { held: 0, episodeBegan: false },
      { held: 2, episodeBegan: false },
    ]);
    expect(await redis.hkeys(keys.retryHeld('d1'))).toEqual(['d1']);
    // Below 0 (a count lowered by hand while jobs held calls): reported, and the field removed.
    expect(await change(store, ['d1', -3])).toEqual([{ held: -1, episodeBegan: false }]);
    expect(await redis.exists(keys.retryHeld('d1'))).toBe(0);
  });

  it('reports one episode while the cap keeps dead-lettering, per destination', async () => {
    const store = new RetryBacklog(redis, prefix, 60);
    const keys = deliveryKeys(prefix);
    expect(await change(store, ['d', 5])).toEqual([{ held: 5, episodeBegan: false }]);
    // A change of 0 with calls capped reads the count and marks the episode.
    expect(await change(store, ['d', 0, 3], ['d', 1, 2], ['other', 0, 1])).toEqual([
      { held: 5, episodeBegan: true },
      { held: 6, episodeBegan: false },
      { held: 0, episodeBegan: true },
    ]);
    expect(await redis.ttl(keys.retryCapping('d'))).toBeGreaterThan(0);
    expect(await redis.ttl(keys.retryCapping('d'))).toBeLessThanOrEqual(60);
    // Changes without calls capped neither begin nor renew an episode.
    await redis.expire(keys.retryCapping('d'), 5);
    expect(await change(store, ['d', -1])).toEqual([{ held: 5, episodeBegan: false }]);
    expect(await redis.ttl(keys.retryCapping('d'))).toBeLessThanOrEqual(5);
    // Capped again: the marker is renewed, still the same episode.
    expect(await change(store, ['d', 0, 1])).toEqual([{ held: 5, episodeBegan: false }]);
    expect(await redis.ttl(keys.retryCapping('d'))).toBeGreaterThan(5);
    // The marker gone (an hour without calls capped, here by hand): the next one begins an episode.
    await redis.del(keys.retryCapping('d'));
    expect(await change(store, ['d', 0, 1])).toEqual([{ held: 5, episodeBegan: true }]);
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
