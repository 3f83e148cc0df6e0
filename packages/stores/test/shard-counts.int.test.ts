/**
 * Counts copied to every shard against real Redis: the tombstones' count read on a job's own shard,
 * a newer version never overwritten by an older one, and no copy at all with one shard.
 */
import { Redis } from 'ioredis';
import { keyspace, type Keyspace } from '@eventrelay/config';
import { ErasureTombstones } from '../src/erasures';
import { ShardCounts } from '../src/shard-counts';
import { deletePrefix, SHARED_REDIS_URL, uniquePrefix } from '@eventrelay/testkit';

const T = Date.parse('2026-11-25T09:30:00.000Z');

describe('ShardCounts', () => {
  let redis: Redis;
  let keys: Keyspace;

  beforeEach(() => {
    redis = new Redis(SHARED_REDIS_URL, { maxRetriesPerRequest: 1 });
    keys = keyspace(uniquePrefix('copies'), 3);
  });
  afterEach(async () => {
    for (const prefix of [keys.home, ...keys.prefixes]) await deletePrefix(SHARED_REDIS_URL, prefix);
    redis.disconnect();
  });

  it('copies the tombstones’ count to every shard, where a delivery job reads it', async () => {
    const tombstones = new ErasureTombstones(redis, keys);
    for (const shard of keys.prefixes) expect(await tombstones.count(shard)).toBe(0);
    await tombstones.record(['src-a', 'src-b'], ['alice', 'bob'], T);
    for (const shard of keys.prefixes) expect(await tombstones.count(shard)).toBe(4);
    // The home count itself, for a reader without a shard.
    expect(await tombstones.count()).toBe(4);
    // Pruned once they can no longer matter: the copies follow.
    expect(await tombstones.prune(T + 40 * 86_400_000)).toBe(4);
    for (const shard of keys.prefixes) expect(await tombstones.count(shard)).toBe(0);
  });

  it('keeps the newer of two publications, whatever order they reach a shard in', async () => {
    const counts = new ShardCounts(redis, keys, 'test');
    const home = `${keys.home}:test-set`;
    await redis.sadd(home, 'a');
    await counts.publish((tx) => tx.scard(home));
    await redis.sadd(home, 'b', 'c');
    await counts.publish((tx) => tx.scard(home));
    // An older publication arriving late (version 1, count 1) changes nothing.
    const script = redis as unknown as { keepNewerCount(...args: (string | number)[]): Promise<number> };
    expect(await script.keepNewerCount(1, `${keys.prefixes[0]}:copies`, 'test', 1, 1)).toBe(0);
    for (const shard of keys.prefixes) expect(await counts.read(shard)).toBe(3);
  });

  it('copies nothing with one shard: readers count the home key', async () => {
    const one = keyspace(keys.home);
    const tombstones = new ErasureTombstones(redis, one);
    await tombstones.record(['src-a'], ['alice'], T);
    expect(await tombstones.count(one.prefixes[0])).toBe(1);
    expect(await redis.exists(`${keys.home}:copies`)).toBe(0);
  });
});
