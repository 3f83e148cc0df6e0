/**
 * The whole pipeline driven by a real SDK: the unmodified `@segment/analytics-node` (configured by
 * `host` only, plus flush and retry settings so a broken intake fails fast) → ingest → router →
 * webhook-delivery → a receiver of the Webhooks destination with a shared secret. Every call type
 * arrives exactly once, signed, with the body docs/spec.md §4 lists for its type.
 */
import { Analytics, type Context } from '@segment/analytics-node';
import { verifySignature } from '@eventrelay/config';
import { eventually, type ReceivedRequest, type Receiver, startReceiver } from '@eventrelay/testkit';
import { startTestPipeline, webhookDestination, type TestPipeline } from '../support/pipeline';

type CallType = 'identify' | 'track' | 'page' | 'screen' | 'group' | 'alias';
type SdkMethod = (message: Record<string, unknown>, cb: (err?: unknown, ctx?: Context) => void) => void;

const SECRET = 'e2e-shared-secret-\u00e9';
const ISO_UTC_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
/** After the last expected delivery, how long to keep listening for a duplicate. */
const GRACE_MS = 2_000;

const runId = Date.now().toString(36);
const userId = `user-${runId}`;
const anonymousId = `anon-${runId}`;
const screenContext = {
  device: { model: 'Pixel 9', type: 'android' },
  os: { name: 'Android', version: '15' },
  app: { build: '4711', name: 'Pipeline App', version: '2.3.1' },
  locale: 'de-CH',
};

const messages: Record<CallType, Record<string, unknown>> = {
  identify: { userId, traits: { email: 'ada@example.com', plan: 'pro', logins: 3 } },
  track: {
    userId,
    anonymousId,
    event: 'Order Completed',
    properties: { revenue: 19.99, currency: 'EUR', items: [{ sku: 'A-1', qty: 2 }] },
  },
  page: {
    userId,
    name: 'Pricing',
    properties: { path: '/pricing', url: 'https://example.com/pricing', title: 'Pricing', referrer: 'https://example.com/', variant: 'b' },
  },
  screen: { userId, name: 'Settings', properties: { section: 'privacy' }, context: screenContext },
  group: { userId, groupId: `group-${runId}`, traits: { name: 'Analytical Engines Ltd', employees: 42 } },
  alias: { userId, previousId: anonymousId },
};
const TYPES = Object.keys(messages) as CallType[];

/** The exact body keys docs/spec.md §4 lists per type; every call here carries a context (the SDK adds library). */
const expectedKeys: Record<CallType, string[]> = {
  identify: ['version', 'type', 'userId', 'traits', 'timestamp', 'context'],
  track: ['version', 'type', 'userId', 'anonymousId', 'event', 'properties', 'timestamp', 'context'],
  page: ['version', 'type', 'userId', 'properties', 'timestamp', 'context'],
  screen: ['version', 'type', 'userId', 'name', 'timestamp', 'context'],
  group: ['version', 'type', 'groupId', 'userId', 'traits', 'timestamp', 'context'],
  alias: ['version', 'type', 'timestamp', 'Previous ID', 'User ID', 'previousId', 'userId', 'context'],
};

