import type { DeliveryItem } from '@eventrelay/config';
import { sentFrom } from './sent-round.js';

const item = (messageId: string): DeliveryItem => ({
  sourceId: 's',
  call: { type: 'track', messageId, userId: 'u', event: 'E', timestamp: 't', receivedAt: 't' },
});

describe('the state a round was sent from', () => {
  it('is the batch for a batch job', () => {
    const ref = { id: 'b1', parts: [{ part: 0, sourceId: 's', indexes: [0, 1] }] };
    expect(sentFrom({ destinationId: 'd', batch: ref })).toBe(sentFrom({ destinationId: 'd', batch: ref }));
    expect(sentFrom({ destinationId: 'd', batch: ref })).not.toBe(sentFrom({ destinationId: 'd', batch: { ...ref, id: 'b2' } }));
  });

  it('moves on with each commit of a job holding calls', () => {
    const first = sentFrom({ destinationId: 'd', calls: [item('a'), item('b')] });
    expect(sentFrom({ destinationId: 'd', calls: [item('a'), item('b')] })).toBe(first);
    // The commit after the round: one run more, the calls still to go counted.
    expect(sentFrom({ destinationId: 'd', calls: [item('a'), item('b')], runs: 1, counted: 2 })).not.toBe(first);
    expect(sentFrom({ destinationId: 'd', calls: [item('b')], runs: 1, counted: 1 })).not.toBe(first);
    expect(sentFrom({ destinationId: 'd', calls: [item('a')], runs: 1, counted: 1 })).not.toBe(
      sentFrom({ destinationId: 'd', calls: [item('b')], runs: 1, counted: 1 }),
    );
  });
});
