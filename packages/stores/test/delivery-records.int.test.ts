/**
 * DeadLetterStore against real Redis: the per-destination cap evicts the oldest letters, keeps the
 * index, the data and the messageId index in step, and tells when an episode of evictions began.
 */
import { Redis } from 'ioredis';
import type { DeadLetter } from '@eventrelay/config';
import { DeadLetterStore, deliveryKeys } from '../src/delivery-records';
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
