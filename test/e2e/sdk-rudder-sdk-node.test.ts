/**
 * @rudderstack/rudder-sdk-node 3.x (axios 1.x, gzip on by default), unmodified, against the real
 * intake (docs/spec.md §2 lists it by name). Configured by `dataPlaneUrl` only, plus flushAt,
 * flushInterval and retryCount so a broken intake fails the test at once; errorHandler only
 * collects errors.
 */
import RudderAnalytics from '@rudderstack/rudder-sdk-node';
import { basicAuthUser, decodeJsonBody } from './wire-recorder';
import { describeSdkCompat, packageVersion, type CallType, type SdkHarness, type SdkOutcome } from './sdk-compat-suite';

const VERSION = packageVersion('@rudderstack/rudder-sdk-node');

type LooseCall = (message: Record<string, unknown>, callback: (err?: unknown) => void) => unknown;

function createHarness(host: string, writeKey: string, retryCount: number, logLevel = 'info'): SdkHarness {
  const errors: unknown[] = [];
  const client = new RudderAnalytics(writeKey, {
    dataPlaneUrl: host,
    flushAt: 50,
    flushInterval: 10_000,
    retryCount,
    logLevel,
    errorHandler: (err) => errors.push(err),
  });
  // Its typings declare the callback as () => void, but it is called with the delivery error.
  const methods = client as unknown as Record<CallType, LooseCall>;
  const queue = (client as unknown as { queue: unknown[] }).queue;
  const flushAll = async () => {
    for (let i = 0; i < 10 && queue.length > 0; i++) await client.flush();
  };
  return {
    errors,
    // The callback's data is the gzipped request body, so the SDK does not report messageIds.
    send: (type, message) => new Promise<SdkOutcome>((resolve) => methods[type](message, (err) => resolve(err ? { error: err } : {}))),
    flush: flushAll,
    // The SDK has no close(): a final flush clears its interval timer.
    close: () => flushAll().catch(() => undefined),
  };
}

describeSdkCompat({
  label: `@rudderstack/rudder-sdk-node ${VERSION}`,
  types: ['identify', 'track', 'page', 'screen', 'group', 'alias'],
  exposesMessageId: false,
  create: (host, writeKey) => createHarness(host, writeKey, 0),
  // axios-retry, first delay about 200 ms
  // logLevel none: the 503 it logs is the one the test injects
  createRetrying: (host, writeKey) => createHarness(host, writeKey, 2, 'none'),
  // It copies identify traits into context.traits and names itself analytics-node.
  expectedContext: (type, callerContext, message) => ({
    ...callerContext,
    ...(type === 'identify' ? { traits: message['traits'] } : {}),
    library: { name: 'analytics-node', version: VERSION },
  }),
  wireFacts: {
    title: 'sends POST /v1/batch as gzip with Content-Type application/x-www-form-urlencoded and Basic auth; ingest reads it as JSON',
    check(exchanges, writeKey) {
      // The very first call is flushed on its own at once; the rest go in the explicit flush.
      expect(exchanges.map((e) => (decodeJsonBody(e)['batch'] as unknown[]).length).sort()).toEqual([1, 6]);
      for (const e of exchanges) {
        expect({ method: e.method, path: e.path }).toEqual({ method: 'POST', path: '/v1/batch' });
        // axios 1.x labels the gzipped Buffer as a form; docs/spec.md §2: the body is JSON whatever the Content-Type says
        expect(e.headers['content-type']).toBe('application/x-www-form-urlencoded');
        expect(e.headers['content-encoding']).toBe('gzip');
        expect(e.body.subarray(0, 2)).toEqual(Buffer.from([0x1f, 0x8b]));
        expect(e.headers['user-agent']).toBe(`analytics-node/${VERSION}`);
        expect(e.headers['authorization']).toBe(`Basic ${Buffer.from(`${writeKey}:`).toString('base64')}`);
        expect(basicAuthUser(e)).toBe(writeKey);
        expect(Object.keys(decodeJsonBody(e)).sort()).toEqual(['batch', 'sentAt', 'timestamp']);
        expect(e.status).toBe(200);
      }
    },
  },
});