describe('@segment/analytics-node → ingest → router → webhook-delivery → receiver', () => {
  let receiver: Receiver;
  let pipeline: TestPipeline;
  let analytics: Analytics | undefined;
  const sdkErrors: unknown[] = [];
  /** messageId the SDK reported for each call. */
  const sentIds = new Map<CallType, string>();
  let sentAt = 0;
  let deliveries: ReceivedRequest[] = [];

  beforeAll(async () => {
    receiver = await startReceiver();
    pipeline = await startTestPipeline({
      label: 'e2e-sdk',
      ingest: true,
      destinations: [webhookDestination('dest-e2e', [receiver.url], { sharedSecret: SECRET })],
    });
    analytics = new Analytics({
      writeKey: pipeline.writeKey,
      host: pipeline.ingestUrl,
      flushAt: 50,
      flushInterval: 10_000,
      maxRetries: 0,
      httpRequestTimeout: 5_000,
    });
    analytics.on('error', (err) => sdkErrors.push(err.reason ?? err));
    const methods = analytics as unknown as Record<CallType, SdkMethod>;
    sentAt = Date.now();
    const callbacks = TYPES.map(
      (type) =>
        new Promise<void>((resolve, reject) => {
          methods[type].call(analytics, structuredClone(messages[type]), (err, ctx) => {
            if (err !== undefined)
              return reject(new Error(`${type}: the SDK reported ${err instanceof Error ? err.message : JSON.stringify(err)}`));
            const id = ctx?.event.messageId;
            if (!id) return reject(new Error(`${type}: the SDK reported no messageId`));
            sentIds.set(type, id);
            resolve();
          });
        }),
    );
    await analytics.closeAndFlush({ timeout: 10_000 });
    await Promise.all(callbacks);
    analytics = undefined;

    const expected = new Set(sentIds.values());
    await eventually(() => {
      const seen = new Set(receiver.requests.map((r) => r.headers['x-eventrelay-message-id']));
      expect([...expected].filter((id) => !seen.has(id))).toEqual([]);
    }, 20_000);
    // Exactly once means nothing more turns up later either (a retry, a second routing).
    await new Promise((r) => setTimeout(r, GRACE_MS));
    deliveries = [...receiver.requests];
  }, 60_000);

  afterAll(async () => {
    await analytics?.closeAndFlush({ timeout: 2_000 }).catch(() => undefined);
    await pipeline?.close();
    await receiver?.close();
  });

  function deliveryOf(type: CallType): { req: ReceivedRequest; body: Record<string, unknown> } {
    const id = sentIds.get(type);
    const matches = deliveries.filter((r) => r.headers['x-eventrelay-message-id'] === id);
    if (matches.length !== 1) throw new Error(`expected one delivery of the ${type} call ${String(id)}, got ${matches.length}`);
    const req = matches[0]!;
    return { req, body: JSON.parse(req.body.toString('utf8')) as Record<string, unknown> };
  }

  it('the SDK reported no error and six distinct messageIds', () => {
    expect(sdkErrors.map(String)).toEqual([]);
    expect(new Set(sentIds.values()).size).toBe(TYPES.length);
  });

  it('delivers every call exactly once and nothing else', () => {
    const counts = new Map<string, number>();
    for (const r of deliveries) {
      const id = String(r.headers['x-eventrelay-message-id']);
      counts.set(id, (counts.get(id) ?? 0) + 1);
    }
    expect(Object.fromEntries(counts)).toEqual(Object.fromEntries([...sentIds.values()].map((id) => [id, 1])));
  });

  it.each(TYPES)('%s: signed POST with the delivery headers of docs/spec.md §4', (type) => {
    const { req } = deliveryOf(type);
    expect(req.method).toBe('POST');
    expect(req.path).toBe('/hook');
    expect(req.headers['user-agent']).toBe('Eventrelay/1.0');
    expect(req.headers['content-type']).toBe('application/json');
    expect(req.headers['x-eventrelay-attempt']).toBe('1');
    expect(verifySignature(SECRET, req.body, req.headers['x-signature'])).toBe(true);
    // and a signature made with another secret would not pass
    expect(verifySignature(`${SECRET}x`, req.body, req.headers['x-signature'])).toBe(false);
  });

  it.each(TYPES)('%s: exactly the body keys of docs/spec.md §4, version 1, timestamp in ISO UTC with milliseconds', (type) => {
    const { body } = deliveryOf(type);
    expect(Object.keys(body).sort()).toEqual([...expectedKeys[type]].sort());
    expect(body['version']).toBe(1);
    expect(body['type']).toBe(type);
    expect(body['timestamp']).toMatch(ISO_UTC_MS);
    // one machine, one clock: the skew-corrected time lies around the moment the SDK was called
    const ts = Date.parse(body['timestamp'] as string);
    expect(ts).toBeGreaterThanOrEqual(sentAt - 5_000);
    expect(ts).toBeLessThanOrEqual(Date.now());
    // the SDK adds its library to the context it sends
    expect(body['context']).toMatchObject({ library: { name: '@segment/analytics-node' } });
  });

  it('identify carries userId and traits', () => {
    expect(deliveryOf('identify').body).toMatchObject({ userId, traits: messages.identify['traits'] });
  });

  it('track carries userId, anonymousId, event and properties', () => {
    expect(deliveryOf('track').body).toMatchObject({
      userId,
      anonymousId,
      event: 'Order Completed',
      properties: messages.track['properties'],
    });
  });

  it('page carries userId and properties with path, referrer, title, url and the custom keys', () => {
    const { body } = deliveryOf('page');
    expect(body['userId']).toBe(userId);
    expect(body['properties']).toMatchObject(messages.page['properties'] as Record<string, unknown>);
  });

  it('screen carries userId, name and the device, os and app context', () => {
    const { body } = deliveryOf('screen');
    expect(body).toMatchObject({ userId, name: 'Settings' });
    expect(body['context']).toMatchObject(screenContext);
  });

  it('group carries groupId, userId and traits', () => {
    expect(deliveryOf('group').body).toMatchObject({ userId, groupId: `group-${runId}`, traits: messages.group['traits'] });
  });

  it('alias carries "Previous ID"/"User ID" and previousId/userId with the same values', () => {
    expect(deliveryOf('alias').body).toMatchObject({ 'Previous ID': anonymousId, 'User ID': userId, previousId: anonymousId, userId });
  });

  it('records one successful first attempt per call in the attempt log', async () => {
    const attempts = await pipeline.attempts('dest-e2e');
    expect(
      attempts
        .map((a) => ({ messageId: a.messageId, outcome: a.outcome, attempt: a.attempt, status: a.status }))
        .sort((a, b) => a.messageId.localeCompare(b.messageId)),
    ).toEqual([...sentIds.values()].sort().map((messageId) => ({ messageId, outcome: 'success', attempt: 1, status: 200 })));
  });
});
