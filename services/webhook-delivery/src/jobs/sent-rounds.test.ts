import type { DeliverJob } from '@eventrelay/config';
import { SentRounds } from './sent-rounds.js';

const batchJob = (id: string): DeliverJob => ({ destinationId: 'd', batch: { id, parts: [{ part: 0, sourceId: 's', indexes: [0] }] } });

describe('rounds sent but not committed', () => {
  it('are found again while the job is in the state they were sent from, until committed', () => {
    const rounds = new SentRounds<string>(10);
    rounds.keep('j1', batchJob('b1'), 'round 1');
    expect(rounds.take('j1', batchJob('b1'))).toBe('round 1');
    expect(rounds.take('j1', batchJob('b1'))).toBe('round 1');
    rounds.committed('j1');
    expect(rounds.take('j1', batchJob('b1'))).toBeUndefined();
  });

  it('are dropped when the job moved on (another process committed it)', () => {
    const rounds = new SentRounds<string>(10);
    const call = {
      sourceId: 's',
      call: { type: 'track' as const, messageId: 'm', userId: 'u', event: 'E', timestamp: 't', receivedAt: 't' },
    };
    rounds.keep('j1', { destinationId: 'd', calls: [call] }, 'round 1');
    expect(rounds.take('j1', { destinationId: 'd', calls: [call], runs: 1, counted: 1 })).toBeUndefined();
    expect(rounds.size).toBe(0);
  });

  it('are bounded: the oldest make room', () => {
    const rounds = new SentRounds<string>(2);
    rounds.keep('j1', batchJob('b1'), 'r1');
    rounds.keep('j2', batchJob('b2'), 'r2');
    rounds.keep('j3', batchJob('b3'), 'r3');
    expect(rounds.size).toBe(2);
    expect(rounds.take('j1', batchJob('b1'))).toBeUndefined();
    expect(rounds.take('j3', batchJob('b3'))).toBe('r3');
  });
});
