import type { DeliveryItem, Destination } from '@eventrelay/config';
import { activeTargets, lastRound, planRound, probeRound } from './deliver-round.js';

const call = (messageId: string) => ({
  type: 'track' as const,
  messageId,
  event: 'E',
  userId: 'u',
  timestamp: '2026-11-25T10:00:00.000Z',
  receivedAt: '2026-11-25T10:00:00.000Z',
});
const destination: Destination = {
  id: 'd',
  name: 'Webhooks',
  enabled: true,
  sourceIds: ['s'],
  settings: {
    webhooks: [{ url: 'https://a.example/in' }, { url: 'https://b.example/in', disabled: true, disabledReason: 'answered 410 Gone' }],
  },
};
const fresh: DeliveryItem = { sourceId: 's', call: call('fresh') };
const old: DeliveryItem = { sourceId: 's', call: call('old'), retry: { firstAttemptAt: 0, attempt: 3, urls: {} } };
const young: DeliveryItem = { sourceId: 's', call: call('young'), retry: { firstAttemptAt: 50_000, attempt: 1, urls: {} } };

describe('planning a round', () => {
  it('leaves disabled URLs out', () => {
    expect(activeTargets(destination).map((w) => w.url)).toEqual(['https://a.example/in']);
    expect(planRound([fresh], destination, 0).requests).toBe(1);
  });

  it('a probe sends one request: the first call due, its first URL', () => {
    const probe = probeRound(planRound([fresh, old], destination, 60_000));
    expect(probe.requests).toBe(1);
    expect(probe.calls.map((c) => c.due.length)).toEqual([1, 0]);
  });

  it('a last round sends the calls at their window’s end only', () => {
    const last = lastRound(planRound([fresh, old, young], destination, 60_000), 60_000, 60_000);
    expect(last.requests).toBe(1);
    expect(last.calls.map((c) => [c.item.call.messageId, c.due.length])).toEqual([
      ['fresh', 0],
      ['old', 1],
      ['young', 0],
    ]);
  });
});
