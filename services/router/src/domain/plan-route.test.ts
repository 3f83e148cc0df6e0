import { routeEntryOf, type Destination, type NormalizedCall, type RouteEntry } from '@eventrelay/config';
import { refusalsOf } from './filtering.js';
import { planRoute, type RoutePlan } from './plan-route.js';
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

/** A batch's route entries as ingest writes them for one request: calls numbered in order, all of one source by default. */
const entries = (calls: NormalizedCall[], sourceId = SRC, part = 0): RouteEntry[] =>
  calls.map((c, i) => routeEntryOf(c, sourceId, part + i, part));
/** The destinations connected to a source: the given ones that list it. */
const connectedTo = (destinations: Destination[]) => (sourceId: string) => destinations.filter((d) => d.sourceIds.includes(sourceId));
const none = new Map<string, Suppression>();
/** The sources some audience reads: SRC's calls feed profiles. */
const audienced: ReadonlySet<string> = new Set([SRC]);
const aliceEverywhere = new Map<string, Suppression>([['alice', { allSources: true }]]);

/** "messageId→destination" for every (call, destination) pair of a plan, from the entries' indexes. */
function pairs(plan: RoutePlan, batch: readonly RouteEntry[]): string[] {
  return plan.deliveries.flatMap((d) => d.parts.flatMap((p) => p.indexes.map((i) => `${batch[i]!.messageId}→${d.destinationId}`)));
}

