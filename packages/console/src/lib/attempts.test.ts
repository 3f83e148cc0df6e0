import { excerpt, firstRound, signatureOf, statusText, type DeliveryAttempt } from './attempts';

const attempt: DeliveryAttempt = {
  destinationId: 'dst_1',
  sourceId: 'src_1',
  messageId: 'm1',
  url: 'https://a.test',
  attempt: 1,
  outcome: 'success',
  status: 200,
  latencyMs: 12,
  at: '2026-01-01T00:00:00.000Z',
  request: { method: 'POST', headers: { 'Content-Type': 'application/json', 'X-Signature': 'abc123' }, body: '{}' },
};

describe('attempts', () => {
  it('finds the signature header whatever its case, and says when there is none', () => {
    expect(signatureOf(attempt)).toBe('abc123');
    expect(signatureOf({ ...attempt, request: { method: 'POST', headers: { 'x-signature': 'def' }, body: '' } })).toBe('def');
    expect(signatureOf({ ...attempt, request: undefined })).toBeUndefined();
  });

  it('cuts long bodies and names a missing answer', () => {
    expect(excerpt('x'.repeat(10), 4)).toBe('xxxx…');
    expect(excerpt(undefined)).toBe('');
    expect(statusText(attempt)).toBe('HTTP 200');
    const { status: _status, ...noStatus } = attempt;
    expect(statusText({ ...noStatus, error: 'ECONNREFUSED' })).toBe('no answer (ECONNREFUSED)');
  });

  it('keeps the first attempt at each URL, in the order of the URLs', () => {
    const at = (url: string, n: number, outcome: DeliveryAttempt['outcome']) => ({ ...attempt, url, attempt: n, outcome });
    // Newest first, as the log lists them: a retry at b, then the first attempts.
    const log = [at('https://b.test', 2, 'success'), at('https://b.test', 1, 'retryable'), at('https://a.test', 1, 'success')];
    expect(firstRound(log, ['https://a.test', 'https://b.test', 'https://c.test']).map((a) => [a.url, a.outcome])).toEqual([
      ['https://a.test', 'success'],
      ['https://b.test', 'retryable'],
    ]);
    expect(firstRound([], ['https://a.test'])).toEqual([]);
  });
});
