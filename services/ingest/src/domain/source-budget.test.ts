import { budgetBytesOf, ratePerSecondOf, type SourceDefaults } from './source-budget';

const DEFAULTS: SourceDefaults = { serverRatePerSecond: 10_000, clientRatePerSecond: 1000, serverMemoryShare: 0.3, clientMemoryShare: 0.1 };
const GB = 1024 ** 3;

describe('what a source may cost', () => {
  it('gives web and mobile sources, whose keys are public, the client rate and share', () => {
    for (const type of ['web', 'mobile'] as const) {
      expect(ratePerSecondOf({ type }, DEFAULTS)).toBe(1000);
      expect(budgetBytesOf({ type }, DEFAULTS, GB)).toBe(Math.floor(0.1 * GB));
    }
    expect(ratePerSecondOf({ type: 'server' }, DEFAULTS)).toBe(10_000);
    expect(budgetBytesOf({ type: 'server' }, DEFAULTS, GB)).toBe(Math.floor(0.3 * GB));
  });

  it("lets a source's own rate and share override its type's", () => {
    expect(ratePerSecondOf({ type: 'web', rateLimitPerSecond: 5000 }, DEFAULTS)).toBe(5000);
    expect(budgetBytesOf({ type: 'web', memoryShare: 0.5 }, DEFAULTS, GB)).toBe(GB / 2);
    expect(budgetBytesOf({ type: 'server', memoryShare: 0.01 }, DEFAULTS, 1000)).toBe(10);
  });

  it('has no budget without a maxmemory to take a share of, or with a share of 0', () => {
    expect(budgetBytesOf({ type: 'web' }, DEFAULTS, undefined)).toBeUndefined();
    expect(budgetBytesOf({ type: 'web' }, DEFAULTS, 0)).toBeUndefined();
    expect(budgetBytesOf({ type: 'server' }, { ...DEFAULTS, serverMemoryShare: 0 }, GB)).toBeUndefined();
  });
});
