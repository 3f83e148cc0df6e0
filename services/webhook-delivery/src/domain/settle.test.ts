import type { DeliveryItem, RetryState } from '@eventrelay/config';
import { settleRound, type CallRun } from './settle.js';

const NOW = Date.parse('2026-11-21T09:30:00.000Z');
const A = 'https://a.example/hook';
const B = 'https://b.example/hook';

const item = (messageId: string, retry?: RetryState): DeliveryItem => ({
  sourceId: 'src-1',
  call: {
    type: 'track',
    messageId,
    userId: 'u',
    event: 'E',
    timestamp: '2026-11-21T09:29:59.000Z',
    receivedAt: '2026-11-21T09:29:59.000Z',
  },
  ...(retry ? { retry } : {}),
});
const state = (urls: RetryState['urls'], attempt = 1): RetryState => ({ firstAttemptAt: NOW - 1000, attempt, urls });

describe('settleRound', () => {
  it('sorts a job’s calls into delivered, retried (with their new state), dead and untouched', () => {
    const retryState = state({ [A]: { lastError: 'HTTP 500', notBefore: NOW + 2000 } });
    const deadState = state({ [A]: { lastError: 'HTTP 404', failed: true } });
    const waiting = item('waits', state({ [A]: { lastError: 'HTTP 429', notBefore: NOW + 9000 } }));
    const calls: CallRun[] = [
      { item: item('ok'), decision: { kind: 'delivered', url: A, attempt: 1 }, attempts: [] },
      { item: item('again'), decision: { kind: 'retry', at: NOW + 2000, state: retryState }, attempts: [] },
      { item: item('gone'), decision: { kind: 'dead', reason: 'HTTP 404', state: deadState }, attempts: [] },
      { item: waiting, decision: undefined, attempts: [] },
    ];
    const settled = settleRound(calls, [A], NOW);
    expect(settled.delivered.map((c) => c.item.call.messageId)).toEqual(['ok']);
    expect(settled.retrying.map((c) => c.item.call.messageId)).toEqual(['again']);
    expect(settled.dead).toEqual([{ run: calls[2], state: deadState, reason: 'HTTP 404' }]);
    // A delivered call is never held again; a retried one carries its new state; the untouched one is as it was.
    expect(settled.pending).toEqual([{ ...item('again'), retry: retryState }, waiting]);
    expect(settled.nextAt).toBe(NOW + 2000);
  });

  it('comes back when the first call still held is due: a retry, a wait, or a call held back by a slow destination', () => {
    const later = item('later', state({ [A]: { lastError: 'HTTP 503', notBefore: NOW + 60_000 } }));
    expect(settleRound([{ item: later, decision: undefined, attempts: [] }], [A], NOW).nextAt).toBe(NOW + 60_000);
    expect(settleRound([{ item: later, decision: undefined, attempts: [], holdMs: 1500 }], [A], NOW).nextAt).toBe(NOW + 1500);
    // A URL the call has no state for (added since) is due now.
    expect(settleRound([{ item: later, decision: undefined, attempts: [] }], [A, B], NOW).nextAt).toBe(NOW);
    // A call never attempted (shutdown came first) is due now.
    expect(settleRound([{ item: item('fresh'), decision: undefined, attempts: [] }], [A], NOW).nextAt).toBe(NOW);
  });

  it('ignores URLs that failed for good when finding the next due time', () => {
    const mixed = item(
      'mixed',
      state({ [A]: { lastError: 'HTTP 404', failed: true }, [B]: { lastError: 'HTTP 500', notBefore: NOW + 4000 } }),
    );
    expect(settleRound([{ item: mixed, decision: undefined, attempts: [] }], [A, B], NOW).nextAt).toBe(NOW + 4000);
  });

  it('leaves nothing pending and no next run when every call ended', () => {
    const settled = settleRound([{ item: item('ok'), decision: { kind: 'delivered', url: A, attempt: 1 }, attempts: [] }], [A], NOW);
    expect(settled).toMatchObject({ pending: [], nextAt: undefined });
  });
});

