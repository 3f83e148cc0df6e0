import { excerpt, signatureOf, statusText, type DeliveryAttempt } from './attempts';

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
});
