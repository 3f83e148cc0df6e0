import { batchDeliveryId, signBody, type DeliveryAttempt, type DeliveryItem, type Destination } from '@eventrelay/config';
import { DEFAULT_RETRY_POLICY } from '../domain/schedule.js';
import { activeTargets, lastRound, planRound, probeRound, runDelivery } from './deliver-round.js';

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

describe('a batched round', () => {
  const batched: Destination = {
    ...destination,
    settings: {
      webhooks: [{ url: 'https://a.example/in' }, { url: 'https://c.example/in' }],
      sharedSecret: 's3cret',
      batching: { maxCalls: 2 },
    },
  };
  const items = ['m-1', 'm-2', 'm-3'].map((id): DeliveryItem => ({ sourceId: 's', call: call(id) }));

  it('counts one request per group of calls per URL', () => {
    expect(planRound(items, batched, 0).requests).toBe(4);
    expect(planRound(items, { ...batched, settings: { ...batched.settings, batching: {} } }, 0).requests).toBe(2);
  });

  it('sends each group as one signed array, and gives every call the POST’s outcome', async () => {
    const sent: { url: string; headers: Record<string, string>; body: string }[] = [];
    const records: DeliveryAttempt[] = [];
    const sender = {
      send: (url: string, headers: Record<string, string>, body: string) => {
        sent.push({ url, headers, body });
        return Promise.resolve({ kind: 'response' as const, status: url.startsWith('https://a.') ? 200 : 503 });
      },
    };
    const places = { take: () => undefined, give: () => undefined, done: () => undefined };
    const deps = {
      sender,
      record: (a: DeliveryAttempt) => records.push(a),
      policy: DEFAULT_RETRY_POLICY,
      timeoutMs: 5000,
      clock: () => 1000,
      random: () => 0.5,
    };
    const run = await runDelivery('d', planRound(items, batched, 1000), batched, deps, places);
    expect(sent).toHaveLength(4);
    const toA = sent.filter((s) => s.url === 'https://a.example/in');
    expect(toA.map((s) => JSON.parse(s.body).length)).toEqual([2, 1]);
    expect(toA.map((s) => s.headers['x-eventrelay-batch-size'])).toEqual(['2', '1']);
    for (const s of sent) expect(s.headers['x-signature']).toBe(signBody('s3cret', s.body));
    expect(toA[0]!.headers['x-eventrelay-message-id']).toBe(
      batchDeliveryId('d', [
        { sourceId: 's', messageId: 'm-1' },
        { sourceId: 's', messageId: 'm-2' },
      ]),
    );
    expect(run.calls.map((c) => c.decision?.kind)).toEqual(['delivered', 'delivered', 'delivered']);
    // One attempt record per call and URL, each with its POST's outcome.
    expect(records).toHaveLength(6);
    expect(
      records
        .filter((r) => r.outcome === 'success')
        .map((r) => r.messageId)
        .sort(),
    ).toEqual(['m-1', 'm-2', 'm-3']);
  });
});
