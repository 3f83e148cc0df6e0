import { classify, classifyFailure, classifyStatus, type SendFailure } from './outcome.js';

const NOW = Date.parse('2026-11-21T09:30:00.000Z');

describe('the docs/spec.md §4 outcome table', () => {
  describe('2xx → success', () => {
    it.each([200, 201, 202, 204, 299])('%i', (status) => {
      expect(classifyStatus(status, undefined, NOW)).toEqual({ kind: 'success', status });
      expect(classify({ kind: 'response', status }, NOW)).toEqual({ kind: 'success', status });
    });

    it('ignores a Retry-After on a success', () => {
      expect(classifyStatus(200, '120', NOW)).toEqual({ kind: 'success', status: 200 });
    });
  });

  describe('5xx, 408 and 429 → retryable', () => {
    it.each([500, 501, 502, 503, 504, 507, 599, 408, 429])('%i without Retry-After', (status) => {
      const outcome = classifyStatus(status, undefined, NOW);
      expect(outcome).toEqual({ kind: 'retryable', error: `HTTP ${status}`, status });
      expect(outcome).not.toHaveProperty('retryAfterMs');
    });

    it.each([503, 429, 408, 500])('%i with Retry-After in seconds carries retryAfterMs', (status) => {
      expect(classifyStatus(status, '120', NOW)).toEqual({ kind: 'retryable', error: `HTTP ${status}`, status, retryAfterMs: 120_000 });
      expect(classify({ kind: 'response', status, retryAfter: '7' }, NOW)).toEqual({
        kind: 'retryable',
        error: `HTTP ${status}`,
        status,
        retryAfterMs: 7000,
      });
    });

    it('Retry-After as an HTTP-date counts from now', () => {
      expect(classifyStatus(503, 'Sat, 21 Nov 2026 09:31:00 GMT', NOW)).toMatchObject({ kind: 'retryable', retryAfterMs: 60_000 });
      expect(classifyStatus(503, 'Sat, 21 Nov 2026 09:31:00 GMT', NOW + 30_000)).toMatchObject({ kind: 'retryable', retryAfterMs: 30_000 });
    });

    it('Retry-After 0 is kept as 0', () => {
      expect(classifyStatus(429, '0', NOW)).toEqual({ kind: 'retryable', error: 'HTTP 429', status: 429, retryAfterMs: 0 });
    });

    it('an unreadable Retry-After is ignored, the outcome stays retryable', () => {
      const outcome = classifyStatus(503, 'later please', NOW);
      expect(outcome).toEqual({ kind: 'retryable', error: 'HTTP 503', status: 503 });
      expect(outcome).not.toHaveProperty('retryAfterMs');
    });
  });

  describe('3xx → permanent (redirects are not followed)', () => {
    it.each([300, 301, 302, 303, 304, 307, 308])('%i', (status) => {
      expect(classifyStatus(status, undefined, NOW)).toEqual({
        kind: 'permanent',
        error: `HTTP ${status} (redirects are not followed)`,
        status,
      });
    });
  });

  describe('other 4xx → permanent', () => {
    it.each([400, 401, 403, 404, 405, 409, 410, 413, 415, 422, 451, 499])('%i', (status) => {
      expect(classifyStatus(status, undefined, NOW)).toEqual({ kind: 'permanent', error: `HTTP ${status}`, status });
    });

    it('a Retry-After does not make a 4xx retryable', () => {
      expect(classifyStatus(404, '5', NOW)).toEqual({ kind: 'permanent', error: 'HTTP 404', status: 404 });
    });
  });

  describe('no response', () => {
    it.each<SendFailure>(['timeout', 'connection_refused', 'connection_reset', 'dns_failure', 'network_error'])(
      '%s → retryable',
      (failure) => {
        const outcome = classifyFailure(failure, 'detail text');
        expect(outcome).toEqual({ kind: 'retryable', error: `${failure}: detail text` });
        expect(outcome).not.toHaveProperty('status');
        expect(outcome).not.toHaveProperty('retryAfterMs');
        expect(classify({ kind: 'failure', failure, detail: 'detail text' }, NOW)).toEqual(outcome);
      },
    );

    it.each<SendFailure>(['tls_untrusted', 'address_refused', 'invalid_url'])('%s → permanent', (failure) => {
      const outcome = classifyFailure(failure, 'why');
      expect(outcome).toEqual({ kind: 'permanent', error: `${failure}: why` });
      expect(classify({ kind: 'failure', failure, detail: 'why' }, NOW)).toEqual(outcome);
    });

    it('keeps the detail in the error, for the attempt log', () => {
      expect(classifyFailure('timeout', 'no complete response within 5000 ms')).toEqual({
        kind: 'retryable',
        error: 'timeout: no complete response within 5000 ms',
      });
      expect(classifyFailure('address_refused', '10.0.0.1 is a private address (10.0.0.0/8)')).toMatchObject({
        error: expect.stringContaining('10.0.0.1 is a private address'),
      });
    });
  });
});
