import type { Destination, NormalizedCall, RouteJob } from '@eventrelay/config';
import { deliveryJobId } from '@eventrelay/config';
import { planRoute } from './plan-route.js';
import type { Suppression } from './suppression.js';

const SRC = 'src-1';

const call = (messageId: string, extra: Partial<NormalizedCall> = {}): NormalizedCall => ({
  type: 'track',
  messageId,
  userId: 'u-1',
  event: 'E',
  timestamp: '2026-11-21T09:30:00.000Z',
  receivedAt: '2026-11-21T09:30:00.000Z',
  ...extra,
});

const destination = (id: string, extra: Partial<Destination> = {}): Destination => ({
  id,
  name: 'Webhooks',
  enabled: true,
  sourceIds: [SRC],
  settings: { webhooks: [{ url: `https://${id}.example/hook` }] },
  ...extra,
});

const job = (calls: NormalizedCall[], sourceId = SRC): RouteJob => ({ sourceId, requestId: 'req-1', calls });
const none = new Map<string, Suppression>();
const aliceEverywhere = new Map<string, Suppression>([['alice', { allSources: true }]]);

describe('planRoute', () => {
  it('plans one delivery per call × destination, with deterministic ids', () => {
    const calls = [call('m-1'), call('m-2'), call('m-3')];
    const plan = planRoute(job(calls), [destination('d1'), destination('d2')], none);
    expect(plan.suppressed).toBe(0);
    expect(plan.unrouted).toBe(0);
    expect(plan.deliveries).toHaveLength(6);
    const pairs = plan.deliveries.map((d) => `${d.data.call.messageId}→${d.data.destinationId}`);
    expect(new Set(pairs)).toEqual(new Set(['m-1→d1', 'm-1→d2', 'm-2→d1', 'm-2→d2', 'm-3→d1', 'm-3→d2']));
    for (const d of plan.deliveries) {
      expect(d.jobId).toBe(deliveryJobId(d.data.destinationId, SRC, d.data.call.messageId));
      expect(d.data.sourceId).toBe(SRC);
      expect(d.data).not.toHaveProperty('retry');
    }
    expect(new Set(plan.deliveries.map((d) => d.jobId)).size).toBe(6);
  });

  it('counts what integrations turned off per call and destination, and the fan-out of each call', () => {
    const calls = [
      call('m-1'),
      call('m-2', { integrations: { All: false } }),
      call('m-3', { integrations: { Webhooks: false } }),
      call('m-4', { integrations: { All: false, Webhooks: true } }),
    ];
    const connected = [destination('d1'), destination('d2'), destination('d3', { enabled: false })];
    const plan = planRoute(job(calls), connected, none);
    // d3 is disabled: not "turned off" by a call. m-2 and m-3 each turn off d1 and d2.
    expect(plan.turnedOff).toBe(4);
    expect(plan.fanout).toEqual([2, 0, 0, 2]);
    expect(plan.unrouted).toBe(2);
    expect(plan.deliveries).toHaveLength(4);
  });

  it('carries the call unchanged', () => {
    const c = call('m-1', { properties: { a: 1 }, context: { ip: '203.0.113.9' }, integrations: { All: true } });
    const plan = planRoute(job([c]), [destination('d1')], none);
    expect(plan.deliveries[0]!.data).toEqual({ sourceId: SRC, destinationId: 'd1', call: c });
  });

  it('gives the same plan for the same job: routing twice yields the same job ids', () => {
    const r = job([call('m-1'), call('m-2')]);
    const first = planRoute(r, [destination('d1')], none);
    const second = planRoute({ ...r, requestId: 'req-2' }, [destination('d1')], none);
    expect(second.deliveries.map((d) => d.jobId)).toEqual(first.deliveries.map((d) => d.jobId));
  });

  it('skips disabled destinations and honours integrations per call', () => {
    const plan = planRoute(
      job([call('on'), call('off', { integrations: { All: false } }), call('back-on', { integrations: { All: false, Webhooks: true } }), call('webhooks-off', { integrations: { Webhooks: false } })]),
      [destination('d1'), destination('disabled', { enabled: false })],
      none,
    );
    expect(plan.deliveries.map((d) => `${d.data.call.messageId}→${d.data.destinationId}`)).toEqual(['on→d1', 'back-on→d1']);
    expect(plan.unrouted).toBe(2);
    expect(plan.suppressed).toBe(0);
  });

  it('counts every call as unrouted when no destination is connected', () => {
    const plan = planRoute(job([call('m-1'), call('m-2')]), [], none);
    expect(plan).toMatchObject({ deliveries: [], suppressed: 0, unrouted: 2 });
    // Profiles are kept whether or not a destination takes the call.
    expect(plan.profileCalls.map((c) => c.messageId)).toEqual(['m-1', 'm-2']);
  });

  it('counts calls that only reach a disabled destination as unrouted', () => {
    expect(planRoute(job([call('m-1')]), [destination('d', { enabled: false })], none)).toMatchObject({ deliveries: [], suppressed: 0, unrouted: 1 });
  });

  describe('suppression', () => {
    const calls = [call('a-1', { userId: 'alice' }), call('b-1', { userId: 'bob' }), call('anon-1', { userId: undefined, anonymousId: 'x' }), call('a-2', { userId: 'alice' })];

    it('drops every call of a user suppressed for all sources', () => {
      const plan = planRoute(job(calls), [destination('d1')], aliceEverywhere);
      expect(plan.deliveries.map((d) => d.data.call.messageId)).toEqual(['b-1', 'anon-1']);
      expect(plan.suppressed).toBe(2);
      expect(plan.unrouted).toBe(0);
    });

    it('drops a user’s calls from the listed sources only', () => {
      const suppressions = new Map<string, Suppression>([['alice', { allSources: false, sourceIds: [SRC] }]]);
      expect(planRoute(job(calls), [destination('d1')], suppressions).suppressed).toBe(2);
      const other = planRoute(job(calls, 'src-2'), [destination('d1', { sourceIds: ['src-2'] })], suppressions);
      expect(other.suppressed).toBe(0);
      expect(other.deliveries.map((d) => d.data.call.messageId)).toEqual(['a-1', 'b-1', 'anon-1', 'a-2']);
    });

    it('counts a suppressed call once, however many destinations, and not as unrouted', () => {
      const plan = planRoute(job([call('a-1', { userId: 'alice' })]), [destination('d1'), destination('d2')], aliceEverywhere);
      expect(plan).toEqual({ deliveries: [], suppressed: 1, unrouted: 0, turnedOff: 0, fanout: [0], profileCalls: [] });
    });

    it('suppresses before integrations are looked at', () => {
      const plan = planRoute(job([call('a-1', { userId: 'alice', integrations: { All: false } })]), [destination('d1')], aliceEverywhere);
      expect(plan).toEqual({ deliveries: [], suppressed: 1, unrouted: 0, turnedOff: 0, fanout: [0], profileCalls: [] });
    });
  });

  describe('profile calls', () => {
    it('keeps identify and track calls with a userId, with only what a profile needs', () => {
      const calls = [
        call('t-1', { properties: { plan: 'pro' }, context: { ip: '1.2.3.4' } }),
        call('i-1', { type: 'identify', event: undefined, traits: { plan: 'trial' } }),
        call('i-2', { type: 'identify', event: undefined }),
        call('p-1', { type: 'page', event: undefined, name: 'Home' }),
        call('g-1', { type: 'group', event: undefined, groupId: 'g' }),
        call('a-1', { type: 'track', userId: undefined, anonymousId: 'anon' }),
      ];
      expect(planRoute(job(calls), [destination('d')], none).profileCalls).toEqual([
        { type: 'track', messageId: 't-1', userId: 'u-1', timestamp: '2026-11-21T09:30:00.000Z', event: 'E' },
        { type: 'identify', messageId: 'i-1', userId: 'u-1', timestamp: '2026-11-21T09:30:00.000Z', traits: { plan: 'trial' } },
        { type: 'identify', messageId: 'i-2', userId: 'u-1', timestamp: '2026-11-21T09:30:00.000Z' },
      ]);
    });

    it('leaves out suppressed users', () => {
      const plan = planRoute(job([call('m-1', { userId: 'alice' }), call('m-2', { userId: 'bob' })]), [destination('d')], aliceEverywhere);
      expect(plan.profileCalls.map((c) => c.userId)).toEqual(['bob']);
    });
  });
});
