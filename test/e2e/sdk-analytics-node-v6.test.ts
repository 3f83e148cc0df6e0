/**
 * The old `analytics-node` 6.x (Segment's previous Node library, axios 0.27), unmodified, against
 * the real intake (docs/spec.md §2 lists it by name). Configured by `host` only, plus flushAt,
 * flushInterval and retryCount so a broken intake fails the test at once; errorHandler only
 * collects errors (without it a failed first flush is an unhandled rejection).
 */
import Analytics from 'analytics-node';
import { basicAuthUser, decodeJsonBody } from './wire-recorder';
import { describeSdkCompat, packageVersion, type CallType, type SdkHarness, type SdkOutcome } from './sdk-compat-suite';

const VERSION = packageVersion('analytics-node');

function createHarness(host: string, writeKey: string, retryCount: number): SdkHarness {
  const errors: unknown[] = [];
  const client = new Analytics(writeKey, { host, flushAt: 50, flushInterval: 10_000, retryCount, errorHandler: (err) => errors.push(err) });
  const flushAll = async () => {
    // flush() sends at most flushAt calls per request; loop until the SDK's queue is empty.
    for (let i = 0; i < 10 && client.queue.length > 0; i++) await client.flush();
  };
  return {
    errors,
    send: (type: CallType, message) =>
      new Promise<SdkOutcome>((resolve) => {
        client[type](message, (err, data) => {
          // The callback gets the whole batch it travelled in; this call is the item of its type and event.
          const item = data?.batch.find(
            (m) =>
              m['type'] === type &&
              m['event'] === message['event'] &&
              (message['messageId'] === undefined || m['messageId'] === message['messageId']),
          );
          const messageId = item?.['messageId'];
          resolve({ ...(err ? { error: err } : {}), ...(typeof messageId === 'string' ? { messageId } : {}) });
        });
      }),
    flush: flushAll,
    // The SDK has no close(): a final flush clears its interval timer.
    close: () => flushAll().catch(() => undefined),
  };
}

describeSdkCompat({
  label: `analytics-node ${VERSION}`,
  types: ['identify', 'track', 'page', 'screen', 'group', 'alias'],
  exposesMessageId: true,
  create: (host, writeKey) => createHarness(host, writeKey, 0),
  // axios-retry, first delay about 200 ms
  createRetrying: (host, writeKey) => createHarness(host, writeKey, 2),
  expectedContext: (_type, callerContext) => ({ library: { name: 'analytics-node', version: VERSION }, ...callerContext }),
  wireFacts: {
    title: 'sends POST /v1/batch, Content-Type application/json, no Content-Encoding, Basic auth with the write key as user name',
    check(exchanges, writeKey) {
      // The very first call is flushed on its own at once; the rest go in the explicit flush.
      expect(exchanges.map((e) => (decodeJsonBody(e)['batch'] as unknown[]).length).sort()).toEqual([1, 6]);
      for (const e of exchanges) {
        expect({ method: e.method, path: e.path }).toEqual({ method: 'POST', path: '/v1/batch' });
        expect(e.headers['content-type']).toBe('application/json');
        expect(e.headers['content-encoding']).toBeUndefined();
        expect(e.headers['user-agent']).toBe(`analytics-node/${VERSION}`);
        expect(e.headers['authorization']).toBe(`Basic ${Buffer.from(`${writeKey}:`).toString('base64')}`);
        expect(basicAuthUser(e)).toBe(writeKey);
        expect(Object.keys(decodeJsonBody(e)).sort()).toEqual(['batch', 'sentAt', 'timestamp']);
      }
    },
  },
});
