/**
 * ConfigStore against real Redis: the compare-and-set commit, write keys moving between sources,
 * what deleting erases, and the config-file upsert that keeps stored secrets.
 */
import { Redis } from 'ioredis';
import { keyspace, type Destination, type Source } from '@eventrelay/config';
import { ConfigStore, configKeys } from '../src/config-store';
import { DeadLetterStore, deliveryKeys } from '../src/delivery-records';
import { readCapped } from '../src/capped-log';
import { sourceEventsKey } from '../src/operator-logs';
import { deletePrefix, SHARED_REDIS_URL, uniquePrefix } from '@eventrelay/testkit';

const source = (id: string, writeKey: string): Source => ({ id, name: id, type: 'server', writeKey });
const hooks = (id: string, sharedSecret?: string): Destination => ({
  id,
  name: 'Webhooks',
  enabled: true,
  sourceIds: ['a'],
  settings: { webhooks: [{ url: 'https://x.example' }], ...(sharedSecret ? { sharedSecret } : {}) },
});

describe('ConfigStore', () => {
  let redis: Redis;
  let prefix: string;
  let store: ConfigStore;

  beforeEach(() => {
    redis = new Redis(SHARED_REDIS_URL, { maxRetriesPerRequest: 1 });
    prefix = uniquePrefix('store');
    store = new ConfigStore(redis, prefix, { auditMax: 3 });
  });
  /** What a test put beside the prefix, removed after it. */
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0)) await cleanup();
    await deletePrefix(SHARED_REDIS_URL, prefix);
    redis.disconnect();
  });

  it('commits only against the version it was planned on', async () => {
    const v1 = await store.commit(0, [{ kind: 'put-source', source: source('a', 'key-a-0000') }]);
    expect(v1).toBe(1);
    expect(await store.commit(0, [{ kind: 'put-source', source: source('b', 'key-b-0000') }])).toBeUndefined();
    const snapshot = await store.snapshot();
    expect([snapshot.version, [...snapshot.sources.keys()]]).toEqual([1, ['a']]);
  });

  it('moves a write key from one source to another in one commit', async () => {
    await store.apply({ sources: [source('a', 'key-1-0000'), source('b', 'key-2-0000')], destinations: [], audiences: [] });
    await store.apply({ sources: [source('a', 'key-2-0000'), source('b', 'key-3-0000')], destinations: [], audiences: [] });
    expect((await store.sourceByWriteKey('key-2-0000'))?.id).toBe('a');
    expect((await store.sourceByWriteKey('key-3-0000'))?.id).toBe('b');
    expect(await store.sourceByWriteKey('key-1-0000')).toBeUndefined();
  });

  it('refuses a config whose write key belongs to a source it does not name', async () => {
    await store.apply({ sources: [source('a', 'key-1-0000')], destinations: [], audiences: [] });
    await expect(store.apply({ sources: [source('b', 'key-1-0000')], destinations: [], audiences: [] })).rejects.toThrow(
      'its writeKey already belongs to source "a"',
    );
    expect((await store.snapshot()).sources.has('b')).toBe(false);
  });

  it('keeps a stored secret when the applied file has none, and replaces it when it has one', async () => {
    await store.apply({ sources: [source('a', 'key-1-0000')], destinations: [hooks('d', 'first-secret')], audiences: [] });
    await store.apply({ sources: [], destinations: [hooks('d')], audiences: [] });
    expect((await store.snapshot()).destinations.get('d')?.settings.sharedSecret).toBe('first-secret');
    await store.apply({ sources: [], destinations: [hooks('d', 'second-secret')], audiences: [] });
    expect((await store.snapshot()).destinations.get('d')?.settings.sharedSecret).toBe('second-secret');
  });

  it('erases what belongs to a deleted destination or source in the same commit', async () => {
    await store.apply({ sources: [source('a', 'key-1-0000')], destinations: [hooks('d')], audiences: [] });
    const records = deliveryKeys(prefix);
    await redis.lpush(records.attempts('d'), '{}');
    await redis.set(`${records.attempts('d')}:seq`, 1);
    await redis.lpush(sourceEventsKey(prefix, 'a'), '{}');
    const letters = new DeadLetterStore(redis, prefix, { maxPerDestination: 10 });
    const call = { type: 'track' as const, messageId: 'm1', userId: 'u', event: 'E', timestamp: 't', receivedAt: 't' };
    await letters.add({
      jobId: 'd-1',
      job: { sourceId: 'a', destinationId: 'd', call },
      attempts: 1,
      lastError: 'x',
      urls: [],
      firstAttemptAt: 't',
      deadAt: new Date().toISOString(),
    });
    expect(await redis.hexists(records.deadBytes('d'), 'd')).toBe(1);
    const snapshot = await store.snapshot();
    const source0 = snapshot.sources.get('a')!;
    await store.commit(snapshot.version, [
      { kind: 'delete-destination', id: 'd' },
      { kind: 'delete-source', source: source0 },
    ]);
    // The byte total of its dead letters went too (its field of the dead-bytes hash).
    const left = await redis.keys(`${prefix}:*`);
    expect(left.sort()).toEqual([configKeys(prefix).version].sort());
  });

  it('erases the records of a deleted destination or source on their shards too, right after the commit', async () => {
    const keys = keyspace(prefix, 4);
    cleanups.push(async () => {
      for (const shard of keys.prefixes) await deletePrefix(SHARED_REDIS_URL, shard);
    });
    const sharded = new ConfigStore(redis, prefix, { keys });
    await sharded.apply({ sources: [source('a', 'key-1-0000')], destinations: [hooks('d')], audiences: [] });
    const records = deliveryKeys(keys);
    expect(records.attempts('d').startsWith(keys.destinationPrefix('d'))).toBe(true);
    await redis.lpush(records.attempts('d'), '{}');
    await redis.set(`${records.attempts('d')}:seq`, 1);
    await redis.lpush(sourceEventsKey(keys, 'a'), '{}');
    await redis.hset(records.deadData('d'), 'd-1', '{}');
    await redis.hset(records.deadBytes('d'), 'd', 2);
    const snapshot = await sharded.snapshot();
    await sharded.commit(snapshot.version, [
      { kind: 'delete-destination', id: 'd' },
      { kind: 'delete-source', source: snapshot.sources.get('a')! },
    ]);
    expect(await redis.keys(`${prefix}:*`)).toEqual([configKeys(prefix).version]);
    for (const shard of keys.prefixes) expect(await redis.keys(`${shard}:*`)).toEqual([]);
  });

  it('appends audit entries with the change and keeps only the newest auditMax', async () => {
    for (let i = 0; i < 5; i++) {
      const version = await store.version();
      await store.commit(
        version,
        [{ kind: 'put-source', source: source(`s${i}`, `key-${i}-0000`) }],
        [{ at: 't', tokenId: 'tok_00000000', action: 'source.create', targetId: `s${i}` }],
      );
    }
    const page = await readCapped<{ targetId: string }>(redis, `${prefix}:audit`, { limit: 10 });
    expect(page.items.map((e) => e.targetId)).toEqual(['s4', 's3', 's2']);
  });

  it('plans again when another process wrote first', async () => {
    let plans = 0;
    const result = await store.update((snapshot) => {
      plans++;
      // The first plan loses: another writer bumps the version between snapshot and commit.
      if (plans === 1) void redis.incr(configKeys(prefix).version);
      return { changes: [{ kind: 'put-source', source: source('a', 'key-a-0000') }], result: snapshot.version };
    });
    expect(plans).toBe(2);
    expect(result).toBe(1);
  });
});

