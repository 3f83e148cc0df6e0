import { judgeMemory, parseInfoMemory } from './memory-guard.js';

describe('judgeMemory', () => {
  it('does not guard a Redis without maxmemory', () => {
    expect(judgeMemory({ used: 10_000_000_000, max: 0 }, 0.9)).toEqual({ kind: 'unbounded' });
  });

  it.each([
    [0, 'ok'],
    [899, 'ok'],
    [900, 'overloaded'],
    [1000, 'overloaded'],
    // used_memory can pass maxmemory (Redis frees lazily): still overloaded, ratio above 1.
    [1200, 'overloaded'],
  ])('used %i of 1000 at a 0.9 limit is %s', (used, kind) => {
    expect(judgeMemory({ used, max: 1000 }, 0.9)).toEqual({ kind, ratio: used / 1000 });
  });

  it('with a limit of 1 refuses only once Redis is full', () => {
    expect(judgeMemory({ used: 999, max: 1000 }, 1).kind).toBe('ok');
    expect(judgeMemory({ used: 1000, max: 1000 }, 1).kind).toBe('overloaded');
  });
});

describe('parseInfoMemory', () => {
  const info = [
    '# Memory',
    'used_memory:1048576',
    'used_memory_human:1.00M',
    'used_memory_rss:5000000',
    'used_memory_peak:2000000',
    'maxmemory:8388608',
    'maxmemory_human:8.00M',
    'maxmemory_policy:noeviction',
    '',
  ].join('\r\n');

  it('reads used_memory and maxmemory, not the fields that share their prefix', () => {
    expect(parseInfoMemory(info)).toEqual({ used: 1_048_576, max: 8_388_608 });
  });

  it('reads maxmemory 0 as no limit', () => {
    expect(parseInfoMemory('used_memory:5\r\nmaxmemory:0\r\n')).toEqual({ used: 5, max: 0 });
  });

  it.each(['', '# Memory\r\nused_memory:5\r\n', 'maxmemory:5\r\n', 'used_memory:x\r\nmaxmemory:5'])('is undefined for %j', (text) => {
    expect(parseInfoMemory(text)).toBeUndefined();
  });
});