describe('planRoute', () => {
  it('plans one delivery per destination holding every call of the batch bound for it, by index', () => {
    const batch = entries([call('m-1'), call('m-2'), call('m-3')]);
    const plan = planRoute(batch, connectedTo([destination('d1'), destination('d2')]), none, audienced);
    expect(plan.deliveries).toEqual([
      { destinationId: 'd1', parts: [{ part: 0, sourceId: SRC, indexes: [0, 1, 2] }] },
      { destinationId: 'd2', parts: [{ part: 0, sourceId: SRC, indexes: [0, 1, 2] }] },
    ]);
    expect(plan.routedPairs).toBe(6);
    expect(plan.suppressed).toBe(0);
    expect(plan.unrouted).toBe(0);
  });

  it('groups the calls of several sources by source, each to the destinations connected to it', () => {
    const batch = [...entries([call('a-1'), call('a-2')], 'src-a'), ...entries([call('b-1')], 'src-b', 2)];
    const shared = destination('shared', { sourceIds: ['src-a', 'src-b'] });
    const onlyB = destination('only-b', { sourceIds: ['src-b'] });
    const plan = planRoute(batch, connectedTo([shared, onlyB]), none, audienced);
    expect(plan.deliveries).toEqual([
      {
        destinationId: 'shared',
        parts: [
          { part: 0, sourceId: 'src-a', indexes: [0, 1] },
          { part: 2, sourceId: 'src-b', indexes: [2] },
        ],
      },
      { destinationId: 'only-b', parts: [{ part: 2, sourceId: 'src-b', indexes: [2] }] },
    ]);
    expect(plan.fanout).toEqual([1, 1, 2]);
  });

  it('counts what integrations turned off per call and destination, and the fan-out of each call', () => {
    const batch = entries([
      call('m-1'),
      call('m-2', { integrations: { All: false } }),
      call('m-3', { integrations: { Webhooks: false } }),
      call('m-4', { integrations: { All: false, Webhooks: true } }),
    ]);
    const plan = planRoute(
      batch,
      connectedTo([destination('d1'), destination('d2'), destination('d3', { enabled: false })]),
      none,
      audienced,
    );
    // d3 is disabled: not "turned off" by a call. m-2 and m-3 each turn off d1 and d2.
    expect(plan.turnedOff).toBe(4);
    expect(plan.fanout).toEqual([2, 0, 0, 2]);
    expect(plan.unrouted).toBe(2);
    expect(plan.routedPairs).toBe(4);
    expect(pairs(plan, batch)).toEqual(['m-1→d1', 'm-4→d1', 'm-1→d2', 'm-4→d2']);
  });

  it('gives the same plan for the same entries: routing twice names the same calls', () => {
    const batch = entries([call('m-1'), call('m-2')]);
    expect(planRoute(batch, connectedTo([destination('d1')]), none, audienced)).toEqual(
      planRoute(batch, connectedTo([destination('d1')]), none, audienced),
    );
  });

  it('skips disabled destinations and honours integrations per call', () => {
    const batch = entries([
      call('on'),
      call('off', { integrations: { All: false } }),
      call('back-on', { integrations: { All: false, Webhooks: true } }),
      call('webhooks-off', { integrations: { Webhooks: false } }),
    ]);
    const plan = planRoute(batch, connectedTo([destination('d1'), destination('disabled', { enabled: false })]), none, audienced);
    expect(pairs(plan, batch)).toEqual(['on→d1', 'back-on→d1']);
    expect(plan.unrouted).toBe(2);
    expect(plan.suppressed).toBe(0);
  });

  it('counts every call as unrouted when no destination is connected', () => {
    const plan = planRoute(entries([call('m-1'), call('m-2')]), () => [], none, audienced);
    expect(plan).toMatchObject({ deliveries: [], routedPairs: 0, suppressed: 0, unrouted: 2 });
    // Profiles are kept whether or not a destination takes the call.
    expect(plan.profiles).toEqual([
      { sourceId: SRC, calls: [expect.objectContaining({ messageId: 'm-1' }), expect.objectContaining({ messageId: 'm-2' })] },
    ]);
  });

  it('counts calls that only reach a disabled destination as unrouted', () => {
    expect(planRoute(entries([call('m-1')]), connectedTo([destination('d', { enabled: false })]), none, audienced)).toMatchObject({
      deliveries: [],
      suppressed: 0,
      unrouted: 1,
    });
  });

  describe('destination filters', () => {
    const orders = destination('orders', { filters: [{ name: 'orders', only: { field: { path: 'event', matches: 'Order *' } } }] });
    const noTests = destination('no-tests', { filters: [{ drop: { field: { path: 'properties.test', equals: true } } }] });
    const batch = [
      call('m-1', { event: 'Order Completed', properties: { test: true } }),
      call('m-2', { event: 'Signed Up' }),
      call('m-3', { event: 'Order Refunded' }),
    ];
    /** What the route job hands planRoute: the rules' refusals, testing the whole calls when given. */
    const refusedBy = (whole?: ReadonlyMap<number, NormalizedCall>) => (e: RouteEntry, d: Destination) =>
      refusalsOf(e, [d], whole?.get(e.index))?.get(d.id);

    it('leaves out the calls a drop rule holds for, or an only rule does not, counting each by how', () => {
      const routed = entries(batch);
      const whole = new Map(batch.map((c, i) => [i, c]));
      const plan = planRoute(routed, connectedTo([orders, noTests, destination('all')]), none, audienced, refusedBy(whole));
      expect(pairs(plan, routed).sort()).toEqual(
        ['m-1→all', 'm-1→orders', 'm-2→all', 'm-2→no-tests', 'm-3→all', 'm-3→no-tests', 'm-3→orders'].sort(),
      );
      expect(plan.filtered).toEqual({ drop: 1, only: 1 });
      expect(plan.fanout).toEqual([2, 2, 3]);
      expect(plan.routedPairs).toBe(7);
    });

    it('tests the route entry when the whole call was not read: a field the entry lacks is absent', () => {
      const routed = entries(batch);
      // properties.test is not in a route entry: without the call, the drop rule never holds.
      const plan = planRoute(routed, connectedTo([noTests]), none, audienced, refusedBy());
      expect(plan.filtered).toEqual({ drop: 0, only: 0 });
      expect(plan.routedPairs).toBe(3);
    });

    it('counts a call that every destination filtered out as unrouted', () => {
      const routed = entries([call('m-1', { event: 'Signed Up' })]);
      expect(planRoute(routed, connectedTo([orders]), none, audienced, refusedBy())).toMatchObject({
        deliveries: [],
        unrouted: 1,
        filtered: { drop: 0, only: 1 },
      });
    });
  });

  describe('suppression', () => {
    const calls = [
      call('a-1', { userId: 'alice' }),
      call('b-1', { userId: 'bob' }),
      call('anon-1', { userId: undefined, anonymousId: 'x' }),
      call('a-2', { userId: 'alice' }),
    ];

    it('drops every call of a user suppressed for all sources', () => {
      const batch = entries(calls);
      const plan = planRoute(batch, connectedTo([destination('d1')]), aliceEverywhere, audienced);
      expect(pairs(plan, batch)).toEqual(['b-1→d1', 'anon-1→d1']);
      expect(plan.suppressed).toBe(2);
      expect(plan.unrouted).toBe(0);
    });

    it('drops a user’s calls from the listed sources only', () => {
      const suppressions = new Map<string, Suppression>([['alice', { allSources: false, sourceIds: [SRC] }]]);
      expect(planRoute(entries(calls), connectedTo([destination('d1')]), suppressions, audienced).suppressed).toBe(2);
      const other = entries(calls, 'src-2');
      const plan = planRoute(other, connectedTo([destination('d1', { sourceIds: ['src-2'] })]), suppressions, audienced);
      expect(plan.suppressed).toBe(0);
      expect(pairs(plan, other)).toEqual(['a-1→d1', 'b-1→d1', 'anon-1→d1', 'a-2→d1']);
    });

    it('counts a suppressed call once, however many destinations, and not as unrouted', () => {
      const plan = planRoute(
        entries([call('a-1', { userId: 'alice' })]),
        connectedTo([destination('d1'), destination('d2')]),
        aliceEverywhere,
        audienced,
      );
      expect(plan).toEqual({
        deliveries: [],
        routedPairs: 0,
        suppressed: 1,
        unrouted: 0,
        turnedOff: 0,
        filtered: { drop: 0, only: 0 },
        fanout: [0],
        profiles: [],
      });
    });

    it('suppresses before integrations are looked at', () => {
      const plan = planRoute(
        entries([call('a-1', { userId: 'alice', integrations: { All: false } })]),
        connectedTo([destination('d1')]),
        aliceEverywhere,
        audienced,
      );
      expect(plan).toEqual({
        deliveries: [],
        routedPairs: 0,
        suppressed: 1,
        unrouted: 0,
        turnedOff: 0,
        filtered: { drop: 0, only: 0 },
        fanout: [0],
        profiles: [],
      });
    });
  });

  describe('profile calls', () => {
    it('keeps identify and track calls with a userId, with only what a profile needs, by source', () => {
      const calls = [
        call('t-1', { properties: { plan: 'pro' }, context: { ip: '1.2.3.4' } }),
        call('i-1', { type: 'identify', event: undefined, traits: { plan: 'trial' } }),
        call('i-2', { type: 'identify', event: undefined }),
        call('p-1', { type: 'page', event: undefined, name: 'Home' }),
        call('g-1', { type: 'group', event: undefined, groupId: 'g' }),
        call('a-1', { type: 'track', userId: undefined, anonymousId: 'anon' }),
      ];
      expect(planRoute(entries(calls), connectedTo([destination('d')]), none, audienced).profiles).toEqual([
        {
          sourceId: SRC,
          calls: [
            { type: 'track', messageId: 't-1', userId: 'u-1', timestamp: '2026-11-21T09:30:00.000Z', event: 'E' },
            { type: 'identify', messageId: 'i-1', userId: 'u-1', timestamp: '2026-11-21T09:30:00.000Z', traits: { plan: 'trial' } },
            { type: 'identify', messageId: 'i-2', userId: 'u-1', timestamp: '2026-11-21T09:30:00.000Z' },
          ],
        },
      ]);
    });

    it('leaves out suppressed users', () => {
      const plan = planRoute(
        entries([call('m-1', { userId: 'alice' }), call('m-2', { userId: 'bob' })]),
        connectedTo([destination('d')]),
        aliceEverywhere,
        audienced,
      );
      expect(plan.profiles.flatMap((p) => p.calls.map((c) => c.userId))).toEqual(['bob']);
    });

    it('feeds no profile for a source no audience reads, and routes its calls as before', () => {
      const batch = entries([call('t-1'), call('i-1', { type: 'identify', event: undefined, traits: { plan: 'trial' } })]);
      const read = planRoute(batch, connectedTo([destination('d')]), none, audienced);
      const unread = planRoute(batch, connectedTo([destination('d')]), none, new Set());
      expect(unread.profiles).toEqual([]);
      expect(read.profiles).toHaveLength(1);
      expect({ ...unread, profiles: read.profiles }).toEqual(read);
    });

    it('of a batch of several sources, feeds only the sources some audience reads', () => {
      const batch = [
        ...entries([call('a-1'), call('a-2')], 'src-a'),
        ...entries([call('b-1')], 'src-b', 2),
        ...entries([call('c-1')], 'src-c', 3),
      ];
      const plan = planRoute(batch, () => [], none, new Set(['src-b', 'src-c', 'src-elsewhere']));
      expect(plan.profiles.map((p) => [p.sourceId, p.calls.map((c) => c.messageId)])).toEqual([
        ['src-b', ['b-1']],
        ['src-c', ['c-1']],
      ]);
    });
  });
});