describe('capped logs', () => {
  let redis: Redis;
  let prefix: string;
  beforeEach(() => {
    redis = new Redis(SHARED_REDIS_URL, { maxRetriesPerRequest: 1 });
    prefix = uniquePrefix('capped');
  });
  afterEach(async () => {
    await deletePrefix(SHARED_REDIS_URL, prefix);
    redis.disconnect();
  });

  it('pages newest first without repeats or gaps while entries arrive and the tail is trimmed', async () => {
    const key = `${prefix}:log`;
    const push = async (from: number, to: number) => {
      const tx = redis.multi();
      for (let n = from; n < to; n++) tx.lpush(key, JSON.stringify({ n })).ltrim(key, 0, 49).incr(`${key}:seq`);
      await tx.exec();
    };
    await push(0, 30);
    const seen: number[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await readCapped<{ n: number }>(redis, key, { limit: 7, cursor });
      seen.push(...page.items.map((e) => e.n));
      cursor = page.nextCursor ?? undefined;
      if (pages++ === 0) await push(30, 45); // newer entries must not shift the next page
    } while (cursor);
    expect(seen).toEqual(Array.from({ length: 30 }, (_, i) => 29 - i));
  });

  it('filters, scanning a bounded number of entries per call and saying where to go on', async () => {
    const key = `${prefix}:log`;
    await redis.lpush(key, ...Array.from({ length: 300 }, (_, n) => JSON.stringify({ n, odd: n % 2 === 1 })));
    const first = await readCapped<{ n: number; odd: boolean }>(redis, key, { limit: 5, match: (e) => e.odd && e.n < 10, scanLimit: 100 });
    expect(first.items).toEqual([]);
    expect(first.nextCursor).not.toBeNull();
    let cursor = first.nextCursor ?? undefined;
    const found: number[] = [];
    while (cursor) {
      const page = await readCapped<{ n: number; odd: boolean }>(redis, key, {
        limit: 5,
        cursor,
        match: (e) => e.odd && e.n < 10,
        scanLimit: 100,
      });
      found.push(...page.items.map((e) => e.n));
      cursor = page.nextCursor ?? undefined;
    }
    expect(found).toEqual([9, 7, 5, 3, 1]);
  });
});
