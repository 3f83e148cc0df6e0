import type { DeliveryItem } from '@eventrelay/config';
import { countedCalls, retryCapReason, retryHoldLimit } from './retry-cap.js';

const item: DeliveryItem = {
  sourceId: 's',
  call: { type: 'track', messageId: 'm', userId: 'u', event: 'E', timestamp: 't', receivedAt: 't' },
};

describe('the retry backlog cap', () => {
  it('counts only what a commit wrote into the job', () => {
    expect(countedCalls({ destinationId: 'd', batch: { id: 'b', parts: [{ part: 0, sourceId: 's', indexes: [0] }] } })).toBe(0);
    // A replay, an audience identify, a delete notice: calls, never counted yet.
    expect(countedCalls({ destinationId: 'd', calls: [item] })).toBe(0);
    expect(countedCalls({ destinationId: 'd', calls: [item], runs: 2 })).toBe(0);
    expect(countedCalls({ destinationId: 'd', calls: [item, item], runs: 2, counted: 2 })).toBe(2);
    expect(countedCalls({ destinationId: 'd', calls: [item], runs: 1, counted: 0 })).toBe(0);
  });

  it('holds every call newly held while the destination has room', () => {
    expect(retryHoldLimit({ pending: 3, counted: 0, current: 0, max: 5 })).toBe(3);
    expect(retryHoldLimit({ pending: 3, counted: 0, current: 2, max: 5 })).toBe(3);
  });

  it('holds only what fits: the count ends at the cap', () => {
    expect(retryHoldLimit({ pending: 4, counted: 0, current: 3, max: 5 })).toBe(2);
    expect(retryHoldLimit({ pending: 4, counted: 0, current: 5, max: 5 })).toBe(0);
  });

  it('keeps calls already counted, even over the cap (it was lowered, or concurrent commits overshot)', () => {
    // Fewer calls than counted: the job only gives back.
    expect(retryHoldLimit({ pending: 2, counted: 3, current: 9, max: 5 })).toBe(2);
    expect(retryHoldLimit({ pending: 3, counted: 3, current: 9, max: 5 })).toBe(3);
    // More than it had counted (never expected of a committed job): only the new ones are held back.
    expect(retryHoldLimit({ pending: 5, counted: 3, current: 4, max: 5 })).toBe(4);
    expect(retryHoldLimit({ pending: 5, counted: 3, current: 7, max: 5 })).toBe(3);
  });

  it('holds everything when the cap is off (0)', () => {
    expect(retryHoldLimit({ pending: 1000, counted: 0, current: 1_000_000, max: 0 })).toBe(1000);
  });

  it('names the cap and the variable in the dead letters', () => {
    expect(retryCapReason(100_000)).toBe('retry backlog cap reached (DELIVERY_RETRY_MAX_PER_DESTINATION=100000)');
  });
});
