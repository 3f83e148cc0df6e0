/**
 * docs/spec.md §2 against the real ingest and real Redis: routes, auth, the status/code table,
 * encodings, exact size limits, normalization, dedupe, rate limit and queue depth.
 */
import { gzipSync, deflateSync } from 'node:zlib';
import { post, startTestIngest, type TestIngest } from '../../../test/support/ingest';

const RECEIVED_AT = Date.parse('2026-11-21T09:30:00.000Z');

describe('intake', () => {
  let t: TestIngest;
  let now = RECEIVED_AT;
  beforeAll(async () => {
    t = await startTestIngest({ label: 'intake', clock: () => now, source: { rateLimitPerSecond: 1_000_000 } });
  });
  afterAll(() => t.close());

  async function lastCalls() {
    const jobs = await t.routeJobs();
    return jobs.flatMap((j) => j.calls);
  }
  let serial = 0;
  const mid = (label: string) => `${label}-${++serial}-${Date.now()}`;

  describe('routes', () => {
    const singles: [string, string, Record<string, unknown>][] = [
      ['/v1/identify', 'identify', { userId: 'u1', traits: { email: 'a@example.com' } }],
      ['/v1/track', 'track', { userId: 'u1', event: 'Bought', properties: { price: 9.5 } }],
      ['/v1/page', 'page', { anonymousId: 'a1', name: 'Home', properties: { path: '/' } }],
      ['/v1/screen', 'screen', { userId: 'u1', name: 'Settings' }],
      ['/v1/group', 'group', { userId: 'u1', groupId: 'g1', traits: { plan: 'team' } }],
      ['/v1/alias', 'alias', { userId: 'u2', previousId: 'u1' }],
      ['/v1/i', 'identify', { userId: 'u1' }],
      ['/v1/t', 'track', { userId: 'u1', event: 'Clicked' }],
      ['/v1/p', 'page', { userId: 'u1' }],
      ['/v1/s', 'screen', { userId: 'u1' }],
      ['/v1/g', 'group', { userId: 'u1', groupId: 'g2' }],
      ['/v1/a', 'alias', { userId: 'u3', previousId: 'u2' }],
      ['/v1/track/', 'track', { userId: 'u1', event: 'Trailing slash' }],
    ];
    it.each(singles)('%s accepts a valid call and enqueues it normalized as %s', async (path, type, body) => {
      const messageId = mid('route');
      const res = await post(t.url, path, { ...body, messageId, type: 'ignored-because-the-path-sets-it' }, { writeKey: t.writeKey });
      expect(res.status).toBe(200);
      expect(res.json).toEqual({ success: true });
      const call = (await lastCalls()).find((c) => c.messageId === messageId);
      expect(call).toEqual({ ...body, messageId, type, timestamp: new Date(now).toISOString(), receivedAt: new Date(now).toISOString() });
    });

    it.each(['/v1/batch', '/v1/import', '/v1/b', '/v1/batch/'])('%s accepts a batch with every type', async (path) => {
      const ids = ['identify', 'track', 'page', 'screen', 'group', 'alias'].map((type) => ({ type, id: mid(type) }));
      const batch = ids.map(({ type, id }) => ({ type, messageId: id, userId: 'u9', event: 'E', groupId: 'g', previousId: 'p' }));
      const res = await post(t.url, path, { batch }, { writeKey: t.writeKey });
      expect(res).toMatchObject({ status: 200, json: { success: true } });
      const calls = await lastCalls();
      for (const { type, id } of ids) expect(calls.find((c) => c.messageId === id)).toMatchObject({ type, userId: 'u9' });
    });

    it('merges the envelope context and integrations under each item (the item wins)', async () => {
      const [a, b] = [mid('env'), mid('env')];
      const res = await post(
        t.url,
        '/v1/batch',
        {
          context: { library: { name: 'envelope-lib' }, ip: '10.0.0.1' },
          integrations: { All: false, Webhooks: true },
          batch: [
            { type: 'track', event: 'A', userId: 'u', messageId: a },
            { type: 'track', event: 'B', userId: 'u', messageId: b, context: { ip: '10.0.0.2' }, integrations: { Webhooks: false } },
          ],
        },
        { writeKey: t.writeKey },
      );
      expect(res.status).toBe(200);
      const calls = await lastCalls();
      expect(calls.find((c) => c.messageId === a)).toMatchObject({
        context: { library: { name: 'envelope-lib' }, ip: '10.0.0.1' },
        integrations: { All: false, Webhooks: true },
      });
      expect(calls.find((c) => c.messageId === b)).toMatchObject({
        context: { library: { name: 'envelope-lib' }, ip: '10.0.0.2' },
        integrations: { All: false, Webhooks: false },
      });
    });
  });

  describe('auth', () => {
    const call = () => ({ userId: 'u1', event: 'Auth', messageId: mid('auth') });
    it('accepts Basic auth with and without the trailing colon, password ignored', async () => {
      for (const credentials of [`${t.writeKey}:`, t.writeKey, `${t.writeKey}:whatever`]) {
        const res = await post(t.url, '/v1/track', call(), {
          headers: { authorization: `Basic ${Buffer.from(credentials).toString('base64')}` },
        });
        expect(res.status).toBe(200);
      }
    });
    it('accepts writeKey in the body of a single call and of a batch envelope', async () => {
      expect((await post(t.url, '/v1/track', { ...call(), writeKey: t.writeKey })).status).toBe(200);
      expect((await post(t.url, '/v1/batch', { writeKey: t.writeKey, batch: [{ type: 'track', ...call() }] })).status).toBe(200);
    });
    it('does not keep the write key on the queued call', async () => {
      const c = call();
      await post(t.url, '/v1/track', { ...c, writeKey: t.writeKey });
      const queued = (await lastCalls()).find((x) => x.messageId === c.messageId);
      expect(queued).toBeDefined();
      expect(queued).not.toHaveProperty('writeKey');
    });
    it('with a Bearer token takes the write key from the body', async () => {
      const res = await post(
        t.url,
        '/v1/track',
        { ...call(), writeKey: t.writeKey },
        { headers: { authorization: 'Bearer some-oauth-token' } },
      );
      expect(res.status).toBe(200);
      const missing = await post(t.url, '/v1/track', call(), { headers: { authorization: 'Bearer some-oauth-token' } });
      expect(missing).toMatchObject({ status: 400, json: { success: false, code: 'missing_write_key' } });
    });
    it('answers 400 missing_write_key without a key and 401 unknown_write_key for an unknown one', async () => {
      expect(await post(t.url, '/v1/track', call())).toMatchObject({ status: 400, json: { success: false, code: 'missing_write_key' } });
      expect(await post(t.url, '/v1/track', call(), { writeKey: 'no-such-key-123' })).toMatchObject({
        status: 401,
        json: { success: false, code: 'unknown_write_key' },
      });
    });
  });

  describe('the status and code table', () => {
    const cases: [string, string, string | Buffer, number, string, RegExp][] = [
      ['invalid JSON', '/v1/track', '{"userId": "u1",', 400, 'invalid_request', /JSON/],
      ['body not an object', '/v1/track', '["userId"]', 400, 'invalid_request', /object/],
      ['batch not an array', '/v1/batch', '{"batch": {"type": "track"}}', 400, 'invalid_request', /batch must be an array/],
      ['no userId or anonymousId', '/v1/identify', '{"traits": {}}', 400, 'invalid_event', /userId/],
      ['track without event', '/v1/track', '{"userId": "u1"}', 400, 'invalid_event', /event/],
      ['group without groupId', '/v1/group', '{"userId": "u1"}', 400, 'invalid_event', /groupId/],
      ['alias without previousId', '/v1/alias', '{"userId": "u1"}', 400, 'invalid_event', /previousId/],
      ['alias without userId', '/v1/alias', '{"previousId": "u1", "anonymousId": "a"}', 400, 'invalid_event', /userId/],
      ['userId over 512 characters', '/v1/identify', JSON.stringify({ userId: 'u'.repeat(513) }), 400, 'invalid_event', /userId is 513/],
    ];
    it.each(cases)('%s → %i %s', async (_name, path, raw, status, code, message) => {
      const res = await post(t.url, path, undefined, { writeKey: t.writeKey, raw });
      expect(res.status).toBe(status);
      expect(res.json).toMatchObject({ success: false, code });
      expect(typeof res.json['message']).toBe('string');
      expect(res.json['message']).toMatch(message);
    });

    it('a batch with invalid and oversize items answers 200 and lists them in "rejected"', async () => {
      const good = mid('partial');
      const res = await post(
        t.url,
        '/v1/batch',
        {
          batch: [
            { type: 'track', userId: 'u', event: 'ok', messageId: good },
            { type: 'track', userId: 'u' },
            { type: 'launch', userId: 'u' },
            { type: 'identify', userId: 'u', traits: { blob: 'x'.repeat(33 * 1024) } },
            'not an object',
          ],
        },
        { writeKey: t.writeKey },
      );
      expect(res.status).toBe(200);
      expect(res.json['success']).toBe(true);
      expect(res.json['rejected']).toEqual([
        { index: 1, code: 'invalid_event', message: 'track requires event' },
        { index: 2, code: 'invalid_event', message: expect.stringMatching(/type must be one of/) },
        { index: 3, code: 'payload_too_large', message: expect.stringMatching(/bytes/) },
        { index: 4, code: 'invalid_event', message: expect.stringMatching(/object/) },
      ]);
      const calls = await lastCalls();
      expect(calls.filter((c) => c.messageId === good)).toHaveLength(1);
    });

    it('a batch item over a length limit is rejected by name; the rest of the batch is stored', async () => {
      const [kept, long] = [mid('len-kept'), mid('len-long')];
      const res = await post(
        t.url,
        '/v1/batch',
        {
          batch: [
            { type: 'identify', userId: 'u'.repeat(30_000), messageId: long },
            { type: 'track', userId: 'u', event: 'ok', messageId: kept },
            { type: 'track', userId: 'u', event: 'e'.repeat(513) },
            { type: 'group', userId: 'u', groupId: 'g'.repeat(513) },
            { type: 'alias', userId: 'u', previousId: 'p'.repeat(513) },
            { type: 'page', anonymousId: 'a'.repeat(513) },
            { type: 'identify', userId: 'u', traits: { ['k'.repeat(257)]: 1 } },
          ],
        },
        { writeKey: t.writeKey },
      );
      expect(res).toMatchObject({ status: 200, json: { success: true } });
      const rejected = res.json['rejected'] as { index: number; code: string; message: string }[];
      expect(rejected.map((r) => [r.index, r.code, r.message.split(' ')[0]])).toEqual([
        [0, 'invalid_event', 'userId'],
        [2, 'invalid_event', 'event'],
        [3, 'invalid_event', 'groupId'],
        [4, 'invalid_event', 'previousId'],
        [5, 'invalid_event', 'anonymousId'],
        [6, 'invalid_event', 'traits'],
      ]);
      const calls = await lastCalls();
      expect(calls.filter((c) => c.messageId === kept)).toHaveLength(1);
      expect(calls.some((c) => c.messageId === long)).toBe(false);
    });

    it('never answers 3xx and answers JSON for unknown paths and methods', async () => {
      const unknown = await post(t.url, '/v1/launch', { userId: 'u' }, { writeKey: t.writeKey });
      expect(unknown).toMatchObject({ status: 404, json: { success: false, code: 'not_found' } });
      const get = await fetch(`${t.url}/v1/track`);
      expect(get.status).toBe(405);
      expect(await get.json()).toMatchObject({ success: false, code: 'method_not_allowed' });
    });
  });

  describe('bodies', () => {
    const body = () => ({ userId: 'u1', event: 'Compressed', messageId: mid('enc') });
    it.each([
      ['gzip', (b: Buffer) => gzipSync(b)],
      ['deflate', (b: Buffer) => deflateSync(b)],
    ])('inflates Content-Encoding %s', async (encoding, compress) => {
      const b = body();
      const res = await post(t.url, '/v1/track', undefined, {
        writeKey: t.writeKey,
        raw: compress(Buffer.from(JSON.stringify(b))),
        headers: { 'content-encoding': encoding },
      });
      expect(res.status).toBe(200);
      expect((await lastCalls()).find((c) => c.messageId === b.messageId)).toMatchObject({ event: 'Compressed' });
    });

    it.each(['text/plain', 'application/x-www-form-urlencoded', ''])('parses JSON sent as content type "%s"', async (type) => {
      const b = body();
      const res = await post(t.url, '/v1/track', b, { writeKey: t.writeKey, headers: { 'content-type': type } });
      expect(res.status).toBe(200);
    });

    it('answers a CORS preflight so browser sources work', async () => {
      const res = await fetch(`${t.url}/v1/t`, {
        method: 'OPTIONS',
        headers: {
          origin: 'https://shop.example',
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'content-type',
        },
      });
      expect(res.status).toBe(204);
      expect(res.headers.get('access-control-allow-origin')).toBe('https://shop.example');
      expect(res.headers.get('access-control-allow-methods')).toContain('POST');
      expect(res.headers.get('access-control-allow-headers')).toContain('content-type');
      const actual = await post(t.url, '/v1/t', body(), {
        writeKey: t.writeKey,
        headers: { origin: 'https://shop.example', 'content-type': 'text/plain' },
      });
      expect(actual.headers.get('access-control-allow-origin')).toBe('https://shop.example');
    });
  });

  describe('size limits are exact and apply after inflation', () => {
    /** A JSON object of exactly `bytes` bytes. */
    function sized(base: Record<string, unknown>, bytes: number): string {
      const empty = JSON.stringify({ ...base, pad: '' });
      const text = JSON.stringify({ ...base, pad: 'x'.repeat(bytes - Buffer.byteLength(empty)) });
      expect(Buffer.byteLength(text)).toBe(bytes);
      return text;
    }
    it('a single call of exactly 32 KB passes; one byte more is payload_too_large', async () => {
      const at = sized({ userId: 'u', event: 'Big', messageId: mid('size') }, 32 * 1024);
      expect((await post(t.url, '/v1/track', undefined, { writeKey: t.writeKey, raw: at })).status).toBe(200);
      const over = sized({ userId: 'u', event: 'Big', messageId: mid('size') }, 32 * 1024 + 1);
      expect(await post(t.url, '/v1/track', undefined, { writeKey: t.writeKey, raw: over })).toMatchObject({
        status: 400,
        json: { code: 'payload_too_large' },
      });
    });
    it('the single-call limit applies to the inflated size of a gzip body', async () => {
      const over = sized({ userId: 'u', event: 'Big', messageId: mid('size') }, 32 * 1024 + 1);
      const res = await post(t.url, '/v1/track', undefined, {
        writeKey: t.writeKey,
        raw: gzipSync(over),
        headers: { 'content-encoding': 'gzip' },
      });
      expect(res).toMatchObject({ status: 400, json: { code: 'payload_too_large' } });
      const at = sized({ userId: 'u', event: 'Big', messageId: mid('size') }, 32 * 1024);
      expect(
        (await post(t.url, '/v1/track', undefined, { writeKey: t.writeKey, raw: gzipSync(at), headers: { 'content-encoding': 'gzip' } }))
          .status,
      ).toBe(200);
    });
    it('a batch of exactly 500 KB passes; one byte more is payload_too_large', async () => {
      const items = Array.from({ length: 20 }, () => ({
        type: 'track',
        userId: 'u',
        event: 'E',
        messageId: mid('b'),
        properties: { s: 'y'.repeat(20_000) },
      }));
      const at = sized({ batch: items }, 500 * 1024);
      const ok = await post(t.url, '/v1/batch', undefined, { writeKey: t.writeKey, raw: at });
      expect(ok).toMatchObject({ status: 200, json: { success: true } });
      const over = sized({ batch: items.map((i) => ({ ...i, messageId: mid('b') })) }, 500 * 1024 + 1);
      expect(await post(t.url, '/v1/batch', undefined, { writeKey: t.writeKey, raw: over })).toMatchObject({
        status: 400,
        json: { code: 'payload_too_large' },
      });
    });
    it('a batch of 2500 items passes; 2501 is payload_too_large', async () => {
      const make = (n: number) => ({
        batch: Array.from({ length: n }, () => ({ type: 'track', userId: 'u', event: 'E', messageId: mid('n') })),
      });
      expect((await post(t.url, '/v1/batch', make(2500), { writeKey: t.writeKey })).status).toBe(200);
      expect(await post(t.url, '/v1/batch', make(2501), { writeKey: t.writeKey })).toMatchObject({
        status: 400,
        json: { code: 'payload_too_large' },
      });
    });
    it('a batch item of exactly 32 KB is kept; one byte more is rejected', async () => {
      const item = (bytes: number) =>
        JSON.parse(sized({ type: 'track', userId: 'u', event: 'E', messageId: mid('item') }, bytes)) as Record<string, unknown>;
      const res = await post(t.url, '/v1/batch', { batch: [item(32 * 1024), item(32 * 1024 + 1)] }, { writeKey: t.writeKey });
      expect(res.status).toBe(200);
      expect(res.json['rejected']).toEqual([{ index: 1, code: 'payload_too_large', message: expect.any(String) }]);
    });
  });

  describe('normalization', () => {
    it('corrects clock skew exactly to the millisecond', async () => {
      now = Date.parse('2026-11-21T10:00:00.000Z');
      const messageId = mid('skew');
      // The client clock is 1 h 0.250 s behind; the call was made 1.5 s before it was sent.
      await post(
        t.url,
        '/v1/track',
        { userId: 'u', event: 'Skew', messageId, timestamp: '2026-11-21T08:59:58.250Z', sentAt: '2026-11-21T08:59:59.750Z' },
        { writeKey: t.writeKey },
      );
      const call = (await lastCalls()).find((c) => c.messageId === messageId);
      expect(call).toMatchObject({
        timestamp: '2026-11-21T09:59:58.500Z',
        originalTimestamp: '2026-11-21T08:59:58.250Z',
        sentAt: '2026-11-21T08:59:59.750Z',
        receivedAt: '2026-11-21T10:00:00.000Z',
      });
      now = RECEIVED_AT;
    });
    it("uses the batch envelope's sentAt for items without their own", async () => {
      now = Date.parse('2026-11-21T10:00:00.000Z');
      const messageId = mid('envsent');
      await post(
        t.url,
        '/v1/batch',
        {
          sentAt: '2026-11-21T10:00:05.000Z',
          batch: [{ type: 'track', userId: 'u', event: 'E', messageId, timestamp: '2026-11-21T10:00:04.000Z' }],
        },
        { writeKey: t.writeKey },
      );
      expect((await lastCalls()).find((c) => c.messageId === messageId)).toMatchObject({
        timestamp: '2026-11-21T09:59:59.000Z',
        sentAt: '2026-11-21T10:00:05.000Z',
      });
      now = RECEIVED_AT;
    });
    it('parses a Go-v2-style timestamp with a colon-less offset', async () => {
      const messageId = mid('go');
      await post(
        t.url,
        '/v1/track',
        { userId: 'u', event: 'Go', messageId, timestamp: '2016-04-26T11:14:48-0700' },
        { writeKey: t.writeKey },
      );
      const call = (await lastCalls()).find((c) => c.messageId === messageId);
      expect(call).toMatchObject({ timestamp: '2016-04-26T18:14:48.000Z', originalTimestamp: '2016-04-26T18:14:48.000Z' });
    });
    it('treats an unparseable timestamp as absent and stamps receivedAt', async () => {
      const messageId = mid('badts');
      await post(t.url, '/v1/track', { userId: 'u', event: 'E', messageId, timestamp: 'yesterday at noon' }, { writeKey: t.writeKey });
      const call = (await lastCalls()).find((c) => c.messageId === messageId);
      expect(call?.timestamp).toBe(new Date(now).toISOString());
      expect(call).not.toHaveProperty('originalTimestamp');
    });
    it('generates a messageId when the call has none', async () => {
      const before = (await lastCalls()).length;
      await post(t.url, '/v1/track', { userId: 'no-id-user', event: 'NoId' }, { writeKey: t.writeKey });
      const calls = await lastCalls();
      expect(calls.length).toBe(before + 1);
      const call = calls.find((c) => c.userId === 'no-id-user');
      expect(call?.messageId).toMatch(/^[0-9a-f-]{36}$/);
    });
  });

  describe('dedupe', () => {
    it('enqueues a repeated messageId once and still answers 200', async () => {
      const messageId = mid('dup');
      for (let i = 0; i < 3; i++) {
        const res = await post(t.url, '/v1/track', { userId: 'u', event: `Dup ${i}`, messageId }, { writeKey: t.writeKey });
        expect(res).toMatchObject({ status: 200, json: { success: true } });
      }
      await post(
        t.url,
        '/v1/batch',
        {
          batch: [
            { type: 'track', userId: 'u', event: 'Dup batch', messageId },
            { type: 'track', userId: 'u', event: 'Dup batch', messageId },
          ],
        },
        { writeKey: t.writeKey },
      );
      const calls = (await lastCalls()).filter((c) => c.messageId === messageId);
      expect(calls).toHaveLength(1);
      expect(calls[0]?.event).toBe('Dup 0');
    });
    it('dedupes a messageId repeated across requests sent concurrently, once each is answered', async () => {
      const messageId = mid('dupc');
      const first = await Promise.all(
        Array.from({ length: 5 }, () =>
          post(t.url, '/v1/track', { userId: 'u', event: 'Concurrent', messageId }, { writeKey: t.writeKey }),
        ),
      );
      expect(first.map((a) => a.status)).toEqual([200, 200, 200, 200, 200]);
      const enqueued = (await lastCalls()).filter((c) => c.messageId === messageId).length;
      // Requests in flight together may each pass the gate (the router's job ids absorb that);
      // once they are answered, the id is remembered and no later repeat is enqueued.
      expect(enqueued).toBeGreaterThanOrEqual(1);
      await post(t.url, '/v1/track', { userId: 'u', event: 'Later', messageId }, { writeKey: t.writeKey });
      expect((await lastCalls()).filter((c) => c.messageId === messageId)).toHaveLength(enqueued);
    });
  });
});

