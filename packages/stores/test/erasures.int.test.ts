/**
 * Deletion tombstones against real Redis: recorded per (source, user) without the user id in
 * clear, a later erasure wins, looked up in order, and pruned once older than the 37 days a call
 * can still wait in a delivery job.
 */
import { Redis } from 'ioredis';
import { ErasureTombstones } from '../src/erasures';
import { profileKeys } from '../src/profile-keys';
import { deletePrefix, SHARED_REDIS_URL, uniquePrefix } from '@eventrelay/testkit';

const DAY = 86_400_000;
const T = Date.parse('2026-11-21T09:30:00.000Z');

describe('ErasureTombstones', () => {
  let redis: Redis;
  let prefix: string;

  beforeEach(() => {
    redis = new Redis(SHARED_REDIS_URL, { maxRetriesPerRequest: 1 });
    prefix = uniquePrefix('tombstones');
  });
  afterEach(async () => {
    await deletePrefix(SHARED_REDIS_URL, prefix);
    redis.disconnect();
  });

  it('records each (source, user) once with the latest erasure time, and never the user id in clear', async () => {
    const tombstones = new ErasureTombstones(redis, prefix);
    expect(await tombstones.count()).toBe(0);
    await tombstones.record(['src-a', 'src-b'], ['alice-secret-id', 'bob-secret-id'], T);
    await tombstones.record(['src-a'], ['alice-secret-id'], T + 5);
    // An older time does not undo a later erasure.
    await tombstones.record(['src-b'], ['bob-secret-id'], T - 5);
    expect(await tombstones.count()).toBe(4);
    expect(
      await tombstones.erasedAt([
        { sourceId: 'src-a', userId: 'alice-secret-id' },
        { sourceId: 'src-c', userId: 'alice-secret-id' },
        { sourceId: 'src-b', userId: 'bob-secret-id' },
        { sourceId: 'src-b', userId: 'carol' },
        { sourceId: 'src-b', userId: 'alice-secret-id' },
      ]),
    ).toEqual([T + 5, undefined, T, undefined, T]);
    expect(await tombstones.erasedAt([])).toEqual([]);
    const stored = await redis.zrange(profileKeys(prefix).erased, 0, -1);
    expect(stored).toHaveLength(4);
    for (const member of stored) expect(member).toMatch(/^[A-Za-z0-9_-]{22}$/);
  });

  it('records a page of 500 users over 3 sources (more members than one ZADD takes)', async () => {
    const tombstones = new ErasureTombstones(redis, prefix);
    const users = Array.from({ length: 500 }, (_, i) => `user-${i}`);
    await tombstones.record(['s1', 's2', 's3'], users, T);
    expect(await tombstones.count()).toBe(1500);
    expect(await tombstones.erasedAt([{ sourceId: 's3', userId: 'user-499' }])).toEqual([T]);
  });

  it('prunes only the tombstones older than 37 days', async () => {
    const tombstones = new ErasureTombstones(redis, prefix);
    await tombstones.record(['src'], ['old'], T - 37 * DAY - 1);
    await tombstones.record(['src'], ['edge'], T - 37 * DAY);
    await tombstones.record(['src'], ['recent'], T - DAY);
    expect(await tombstones.prune(T)).toBe(1);
    expect(
      await tombstones.erasedAt([
        { sourceId: 'src', userId: 'old' },
        { sourceId: 'src', userId: 'edge' },
        { sourceId: 'src', userId: 'recent' },
      ]),
    ).toEqual([undefined, T - 37 * DAY, T - DAY]);
    expect(await tombstones.prune(T)).toBe(0);
  });
});
