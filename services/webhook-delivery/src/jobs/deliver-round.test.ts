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
    const probe = probeRound(planRound([fresh, old], destination, 60_000), 120_000, 60_000);
    expect(probe.requests).toBe(1);
    expect(probe.calls.map((c) => c.due.length)).toEqual([1, 0]);
  });

  it('a probe at the window’s end of some calls is their last attempts, not one call of many', () => {
    const old2: DeliveryItem = { ...old, call: call('old2') };
    const probe = probeRound(planRound([fresh, old, young, old2], destination, 60_000), 60_000, 60_000);
    expect(probe.requests).toBe(2);
    expect(probe.calls.map((c) => [c.item.call.messageId, c.due.length])).toEqual([
      ['fresh', 0],
      ['old', 1],
      ['young', 0],
      ['old2', 1],
    ]);
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

describe('calls whose body cannot be built, and delete notices, in a round', () => {
  const huge = { ...call('huge'), properties: { blob: 'x'.repeat(10_000) } };
  const mapping = Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`k${i}`, { '@path': 'properties' }]));
  const notice = {
    type: 'delete' as const,
    userId: 'u',
    timestamp: '2026-11-25T10:00:00.000Z',
    messageId: 'del-1',
  } as unknown as DeliveryItem['call'];
  const recorder = () => {
    const sent: { headers: Record<string, string>; body: string }[] = [];
    const sender = {
      send: (_url: string, headers: Record<string, string>, body: string) => {
        sent.push({ headers, body });
        return Promise.resolve({ kind: 'response' as const, status: 200 });
      },
    };
    const deps = { sender, record: () => undefined, policy: DEFAULT_RETRY_POLICY, timeoutMs: 5000, clock: () => 1000, random: () => 0.5 };
    return { sent, deps, places: { take: () => undefined, give: () => undefined, done: () => undefined } };
  };

  it.each([
    ['alone', undefined],
    ['batched', {}],
  ])('a mapping too large for a call makes it a dead letter at once, sending nothing for it (%s)', async (_name, batching) => {
    const mapped: Destination = {
      ...destination,
      settings: { webhooks: [{ url: 'https://a.example/in' }], mapping, ...(batching ? { batching } : {}) },
    };
    const items: DeliveryItem[] = [{ sourceId: 's', call: huge }, fresh];
    const round = planRound(items, mapped, 1000);
    expect(round.requests).toBe(1);
    // The breaker's probe never lands on a call it cannot send.
    expect(probeRound(round, 60_000, 1000).calls.map((c) => c.due.length)).toEqual([0, 1]);
    const { sent, deps, places } = recorder();
    const run = await runDelivery('d', round, mapped, deps, places);
    expect(sent).toHaveLength(1);
    expect(run.calls[0]!.decision).toMatchObject({ kind: 'dead', reason: expect.stringContaining('262144') });
    expect(run.calls[1]!.decision?.kind).toBe('delivered');
  });

  it('never batches a delete notice: it goes alone, with its own body and headers', async () => {
    const batched: Destination = { ...destination, settings: { webhooks: [{ url: 'https://a.example/in' }], batching: {} } };
    const { sent, deps, places } = recorder();
    await runDelivery('d', planRound([fresh, { sourceId: 's', call: notice }, young], batched, 100_000), batched, deps, places);
    expect(sent).toHaveLength(2);
    const alone = sent.find((s) => s.headers['x-eventrelay-message-id'] === 'del-1')!;
    expect(alone.body).toBe('{"type":"delete","userId":"u","timestamp":"2026-11-25T10:00:00.000Z"}');
    expect(alone.headers['x-eventrelay-batch-size']).toBeUndefined();
    expect(JSON.parse(sent.find((s) => s !== alone)!.body).map((b: { messageId: string }) => b.messageId)).toEqual(['fresh', 'young']);
  });
});
