import { UnavailableError } from '@eventrelay/config';
import { holdMsFor, RefusalHold } from './refusal-hold';

describe('holding refusals', () => {
  const NOW = Date.parse('2026-11-29T09:30:00.200Z');
  // The same request fits its source's pace again 20 ms from now (Retry-After still says 1 s).
  const limited = new UnavailableError('rate_limited', 'over', 1, { resetAtEpochSeconds: Math.ceil(NOW / 1000), retryAtMs: NOW + 20 });
  const far = new UnavailableError('rate_limited', 'over', 2, { resetAtEpochSeconds: Math.ceil(NOW / 1000) + 1, retryAtMs: NOW + 1500 });

  it('holds a rate-limited answer until the request would fit, at most the hold; an over-budget one for the hold', () => {
    expect(holdMsFor(limited, NOW, 1000)).toBe(20);
    expect(holdMsFor(far, NOW, 1000)).toBe(1000);
    expect(holdMsFor(far, NOW, 500)).toBe(500);
    expect(holdMsFor(limited, NOW + 30, 1000)).toBe(0);
    expect(holdMsFor(new UnavailableError('source_over_budget', 'full', 3600), NOW, 1000)).toBe(1000);
  });

  it('answers every other error, and everything with a hold of 0, at once', () => {
    expect(holdMsFor(limited, NOW, 0)).toBe(0);
    expect(holdMsFor(new UnavailableError('overloaded', 'full', 5), NOW, 1000)).toBe(0);
    expect(holdMsFor(new UnavailableError('service_unavailable', 'down', 1), NOW, 1000)).toBe(0);
    expect(holdMsFor(new Error('bug'), NOW, 1000)).toBe(0);
  });

  it('holds at most maxHeld answers at once, and answers the rest at once', async () => {
    const waiting: (() => void)[] = [];
    const hold = new RefusalHold(2, () => new Promise<void>((resolve) => waiting.push(resolve)));
    const order: string[] = [];
    const a = hold.hold(500).then(() => order.push('a'));
    const b = hold.hold(500).then(() => order.push('b'));
    await hold.hold(500).then(() => order.push('c'));
    expect(order).toEqual(['c']);
    expect(waiting).toHaveLength(2);
    waiting.forEach((release) => release());
    await Promise.all([a, b]);
    expect(order).toEqual(['c', 'a', 'b']);
    // Room again once they are answered.
    void hold.hold(500);
    expect(waiting).toHaveLength(3);
    waiting[2]!();
  });
});
