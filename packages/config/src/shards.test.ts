import { keySlot, keyspace, parseShardList } from './shards';

describe('keySlot', () => {
  it.each([
    ['foo', 12182],
    ['123456789', 12739],
    // What CLUSTER KEYSLOT answers on Redis 7.0.
    ['{user1000}.following', 3443],
    ['foo{}{bar}', 8363],
    ['foo{{bar}}zap', 4015],
    ['{eventrelay}:cfg:sources', 15008],
  ])('maps %s to the slot Redis Cluster does', (key, slot) => {
    expect(keySlot(key)).toBe(slot);
  });

  it('hashes only the first non-empty {tag}', () => {
    expect(keySlot('{eventrelay}:cfg:sources')).toBe(keySlot('eventrelay'));
    expect(keySlot('{a}{b}')).toBe(keySlot('a'));
    expect(keySlot('x{}y')).not.toBe(keySlot(''));
  });
});

describe('keyspace', () => {
  it('keeps the prefix itself as the only shard when there is one', () => {
    const k = keyspace('{eventrelay}');
    expect(k.prefixes).toEqual(['{eventrelay}']);
    expect(k.sourcePrefix('any')).toBe('{eventrelay}');
    expect(k.destinationPrefix('any')).toBe('{eventrelay}');
  });

  it('gives each of N shards a tag of its own whose slot is in its N-th of the slot range', () => {
    const k = keyspace('{eventrelay}', 12);
    expect(new Set(k.prefixes).size).toBe(12);
    k.prefixes.forEach((prefix, i) => {
      expect(prefix).toMatch(new RegExp(`^\\{eventrelay\\.${i}\\.\\d+\\}$`));
      expect(Math.floor((keySlot(`${prefix}:deliver:wait`) * 12) / 16384)).toBe(i);
    });
  });

  it('keeps what surrounds the tag, and makes one from a prefix without', () => {
    expect(keyspace('{er}-prod', 2).prefixes.every((p) => /^\{er\.\d\.\d+\}-prod$/.test(p))).toBe(true);
    expect(keyspace('eventrelay', 2).prefixes.every((p) => /^\{eventrelay\.\d\.\d+\}$/.test(p))).toBe(true);
  });

  it('is the same in every process and puts an id always on the same shard', () => {
    expect(keyspace('{x}', 6).prefixes).toEqual(keyspace('{x}', 6).prefixes);
    const k = keyspace('{x}', 6);
    expect(k.deliverShardOf('dst_1')).toBe(k.deliverShardOf('dst_1'));
    expect(k.destinationPrefix('dst_1')).toBe(k.prefixes[k.deliverShardOf('dst_1')]);
  });

  it('spreads ids evenly over the shards', () => {
    const k = keyspace('{x}', 12);
    const counts = new Array<number>(12).fill(0);
    for (let i = 0; i < 12_000; i++) counts[k.routeShardOf(`src_${i}`)]!++;
    for (const n of counts) expect(Math.abs(n - 1000)).toBeLessThan(150);
  });

  it('spreads ids that differ only in a counter evenly over the thirds of the shards (the primaries of a 3-primary cluster)', () => {
    const k = keyspace('{x}', 12);
    const perThird = [0, 0, 0];
    for (let i = 0; i < 240; i++) for (const id of [`src-${i}`, `dest-${i}`]) perThird[Math.floor((k.routeShardOf(id) * 3) / 12)]!++;
    for (const n of perThird) expect(Math.abs(n - 160)).toBeLessThan(20);
  });

  it('refuses a shard count that is not a whole number of at least 1', () => {
    expect(() => keyspace('x', 0)).toThrow(RangeError);
    expect(() => keyspace('x', 1.5)).toThrow(RangeError);
  });
});

describe('parseShardList', () => {
  it('reads all, numbers and ranges, sorted and without repeats', () => {
    expect(parseShardList('all', 3)).toEqual([0, 1, 2]);
    expect(parseShardList(' 4-5, 0,2 ,5', 6)).toEqual([0, 2, 4, 5]);
  });

  it.each([
    ['0,x', 'must be "all" or shard numbers and ranges such as 0,2,4-7, got "x"'],
    ['3-2', 'has the range "3-2" that ends before it starts'],
    ['0-6', 'names shard 6, but EVENTRELAY_SHARDS is 6 (shards 0 to 5)'],
  ])('says what is wrong with %s', (raw, why) => {
    expect(parseShardList(raw, 6)).toBe(why);
  });
});
