import { buildHeaders, type NormalizedCall } from '@eventrelay/config';
import {
  REQUEST_BODY_EXCERPT,
  RESPONSE_BODY_EXCERPT,
  WRITE_ONLY,
  attemptDetail,
  keepsAnswer,
  keepsDetail,
  requestDetail,
  responseDetail,
  utf8Prefix,
} from './attempt-detail';

describe('requestDetail', () => {
  it('shows the headers as sent, static header values replaced, the signature kept', () => {
    const staticHeaders = { Authorization: 'Bearer s3cret', 'X-Team': 'growth' };
    const headers = buildHeaders({ body: '{"a":1}', messageId: 'm1', attempt: 2, sharedSecret: 'k', staticHeaders });
    const detail = requestDetail(headers, staticHeaders, '{"a":1}');
    expect(detail).toEqual({
      method: 'POST',
      headers: {
        authorization: WRITE_ONLY,
        'x-team': WRITE_ONLY,
        'user-agent': 'Eventrelay/1.0',
        'content-type': 'application/json',
        'x-signature': headers['x-signature'],
        'x-eventrelay-message-id': 'm1',
        'x-eventrelay-attempt': '2',
      },
      body: '{"a":1}',
    });
    expect(JSON.stringify(detail)).not.toContain('s3cret');
    expect(headers['x-signature']).toMatch(/^[0-9a-f]{40}$/);
  });

  it('keeps eventrelay’s own value where a static header took a reserved name', () => {
    const staticHeaders = { 'User-Agent': 'mine' };
    const headers = buildHeaders({ body: '{}', messageId: 'm1', attempt: 1, staticHeaders });
    expect(requestDetail(headers, staticHeaders, '{}').headers['user-agent']).toBe('Eventrelay/1.0');
  });

  it('cuts the body to 8 KiB and says so', () => {
    const body = JSON.stringify({ text: 'x'.repeat(20_000) });
    const detail = requestDetail({}, undefined, body);
    expect(Buffer.byteLength(detail.body)).toBe(REQUEST_BODY_EXCERPT);
    expect(body.startsWith(detail.body)).toBe(true);
    expect(detail.bodyTruncated).toBe(true);
    expect(requestDetail({}, undefined, '{}')).not.toHaveProperty('bodyTruncated');
  });
});

describe('responseDetail', () => {
  it('keeps at most 20 headers, arrays joined', () => {
    const headers: Record<string, string | string[]> = { 'set-cookie': ['a=1', 'b=2'] };
    for (let i = 0; i < 30; i++) headers[`x-h${i}`] = 'v';
    const detail = responseDetail({ headers, body: 'ok', bodyTruncated: false });
    expect(Object.keys(detail.headers)).toHaveLength(20);
    expect(detail.headers['set-cookie']).toBe('a=1, b=2');
    expect(detail).toMatchObject({ body: 'ok' });
    expect(detail).not.toHaveProperty('bodyTruncated');
  });

  it('keeps at most 2 KiB of headers', () => {
    const detail = responseDetail({ headers: { a: 'x'.repeat(1500), b: 'y'.repeat(1500), c: 'z' }, body: '', bodyTruncated: false });
    expect(Object.keys(detail.headers)).toEqual(['a']);
  });

  it('passes on that the sender cut the body, and cuts a longer one itself', () => {
    expect(responseDetail({ headers: {}, body: 'abc', bodyTruncated: true }).bodyTruncated).toBe(true);
    const long = responseDetail({ headers: {}, body: 'é'.repeat(RESPONSE_BODY_EXCERPT), bodyTruncated: false });
    expect(Buffer.byteLength(long.body)).toBe(RESPONSE_BODY_EXCERPT);
    expect(long.bodyTruncated).toBe(true);
  });
});

describe('utf8Prefix', () => {
  it('never splits a character', () => {
    expect(utf8Prefix('aé', 2)).toBe('a');
    expect(utf8Prefix('a😀b', 4)).toBe('a');
    expect(utf8Prefix('a😀b', 5)).toBe('a😀');
    expect(utf8Prefix('日本語', 7)).toBe('日本');
    expect(utf8Prefix('short', 100)).toBe('short');
  });
});

describe('attemptDetail', () => {
  const answered = {
    kind: 'response',
    status: 200,
    excerpt: { headers: { 'content-type': 'text/plain' }, body: 'ok user-7', bodyTruncated: false },
  } as const;
  const headers = { 'content-type': 'application/json' };

  it('keeps a call’s bodies and its userId, by which a deletion finds the entry', () => {
    const call = { type: 'track', messageId: 'm1', userId: 'user-7', event: 'E' } as unknown as NormalizedCall;
    expect(attemptDetail(call, headers, undefined, '{"userId":"user-7"}', answered)).toEqual({
      request: { method: 'POST', headers, body: '{"userId":"user-7"}' },
      response: { headers: { 'content-type': 'text/plain' }, body: 'ok user-7' },
      userId: 'user-7',
    });
  });

  it('keeps no body of a delete notice, which names the user being erased', () => {
    const notice = { type: 'delete', messageId: 'del-1', userId: 'user-7', timestamp: '2026-11-25T00:00:00.000Z' } as const;
    const detail = attemptDetail(notice, headers, undefined, '{"type":"delete","userId":"user-7"}', answered);
    expect(detail).toEqual({
      request: { method: 'POST', headers, body: '' },
      response: { headers: { 'content-type': 'text/plain' }, body: '' },
      erased: true,
    });
    expect(JSON.stringify(detail)).not.toContain('user-7');
  });

  it('has no response when no answer arrived', () => {
    const call = { type: 'track', messageId: 'm1', anonymousId: 'a', event: 'E' } as unknown as NormalizedCall;
    expect(attemptDetail(call, headers, undefined, '{}', { kind: 'failure', failure: 'timeout', detail: 'timed out' })).toEqual({
      request: { method: 'POST', headers, body: '{}' },
    });
  });
});

describe('keepsDetail (DELIVERY_LOG_DETAIL)', () => {
  it.each([
    ['all', 'success', true],
    ['all', 'permanent', true],
    ['failures', 'success', false],
    ['failures', 'retryable', true],
    ['failures', 'permanent', true],
    ['none', 'permanent', false],
    ['none', 'success', false],
  ] as const)('%s, %s → %p', (level, outcome, kept) => {
    expect(keepsDetail(level, outcome)).toBe(kept);
  });
});

describe('keepsAnswer (what the sender reads an excerpt for)', () => {
  it('follows keepsDetail by the status', () => {
    expect([200, 404, 503].map(keepsAnswer('all'))).toEqual([true, true, true]);
    expect([200, 204, 302, 404, 503].map(keepsAnswer('failures'))).toEqual([false, false, true, true, true]);
    expect([200, 503].map(keepsAnswer('none'))).toEqual([false, false]);
  });
});
