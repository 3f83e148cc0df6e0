import { RequestError, type ConfigSnapshot, type Destination, type Source } from '@eventrelay/config';
import { TEST_SEND_USER_ID, assertFiltersSend, sampleCall, testSendTarget } from './test-send';

const source = (id: string): Source => ({ id, name: id, type: 'server', writeKey: `wk-${id}` });
const destination = (extra: Partial<Destination> = {}): Destination => ({
  id: 'd1',
  name: 'Webhooks',
  enabled: true,
  sourceIds: ['s1', 's2'],
  settings: { webhooks: [{ url: 'https://a' }] },
  ...extra,
});
const snapshot = (d: Destination): ConfigSnapshot => ({
  version: 1,
  sources: new Map([
    ['s1', source('s1')],
    ['s2', source('s2')],
  ]),
  destinations: new Map([[d.id, d]]),
  audiences: new Map(),
});

const thrown = (f: () => unknown): RequestError => {
  try {
    f();
  } catch (err) {
    if (err instanceof RequestError) return err;
  }
  throw new Error('no RequestError');
};

describe('sampleCall', () => {
  const now = '2026-11-21T09:30:00.000Z';

  it.each(['identify', 'track', 'page', 'screen', 'group', 'alias'] as const)('makes a %s call marked as a test', (type) => {
    const call = sampleCall(type, 'test-1', now, 'd1');
    expect(call).toMatchObject({ type, messageId: 'test-1', userId: TEST_SEND_USER_ID, timestamp: now, receivedAt: now });
    expect(call.context).toMatchObject({ eventrelayTestSend: true });
    // Only this destination: every Webhooks destination shares the name, so the id picks it.
    expect(call.integrations).toEqual({ All: false, d1: true });
  });

  it('gives each type what its body needs', () => {
    expect(sampleCall('track', 'm', now, 'd1').event).toBe('Order Completed');
    expect(sampleCall('identify', 'm', now, 'd1').traits).toMatchObject({ email: 'test@example.com' });
    expect(sampleCall('group', 'm', now, 'd1').groupId).toBe('test-group-1');
    expect(sampleCall('alias', 'm', now, 'd1').previousId).toBe('eventrelay-test-anonymous');
    expect(sampleCall('screen', 'm', now, 'd1').context).toMatchObject({
      device: { type: 'ios' },
      os: { name: 'iOS' },
      app: { name: 'Example' },
    });
    expect(sampleCall('page', 'm', now, 'd1').properties).toMatchObject({ path: '/pricing' });
  });
});

describe('testSendTarget', () => {
  it('takes the first connected source by default, or the one asked for', () => {
    const d = destination();
    expect(testSendTarget(snapshot(d), 'd1', { type: 'track' }).source.id).toBe('s1');
    expect(testSendTarget(snapshot(d), 'd1', { type: 'track', sourceId: 's2' }).source.id).toBe('s2');
  });

  it('refuses a source that is not connected, naming the field', () => {
    const err = thrown(() => testSendTarget(snapshot(destination({ sourceIds: ['s1'] })), 'd1', { type: 'track', sourceId: 's2' }));
    expect(err.code).toBe('invalid_request');
    expect(err.fields).toEqual([{ field: 'sourceId', message: expect.stringContaining('s1') }]);
  });

  it('is a conflict for a disabled destination or one without a source', () => {
    expect(thrown(() => testSendTarget(snapshot(destination({ enabled: false })), 'd1', { type: 'track' })).code).toBe('conflict');
    const lonely = thrown(() => testSendTarget(snapshot(destination({ sourceIds: [] })), 'd1', { type: 'track' }));
    expect(lonely.code).toBe('conflict');
    expect(lonely.message).toContain('no source');
  });

  it('is a conflict for a destination whose id is also All or its name: the call could not pick it alone', () => {
    for (const id of ['All', 'Webhooks']) {
      const err = thrown(() => testSendTarget(snapshot(destination({ id })), id, { type: 'track' }));
      expect(err.code).toBe('conflict');
      expect(err.message).toContain('integrations key');
    }
  });

  it('is not_found for an unknown destination', () => {
    expect(thrown(() => testSendTarget(snapshot(destination()), 'nope', { type: 'track' })).code).toBe('not_found');
  });
});

describe('assertFiltersSend', () => {
  const call = sampleCall('track', 'test-1', '2026-11-27T10:00:00.000Z', 'd1');

  it('lets through a call the destination’s rules send', () => {
    expect(() => assertFiltersSend(destination({ filters: [{ only: { field: { path: 'type', equals: 'track' } } }] }), call)).not.toThrow();
    expect(() => assertFiltersSend(destination(), call)).not.toThrow();
  });

  it('is a conflict naming the rule that would keep the test call from arriving', () => {
    const err = thrown(() =>
      assertFiltersSend(
        destination({
          filters: [{ dropFields: ['context.ip'] }, { name: 'pages only', only: { field: { path: 'type', equals: 'page' } } }],
        }),
        call,
      ),
    );
    expect(err.code).toBe('conflict');
    expect(err.message).toContain('filters[1] ("pages only")');
    expect(err.message).toContain('its only condition does not hold');
    expect(err.message).toContain('POST /destinations/d1/preview');
  });
});