describe('intake limits on load', () => {
  it('answers 429 with Retry-After and X-RateLimit-Reset over the per-source limit', async () => {
    // Answered at once: the reset is compared with this test's clock (holding is tested in source-budgets).
    const t = await startTestIngest({ label: 'rate', source: { rateLimitPerSecond: 3 }, env: { INGEST_REFUSAL_HOLD_MS: '0' } });
    try {
      const answers: Awaited<ReturnType<typeof post>>[] = [];
      for (let i = 0; i < 10; i++)
        answers.push(await post(t.url, '/v1/track', { userId: 'u', event: 'Rate', messageId: `rate-${i}` }, { writeKey: t.writeKey }));
      const limited = answers.filter((a) => a.status === 429);
      expect(limited.length).toBeGreaterThanOrEqual(1);
      const first = limited[0];
      expect(first?.json).toMatchObject({ success: false, code: 'rate_limited' });
      expect(Number(first?.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(Number(first?.headers.get('x-ratelimit-reset'))).toBeGreaterThan(Date.now() / 1000 - 1);
      const enqueued = (await t.routeJobs()).flatMap((j) => j.calls).length;
      expect(enqueued).toBe(answers.filter((a) => a.status === 200).length);
    } finally {
      await t.close();
    }
  });

  it('counts calls, not requests: a batch that does not fit is answered 429 whole and nothing of it is stored', async () => {
    let now = Date.parse('2026-11-21T09:30:00.200Z');
    const t = await startTestIngest({ label: 'rate-calls', clock: () => now, source: { rateLimitPerSecond: 10 } });
    try {
      const batch = (tag: string, n: number) => ({
        batch: Array.from({ length: n }, (_, i) => ({ type: 'track', userId: 'u', event: 'E', messageId: `${tag}-${i}` })),
      });
      expect((await post(t.url, '/v1/batch', batch('first', 6), { writeKey: t.writeKey })).status).toBe(200);
      const over = await post(t.url, '/v1/batch', batch('over', 6), { writeKey: t.writeKey });
      expect(over).toMatchObject({
        status: 429,
        json: { success: false, code: 'rate_limited', message: expect.stringMatching(/calls per second/) },
      });
      expect(over.headers.get('retry-after')).toBe('1');
      expect(over.headers.get('x-ratelimit-reset')).toBe(String(Math.floor(now / 1000) + 1));
      // 6 calls at 10/s are paid for until 600 ms from now, 6 more would run 1.2 s ahead: the batch
      // fits 200 ms from now (X-RateLimit-Reset, rounded up), and a single call is answered 429 too
      // until then (known over the limit).
      expect((await post(t.url, '/v1/track', { userId: 'u', event: 'E', messageId: 'single' }, { writeKey: t.writeKey })).status).toBe(429);
      now += 1000;
      expect((await post(t.url, '/v1/batch', batch('next', 10), { writeKey: t.writeKey })).status).toBe(200);
      const stored = (await t.routeJobs()).flatMap((j) => j.calls.map((c) => c.messageId)).sort();
      expect(stored).toEqual([...batch('first', 6).batch, ...batch('next', 10).batch].map((c) => c.messageId).sort());
    } finally {
      await t.close();
    }
  });

  it('answers 503 with Retry-After while the route queue is over its depth limit', async () => {
    const t = await startTestIngest({ label: 'depth', env: { INGEST_MAX_QUEUE_DEPTH: '2' } });
    try {
      for (let i = 0; i < 2; i++)
        expect(
          (await post(t.url, '/v1/track', { userId: 'u', event: 'Fill', messageId: `fill-${i}` }, { writeKey: t.writeKey })).status,
        ).toBe(200);
      // The depth is polled every 500 ms, so a request or two may still pass before the guard sees it.
      let res;
      let messageId;
      const deadline = Date.now() + 5000;
      do {
        await new Promise((r) => setTimeout(r, 100));
        messageId = `over-${Date.now()}`;
        res = await post(t.url, '/v1/track', { userId: 'u', event: 'Over', messageId }, { writeKey: t.writeKey });
      } while (res.status === 200 && Date.now() < deadline);
      expect(res).toMatchObject({ status: 503, json: { success: false, code: 'service_unavailable' } });
      expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
      const refused = messageId;
      expect((await t.routeJobs()).some((j) => j.calls.some((c) => c.messageId === refused))).toBe(false);
    } finally {
      await t.close();
    }
  });

  it('accepts a write key added to Redis within 2 seconds, without a restart', async () => {
    const t = await startTestIngest({ label: 'newkey' });
    try {
      const newKey = `fresh_${Date.now()}`;
      expect((await post(t.url, '/v1/track', { userId: 'u', event: 'E' }, { writeKey: newKey })).status).toBe(401);
      await t.store.apply({ sources: [{ id: 'src-new', name: 'New', type: 'web', writeKey: newKey }], destinations: [], audiences: [] });
      const added = Date.now();
      let status = 0;
      while (Date.now() - added < 2000) {
        status = (await post(t.url, '/v1/track', { userId: 'u', event: 'E' }, { writeKey: newKey })).status;
        if (status === 200) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(status).toBe(200);
      expect((await t.routeJobs()).some((j) => j.sourceId === 'src-new')).toBe(true);
    } finally {
      await t.close();
    }
  });
});
