import { fullestOf, judgeMemory, parseInfoMemory, storedBytesOf } from './memory-guard.js';

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

describe('judgeMemory between samples', () => {
  it('counts what this process stored since the sample as if Redis held it already', () => {
    expect(judgeMemory({ used: 800, max: 1000 }, 0.9, 99).kind).toBe('ok');
    expect(judgeMemory({ used: 800, max: 1000 }, 0.9, 100)).toEqual({ kind: 'overloaded', ratio: 0.8 });
  });

  it('keeps a flush in flight of room below maxmemory, whatever the ratio', () => {
    // 90% of 16 MB is 14.4 MB, but a 3 MB flush from there would pass 16 MB: refuse from 13 MB.
    const MB = 1024 * 1024;
    expect(judgeMemory({ used: 13 * MB - 1, max: 16 * MB }, 0.9, 0, 3 * MB).kind).toBe('ok');
    expect(judgeMemory({ used: 13 * MB, max: 16 * MB }, 0.9, 0, 3 * MB).kind).toBe('overloaded');
    // With room to spare the ratio decides.
    expect(judgeMemory({ used: 900 * MB, max: 1000 * MB }, 0.9, 0, 3 * MB).kind).toBe('overloaded');
    expect(judgeMemory({ used: 899 * MB, max: 1000 * MB }, 0.9, 0, 3 * MB).kind).toBe('ok');
  });

  it('prices a stored request at its body and, per new call, a route entry and a dedupe claim', () => {
    expect(storedBytesOf(10_000, 0)).toBe(10_000);
    expect(storedBytesOf(10_000, 50)).toBe(30_000);
  });
});

describe('fullestOf', () => {
  it('is overloaded when any primary is, even one less full than another', () => {
    expect(
      fullestOf([
        { kind: 'ok', ratio: 0.8 },
        { kind: 'overloaded', ratio: 0.7 },
      ]),
    ).toEqual({ kind: 'overloaded', ratio: 0.8 });
    expect(
      fullestOf([
        { kind: 'ok', ratio: 0.5 },
        { kind: 'ok', ratio: 0.6 },
      ]),
    ).toEqual({ kind: 'ok', ratio: 0.6 });
    expect(fullestOf([])).toBeUndefined();
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
