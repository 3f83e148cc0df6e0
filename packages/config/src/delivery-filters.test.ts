import type { DeadLetter, DeliveryAttempt } from './generated/contracts.js';
import { attemptMatches, deadLetterMatches, isFiltering, parseInstant } from './delivery-filters.js';

const attempt = (extra: Partial<DeliveryAttempt> = {}): DeliveryAttempt => ({
  destinationId: 'd',
  sourceId: 's',
  messageId: 'm-1',
  url: 'http://r/',
  attempt: 1,
  outcome: 'success',
  status: 200,
  latencyMs: 3,
  at: '2026-11-21T09:30:00.000Z',
  ...extra,
});

const letter = (extra: Partial<DeadLetter> = {}, event = 'Order Completed'): DeadLetter => ({
  jobId: 'j',
  job: {
    sourceId: 's',
    destinationId: 'd',
    call: { type: 'track', messageId: 'msg-ABC', userId: 'u', event, properties: {}, timestamp: 't', receivedAt: 't' },
  },
  attempts: 3,
  lastError: 'HTTP 503',
  urls: [],
  firstAttemptAt: '2026-11-21T09:00:00.000Z',
  deadAt: '2026-11-21T10:00:00.000Z',
  ...extra,
});

describe('attemptMatches', () => {
  it('keeps everything with an empty filter', () => {
    expect(attemptMatches(attempt(), {})).toBe(true);
    expect(isFiltering({})).toBe(false);
    expect(isFiltering({ messageId: 'x' })).toBe(true);
  });

  it('reads failed as retryable or permanent', () => {
    expect(attemptMatches(attempt({ outcome: 'retryable', status: 503 }), { outcome: 'failed' })).toBe(true);
    expect(attemptMatches(attempt({ outcome: 'permanent', status: 404 }), { outcome: 'failed' })).toBe(true);
    expect(attemptMatches(attempt(), { outcome: 'failed' })).toBe(false);
    expect(attemptMatches(attempt(), { outcome: 'retryable' })).toBe(false);
  });

  it('matches the status class, none being no HTTP answer', () => {
    expect(attemptMatches(attempt({ status: 204 }), { statusClass: '2xx' })).toBe(true);
    expect(attemptMatches(attempt({ status: 302 }), { statusClass: '3xx' })).toBe(true);
    expect(attemptMatches(attempt({ status: 429 }), { statusClass: '5xx' })).toBe(false);
    const noAnswer = attempt({ outcome: 'retryable', error: 'timeout: x' });
    delete (noAnswer as { status?: number }).status;
    expect(attemptMatches(noAnswer, { statusClass: 'none' })).toBe(true);
    expect(attemptMatches(attempt(), { statusClass: 'none' })).toBe(false);
  });

  it('matches the messageId exactly', () => {
    expect(attemptMatches(attempt(), { messageId: 'm-1' })).toBe(true);
    expect(attemptMatches(attempt(), { messageId: 'm' })).toBe(false);
    expect(attemptMatches(attempt(), { messageId: 'M-1' })).toBe(false);
  });

  it('treats since and until as inclusive bounds on at', () => {
    const at = Date.parse('2026-11-21T09:30:00.000Z');
    expect(attemptMatches(attempt(), { sinceMs: at, untilMs: at })).toBe(true);
    expect(attemptMatches(attempt(), { sinceMs: at + 1 })).toBe(false);
    expect(attemptMatches(attempt(), { untilMs: at - 1 })).toBe(false);
  });

  it('needs every given condition', () => {
    expect(attemptMatches(attempt(), { outcome: 'success', statusClass: '2xx', messageId: 'other' })).toBe(false);
  });
});

describe('deadLetterMatches', () => {
  it('finds q in the messageId, event name, call type or last error, ignoring case', () => {
    expect(deadLetterMatches(letter(), { q: 'abc' })).toBe(true);
    expect(deadLetterMatches(letter(), { q: 'order comp' })).toBe(true);
    expect(deadLetterMatches(letter(), { q: 'TRACK' })).toBe(true);
    expect(deadLetterMatches(letter(), { q: '503' })).toBe(true);
    expect(deadLetterMatches(letter(), { q: 'nowhere' })).toBe(false);
  });

  it('reads calls without an event name', () => {
    const notice = letter({
      job: { sourceId: 's', destinationId: 'd', call: { type: 'delete', messageId: 'del-1', userId: 'u', timestamp: 't' } },
    });
    expect(deadLetterMatches(notice, { q: 'delete' })).toBe(true);
    expect(deadLetterMatches(notice, { q: 'order' })).toBe(false);
  });

  it('treats since and until as inclusive bounds on deadAt', () => {
    const dead = Date.parse('2026-11-21T10:00:00.000Z');
    expect(deadLetterMatches(letter(), { sinceMs: dead, untilMs: dead })).toBe(true);
    expect(deadLetterMatches(letter(), { sinceMs: dead + 1 })).toBe(false);
    expect(deadLetterMatches(letter(), { untilMs: dead - 1, q: 'abc' })).toBe(false);
  });
});

describe('parseInstant', () => {
  it('reads ISO 8601 times with a zone and refuses the rest', () => {
    expect(parseInstant('2026-11-21T09:30:00Z')).toBe(Date.UTC(2026, 10, 21, 9, 30));
    expect(parseInstant('2026-11-21T10:30:00+01:00')).toBe(Date.UTC(2026, 10, 21, 9, 30));
    expect(parseInstant('2026-11-21T09:30:00')).toBeUndefined();
    expect(parseInstant('2026-02-30T00:00:00Z')).toBeUndefined();
    expect(parseInstant('yesterday')).toBeUndefined();
  });
});