describe('settleRound at the retry backlog cap', () => {
  const reason = 'retry backlog cap reached (DELIVERY_RETRY_MAX_PER_DESTINATION=2)';
  const retryState = state({ [A]: { lastError: 'HTTP 503', notBefore: NOW + 2000 } });
  const retry = (id: string): CallRun => ({ item: item(id), decision: { kind: 'retry', at: NOW + 2000, state: retryState }, attempts: [] });

  it('holds the first calls still to go, in the job’s order, and dead-letters the rest with the reason', () => {
    const waiting = item('waits', state({ [A]: { lastError: 'HTTP 429', notBefore: NOW + 9000 } }));
    const calls: CallRun[] = [
      retry('r1'),
      { item: item('ok'), decision: { kind: 'delivered', url: A, attempt: 1 }, attempts: [] },
      retry('r2'),
      { item: waiting, decision: undefined, attempts: [] },
      retry('r3'),
      { item: item('fresh'), decision: undefined, attempts: [], holdMs: 1000 },
    ];
    const settled = settleRound(calls, [A], NOW, { hold: 2, reason });
    expect(settled.pending.map((p) => p.call.messageId)).toEqual(['r1', 'r2']);
    expect(settled.retrying.map((c) => c.item.call.messageId)).toEqual(['r1', 'r2']);
    expect(settled.delivered.map((c) => c.item.call.messageId)).toEqual(['ok']);
    expect(settled.capped).toBe(3);
    // A capped call that was retried keeps the state of this round; one that waited, what it had;
    // one never attempted, none (attempt 0).
    expect(settled.dead).toEqual([
      { run: calls[3], state: waiting.retry, reason },
      { run: calls[4], state: retryState, reason },
      { run: calls[5], state: { firstAttemptAt: NOW, attempt: 0, urls: {} }, reason },
    ]);
    expect(settled.nextAt).toBe(NOW + 2000);
  });

  it('dead-letters every call still to go at hold 0, and keeps the other dead as they were', () => {
    const gone: CallRun = {
      item: item('gone'),
      decision: { kind: 'dead', reason: 'HTTP 404', state: state({ [A]: { lastError: 'HTTP 404', failed: true } }) },
      attempts: [],
    };
    const settled = settleRound([retry('r1'), gone], [A], NOW, { hold: 0, reason });
    expect(settled.pending).toEqual([]);
    expect(settled.nextAt).toBeUndefined();
    expect(settled.capped).toBe(1);
    expect(settled.dead.map((d) => [d.run.item.call.messageId, d.reason])).toEqual([
      ['r1', reason],
      ['gone', 'HTTP 404'],
    ]);
  });

  it('changes nothing when everything fits, and caps nothing without a cap', () => {
    const calls = [retry('r1'), retry('r2')];
    expect(settleRound(calls, [A], NOW, { hold: 2, reason })).toEqual(settleRound(calls, [A], NOW));
    expect(settleRound(calls, [A], NOW).capped).toBe(0);
  });
});

describe('a call that never had an attempt waits behind an open breaker', () => {
  it('starts its window then, so that it gets its last attempt at the window’s end', async () => {
    const { settleRound: settle } = await import('./settle.js');
    const item = {
      sourceId: 's',
      call: {
        type: 'track' as const,
        messageId: 'm',
        event: 'E',
        userId: 'u',
        timestamp: '2026-11-25T10:00:00.000Z',
        receivedAt: '2026-11-25T10:00:00.000Z',
      },
    };
    const settled = settle([{ item, decision: undefined, attempts: [] }], ['https://r.example/in'], 7_000, undefined, true);
    expect(settled.pending).toEqual([{ ...item, retry: { firstAttemptAt: 7_000, attempt: 0, urls: {} } }]);
    // Without the breaker it waits as it is.
    expect(settle([{ item, decision: undefined, attempts: [] }], ['https://r.example/in'], 7_000).pending).toEqual([item]);
  });
});
