import { RequestError, type DeadLetter, type Destination } from '@eventrelay/config';
import { replayJob, replaySelection } from './replay';

const destination: Destination = {
  id: 'd1',
  name: 'Webhooks',
  enabled: true,
  sourceIds: ['s1'],
  settings: { webhooks: [{ url: 'https://a' }] },
};
const call = {
  type: 'track' as const,
  messageId: 'm1',
  userId: 'u',
  event: 'E',
  timestamp: '2026-11-21T00:00:00.000Z',
  receivedAt: '2026-11-21T00:00:00.000Z',
};

describe('replayJob', () => {
  it('is a job of its own holding just the call, under the letter id, without retry state (a fresh window, the same messageId), tagged with the replay', () => {
    // A letter written before jobs carried batches kept the retry state in `job`: it is dropped too.
    const oldJob = {
      sourceId: 's1',
      destinationId: 'd1',
      call,
      retry: { firstAttemptAt: 1, attempt: 9, urls: { 'https://a': { lastError: 'HTTP 500' } } },
    };
    const letter: DeadLetter = {
      jobId: 'd1-abc',
      job: oldJob,
      attempts: 9,
      lastError: 'HTTP 500',
      urls: [{ url: 'https://a', error: 'HTTP 500' }],
      firstAttemptAt: '2026-11-21T00:00:00.000Z',
      deadAt: '2026-11-21T04:00:00.000Z',
    };
    expect(replayJob(letter, 'rpl_1')).toEqual({
      jobId: 'd1-abc',
      data: { destinationId: 'd1', calls: [{ sourceId: 's1', call, replayId: 'rpl_1' }] },
    });
  });
});

describe('replaySelection', () => {
  it('reads each kind of request', () => {
    expect(replaySelection({ all: true }, destination)).toEqual({ kind: 'all' });
    expect(replaySelection({ messageIds: ['a'] }, destination)).toEqual({ kind: 'messages', messageIds: ['a'] });
    expect(replaySelection({ since: '2026-11-21T09:00:00Z' }, destination)).toEqual({
      kind: 'since',
      sinceMs: Date.parse('2026-11-21T09:00:00Z'),
    });
    expect(replaySelection({ since: '2026-11-21T10:30:00.123+01:30' }, destination)).toEqual({
      kind: 'since',
      sinceMs: Date.parse('2026-11-21T09:00:00.123Z'),
    });
  });

  it('refuses a time that is not ISO 8601, and any replay while the destination is disabled', () => {
    for (const since of [
      'yesterday',
      '1732190000',
      '2026-13-45T00:00:00Z',
      '2026-02-30T00:00:00Z',
      '2026-01-01T00:00:00',
      '2026-01-01T24:00:00Z',
    ]) {
      expect(() => replaySelection({ since }, destination)).toThrow(RequestError);
    }
    expect(() => replaySelection({ all: true }, { ...destination, enabled: false })).toThrow(/disabled/);
  });

  it('reads a filter, naming a bad time by its place in the filter', () => {
    expect(replaySelection({ filter: { q: '503', since: '2026-11-21T09:00:00Z' } }, destination)).toEqual({
      kind: 'filter',
      filter: { q: '503', sinceMs: Date.parse('2026-11-21T09:00:00Z'), untilMs: undefined },
    });
    let fields: unknown;
    try {
      replaySelection({ filter: { until: 'later' } }, destination);
    } catch (err) {
      fields = (err as RequestError).fields;
    }
    expect(fields).toEqual([{ field: 'filter.until', message: expect.stringContaining('ISO 8601') }]);
  });
});
