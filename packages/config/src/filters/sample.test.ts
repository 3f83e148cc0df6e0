import { compileCondition } from './call-condition.js';
import { hashCodeUnits as stableHash } from '../hash32.js';
import { compileSample, sampleBucket, sampleId } from './sample.js';

describe('stableHash and sampleBucket', () => {
  // Pinned: a change of hash silently moves users in and out of every sample in production.
  // The values were computed independently (FNV-1a over UTF-16LE code units, murmur3 fmix32, in Python).
  it.each<[string, number, number]>([
    ['', 0xab3e7c0b, 8923],
    ['u-1', 0x0bb65919, 9737],
    ['user_42', 0xb0bd97a0, 5136],
    ['0e1f7c2a-3b4d-4e5f-8a9b-0c1d2e3f4a5b', 0x333f185f, 3023],
    ['Zoë 😀', 0x8776173f, 3359],
  ])('%j hashes to a fixed value', (id, hash, bucket) => {
    expect(stableHash(id)).toBe(hash);
    expect(sampleBucket(id)).toBe(bucket);
  });

  it('gives the same answer every time', () => {
    const first = Array.from({ length: 100 }, (_, i) => sampleBucket(`user-${i}`));
    for (let round = 0; round < 3; round++) expect(Array.from({ length: 100 }, (_, i) => sampleBucket(`user-${i}`))).toEqual(first);
  });
});

describe('compileSample', () => {
  it.each<[string, (i: number) => string]>([
    ['sequential ids', (i) => `user-${i}`],
    ['numeric ids', (i) => String(i)],
    ['uuid-like ids', (i) => `${((i * 2654435761) >>> 0).toString(16).padStart(8, '0')}-4e5f-8a9b-${i.toString(16).padStart(12, '0')}`],
  ])('passes about the percent of 100 000 %s', (_name, ids) => {
    const calls = Array.from({ length: 100_000 }, (_, i) => ({ userId: ids(i) }));
    const share = (percent: number): number => {
      const sample = compileSample(percent);
      return calls.filter((call) => sample(call)).length / calls.length;
    };
    const ten = share(10);
    expect(ten).toBeGreaterThanOrEqual(0.095);
    expect(ten).toBeLessThanOrEqual(0.105);
    const half = share(50);
    expect(half).toBeGreaterThanOrEqual(0.49);
    expect(half).toBeLessThanOrEqual(0.51);
  });

  it('nests: every user in a 10% sample is in the 20% sample', () => {
    const ten = compileSample(10);
    const twenty = compileSample(20);
    for (let i = 0; i < 10_000; i++) {
      const call = { userId: `user-${i}` };
      if (ten(call)) expect(twenty(call)).toBe(true);
    }
  });

  it('is all or nothing at 100 and 0, even for a call with no id', () => {
    for (const call of [{ userId: 'u-1' }, { anonymousId: 'a-1' }, {}]) {
      expect(compileSample(100)(call)).toBe(true);
      expect(compileSample(0)(call)).toBe(false);
    }
  });

  it('passes no call without an id below 100', () => {
    expect(compileSample(99.99)({})).toBe(false);
    expect(compileSample(99.99)({ userId: '', anonymousId: '' })).toBe(false);
    expect(compileSample(99.99)({ userId: 42 })).toBe(false);
  });

  it('decides by the bucket: below percent × 100 passes', () => {
    const id = 'user-7';
    const bucket = sampleBucket(id);
    expect(compileSample((bucket + 1) / 100)({ userId: id })).toBe(true);
    expect(compileSample(bucket / 100)({ userId: id })).toBe(false);
  });

  it('hashes the userId, else the anonymousId', () => {
    expect(sampleId({ userId: 'u-1', anonymousId: 'a-1' })).toBe('u-1');
    expect(sampleId({ userId: '', anonymousId: 'a-1' })).toBe('a-1');
    expect(sampleId({ userId: null, anonymousId: 'a-1' })).toBe('a-1');
    expect(sampleId({ anonymousId: '' })).toBeUndefined();
    expect(sampleId({})).toBeUndefined();
    const anonymous = compileSample(50);
    const user = compileCondition({ sample: { percent: 50 } });
    for (let i = 0; i < 200; i++) {
      expect(anonymous({ anonymousId: `a-${i}`, userId: '' })).toBe(sampleBucket(`a-${i}`) < 5000);
      expect(user({ anonymousId: `a-${i}`, userId: `u-${i}` })).toBe(sampleBucket(`u-${i}`) < 5000);
    }
  });
});
