import type { DeliveryItem } from '@eventrelay/config';
import {
  RETRY_STATE_BYTES,
  countedBytes,
  countedCalls,
  heldBytes,
  heldCallBytes,
  retryByteLimit,
  retryCapReason,
  retryHold,
  retryHoldLimit,
} from './retry-cap.js';

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

describe('the retry backlog byte cap', () => {
  it('counts the bytes a commit wrote into the job, none for a job no commit wrote or one from before the byte cap', () => {
    expect(countedBytes({ destinationId: 'd', batch: { id: 'b', parts: [{ part: 0, sourceId: 's', indexes: [0] }] } })).toBe(0);
    expect(countedBytes({ destinationId: 'd', calls: [item] })).toBe(0);
    expect(countedBytes({ destinationId: 'd', calls: [item], runs: 2, counted: 1 })).toBe(0);
    expect(countedBytes({ destinationId: 'd', calls: [item], runs: 2, counted: 1, countedBytes: 180 })).toBe(180);
  });

  it('measures a held call as its JSON without its retry state, in UTF-8 bytes, plus a fixed allowance for that state', () => {
    expect(RETRY_STATE_BYTES).toBe(200);
    expect(heldCallBytes(item)).toBe(JSON.stringify(item).length + 200);
    const wide = { ...item, call: { ...item.call, event: 'é€😀' } };
    expect(heldCallBytes(wide)).toBe(JSON.stringify(item).length - 1 + 2 + 3 + 4 + 200);
    const replayed = { ...item, replayId: 'r1' };
    expect(heldCallBytes(replayed)).toBe(JSON.stringify(replayed).length + 200);
  });

  it('counts a held call the same at every round, however its retry state changes', () => {
    const first = { ...item, retry: { firstAttemptAt: 1, attempt: 0, urls: {} } };
    const later = {
      ...item,
      retry: {
        firstAttemptAt: 1,
        attempt: 12,
        urls: { 'https://r.example': { lastError: 'timeout: deadline passed', notBefore: 1_700_000_000_000 } },
      },
    };
    expect(heldCallBytes(first)).toBe(heldCallBytes(item));
    expect(heldCallBytes(later)).toBe(heldCallBytes(item));
  });

  const retried = (messageId: string): DeliveryItem => ({
    ...item,
    call: { ...item.call, messageId },
    retry: { firstAttemptAt: 1, attempt: 3, urls: { 'https://r.example': { lastError: 'HTTP 503', notBefore: 5 } } },
  });

  it('keeps the counted bytes of a job still holding the calls it had counted, without measuring them', () => {
    const calls = [retried('a'), retried('b')];
    const measure = jest.fn(heldCallBytes);
    // Counted by an older measure (the retry state's JSON): the figure stands while the calls do.
    expect(heldBytes({ destinationId: 'd', calls, runs: 4, counted: 2, countedBytes: 777 }, calls, measure)).toBe(777);
    expect(measure).not.toHaveBeenCalled();
  });

  it('measures the calls still to go when they are not the ones counted: some went, none were counted, or no bytes were', () => {
    const [a, b] = [retried('a'), retried('b')];
    const each = heldCallBytes(a);
    // b was delivered: a alone is measured.
    expect(heldBytes({ destinationId: 'd', calls: [a, b], runs: 4, counted: 2, countedBytes: 777 }, [a])).toBe(each);
    // A replay's job, counted by no commit yet.
    expect(heldBytes({ destinationId: 'd', calls: [a, b] }, [a, b])).toBe(2 * each);
    // Counted before the byte cap existed.
    expect(heldBytes({ destinationId: 'd', calls: [a, b], runs: 4, counted: 2 }, [a, b])).toBe(2 * each);
    // A commit that completed the job wrote counted 0: run again, it counts what it holds afresh.
    expect(heldBytes({ destinationId: 'd', calls: [a, b], runs: 4, counted: 0, countedBytes: 0 }, [a, b])).toBe(2 * each);
    // A batch job's first round.
    expect(heldBytes({ destinationId: 'd', batch: { id: 'b', parts: [{ part: 0, sourceId: 's', indexes: [0, 1] }] } }, [a, b])).toBe(
      2 * each,
    );
    expect(heldBytes({ destinationId: 'd', calls: [a, b], runs: 4, counted: 2, countedBytes: 777 }, [])).toBe(0);
  });

  const byteLimit = (p: Partial<Parameters<typeof retryByteLimit>[0]> & { sizes: number[] }) =>
    retryByteLimit({ upTo: p.sizes.length, counted: 0, countedBytes: 0, currentBytes: 0, maxBytes: 1000, ...p });

  it('holds calls in the job’s order while the destination’s bytes stay within the cap', () => {
    expect(byteLimit({ sizes: [300, 300, 300] })).toBe(3);
    expect(byteLimit({ sizes: [300, 300, 300], currentBytes: 100 })).toBe(3);
    // Exactly at the cap is within it; one byte more is not.
    expect(byteLimit({ sizes: [300, 300, 300], currentBytes: 101 })).toBe(2);
    expect(byteLimit({ sizes: [300, 300, 300], currentBytes: 1000 })).toBe(0);
    // The first call that does not fit stops the hold: later, smaller calls are not held past it.
    expect(byteLimit({ sizes: [300, 800, 10], currentBytes: 0 })).toBe(1);
  });

  it('never holds more than the count cap allowed (upTo)', () => {
    expect(byteLimit({ sizes: [10, 10, 10, 10], upTo: 2 })).toBe(2);
  });

  it('replaces the job’s own counted bytes, and keeps its counted calls whatever their size now', () => {
    // The job had 2 calls counted as 400 bytes (by an older measure), measured 500 now, and 2 new of 200.
    // The destination holds 900, this job's 400 among them: after the commit 500 + 500 + new.
    expect(byteLimit({ sizes: [250, 250, 200, 200], counted: 2, countedBytes: 400, currentBytes: 900 })).toBe(2);
    expect(byteLimit({ sizes: [250, 250, 200, 200], counted: 2, countedBytes: 400, currentBytes: 700 })).toBe(3);
    // Over the cap already (lowered, or concurrent commits overshot): the counted calls still stay.
    expect(byteLimit({ sizes: [250, 250, 200], counted: 2, countedBytes: 500, currentBytes: 5000 })).toBe(2);
  });

  it('holds everything when the byte cap is off (0)', () => {
    expect(byteLimit({ sizes: [1_000_000, 1_000_000], currentBytes: 1e12, maxBytes: 0 })).toBe(2);
  });

  it('decides both caps at once and names the one that stopped the calls', () => {
    const job = { sizes: [400, 400, 400], counted: 0, countedBytes: 0 };
    const room = { max: 10, maxBytes: 1000, current: 0, currentBytes: 0 };
    expect(retryHold(job, { ...room, maxBytes: 0 })).toBeUndefined();
    expect(retryHold(job, { ...room, maxBytes: 1200 })).toBeUndefined();
    expect(retryHold(job, room)).toEqual({
      hold: 2,
      by: 'bytes',
      reason: 'retry backlog byte cap reached (DELIVERY_RETRY_MAX_BYTES_PER_DESTINATION=1000)',
    });
    expect(retryHold(job, { ...room, current: 9 })).toEqual({ hold: 1, by: 'count', reason: retryCapReason(10) });
    // Both would stop at the same call: the count's, as before the byte cap.
    expect(retryHold(job, { ...room, current: 8 })).toMatchObject({ hold: 2, by: 'count' });
    expect(retryHold(job, { ...room, max: 0, maxBytes: 0 })).toBeUndefined();
  });
});
