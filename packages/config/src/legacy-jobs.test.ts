import { heldFromLegacyDeliverJob, legacyRouteJob } from './legacy-jobs.js';

const call = {
  type: 'track' as const,
  messageId: 'm-1',
  userId: 'u',
  event: 'E',
  timestamp: '2026-11-21T09:30:00.000Z',
  receivedAt: '2026-11-21T09:30:00.000Z',
};

describe('jobs of the shapes written before jobs carried batches', () => {
  it('reads a legacy route job, and leaves a current one alone', () => {
    expect(legacyRouteJob({ sourceId: 's', requestId: 'r-1', calls: [call] })).toEqual({ sourceId: 's', requestId: 'r-1', calls: [call] });
    expect(legacyRouteJob({ batchId: 'b-1' })).toBeUndefined();
    expect(legacyRouteJob({ sourceId: 's', calls: [call] })).toBeUndefined();
    expect(legacyRouteJob(null)).toBeUndefined();
  });

  it('turns a legacy delivery job into a job holding its call, retry state and rounds kept', () => {
    const retry = { firstAttemptAt: 1, attempt: 3, urls: { 'https://a': { lastError: 'HTTP 500', notBefore: 5 } } };
    expect(heldFromLegacyDeliverJob({ sourceId: 's', destinationId: 'd', call, retry })).toEqual({
      destinationId: 'd',
      calls: [{ sourceId: 's', call, retry }],
      runs: 3,
    });
    expect(heldFromLegacyDeliverJob({ sourceId: 's', destinationId: 'd', call })).toEqual({
      destinationId: 'd',
      calls: [{ sourceId: 's', call }],
      runs: 0,
    });
  });

  it('leaves current delivery jobs alone', () => {
    expect(heldFromLegacyDeliverJob({ destinationId: 'd', calls: [{ sourceId: 's', call }] })).toBeUndefined();
    expect(heldFromLegacyDeliverJob({ destinationId: 'd', batch: { id: 'b', parts: [] } })).toBeUndefined();
  });
});
