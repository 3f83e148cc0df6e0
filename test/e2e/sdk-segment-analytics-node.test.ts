/**
 * @segment/analytics-node 3.x, unmodified, against the real intake (docs/spec.md §2).
 * Configured by `host` only, plus flushAt/flushInterval/maxRetries/httpRequestTimeout so a broken
 * intake fails the test at once instead of after minutes of backoff.
 */
import { Analytics, type Context } from '@segment/analytics-node';
import { basicAuthUser, decodeJsonBody } from './wire-recorder';
import { describeSdkCompat, packageVersion, type CallType, type SdkHarness, type SdkOutcome } from './sdk-compat-suite';

const VERSION = packageVersion('@segment/analytics-node');

function createHarness(host: string, writeKey: string, maxRetries: number): SdkHarness {
  const errors: unknown[] = [];
  const analytics = new Analytics({ writeKey, host, flushAt: 50, flushInterval: 10_000, maxRetries, httpRequestTimeout: 5_000 });
  analytics.on('error', (err) => errors.push(err.reason ?? err));
  const methods = analytics as unknown as Record<
    CallType,
    (message: Record<string, unknown>, cb: (err?: unknown, ctx?: Context) => void) => void
  >;
  let closed: Promise<void> | undefined;
  const close = () => (closed ??= analytics.closeAndFlush({ timeout: 10_000 }));
  return {
    errors,
    send: (type, message) =>
      new Promise<SdkOutcome>((resolve) => {
        methods[type](message, (err, ctx) =>
          resolve({ ...(err !== undefined ? { error: err } : {}), ...(ctx?.event.messageId ? { messageId: ctx.event.messageId } : {}) }),
        );
      }),
    flush: close,
    close,
  };
}

describeSdkCompat({
  label: `@segment/analytics-node ${VERSION}`,
  types: ['identify', 'track', 'page', 'screen', 'group', 'alias'],
  exposesMessageId: true,
  create: (host, writeKey) => createHarness(host, writeKey, 0),
  // its backoff starts at 0.5-1 s per attempt, so one retry is enough
  createRetrying: (host, writeKey) => createHarness(host, writeKey, 1),
  expectedContext: (_type, callerContext) => ({ ...callerContext, library: { name: '@segment/analytics-node', version: VERSION } }),
  wireFacts: {
    title: 'sends one POST /v1/batch, Content-Type application/json, no Content-Encoding, Basic auth and writeKey in the body',
    check(exchanges, writeKey) {
      expect(exchanges).toHaveLength(1);
      for (const e of exchanges) {
        expect({ method: e.method, path: e.path }).toEqual({ method: 'POST', path: '/v1/batch' });
        expect(e.headers['content-type']).toBe('application/json');
        expect(e.headers['content-encoding']).toBeUndefined();
        expect(e.headers['user-agent']).toBe('analytics-node-next/latest');
        expect(e.headers['authorization']).toBe(`Basic ${Buffer.from(`${writeKey}:`).toString('base64')}`);
        expect(basicAuthUser(e)).toBe(writeKey);
        const body = decodeJsonBody(e);
        expect(Object.keys(body).sort()).toEqual(['batch', 'sentAt', 'writeKey']);
        expect(body['writeKey']).toBe(writeKey);
        expect((body['batch'] as unknown[]).length).toBe(7);
      }
    },
  },
});
