import { DAY_MS, parseCounter, parseProfile, utcDay, viewThrough, type Profile, type SourceProfile } from './profile.js';

const TODAY = utcDay(Date.parse('2026-11-21T10:00:00.000Z'));

/** A profile built directly, one entry per source. */
function profile(
  sources: Record<string, { traitsAt?: number; traits?: Record<string, unknown>; events?: Record<string, string> }>,
): Profile {
  const map = new Map<string, SourceProfile>();
  for (const [id, s] of Object.entries(sources)) {
    map.set(id, {
      traitsAt: s.traitsAt ?? 0,
      traits: new Map(Object.entries(s.traits ?? {})),
      events: new Map(Object.entries(s.events ?? {}).map(([name, value]) => [name, parseCounter(value)])),
    });
  }
  return { userId: 'u1', version: 1, sources: map };
}

describe('utcDay', () => {
  it('counts whole UTC days since the epoch', () => {
    expect(utcDay(0)).toBe(0);
    expect(utcDay(DAY_MS - 1)).toBe(0);
    expect(utcDay(DAY_MS)).toBe(1);
    expect(utcDay(Date.parse('2026-11-21T00:00:00.000Z'))).toBe(utcDay(Date.parse('2026-11-21T23:59:59.999Z')));
    expect(utcDay(Date.parse('2026-11-22T00:00:00.000Z'))).toBe(TODAY + 1);
  });
});

describe('parseCounter', () => {
  it('reads the total and the day buckets', () => {
    const c = parseCounter(`7 ${TODAY}:2 ${TODAY - 3}:1`);
    expect(c.total).toBe(7);
    expect([...c.days]).toEqual([
      [TODAY, 2],
      [TODAY - 3, 1],
    ]);
  });

  it('reads a total with no buckets kept', () => {
    expect(parseCounter('12')).toEqual({ total: 12, days: new Map() });
  });
});

describe('parseProfile', () => {
  it('reads traits, their time and event counters per source, and ignores the bookkeeping fields', () => {
    const p = parseProfile('u1', {
      v: '5',
      ids: 'abc123 def456',
      'ta:web': '1700000000000',
      'tb:web': '42',
      'en:web': '2',
      'en:api': '1',
      't:web:plan': '"trial"',
      't:web:seats': '3',
      't:web:tags': '["a",1]',
      't:web:manager': 'null',
      't:web:address.city': '"Berlin"',
      't:web:ns:key': 'true',
      'e:web:Signed Up': `1 ${TODAY}:1`,
      'e:web:Order: Completed': `3 ${TODAY}:2 ${TODAY - 1}:1`,
      'e:api:Ping': '9',
    });
    expect(p?.userId).toBe('u1');
    expect(p?.version).toBe(5);
    expect([...(p?.sources.keys() ?? [])].sort()).toEqual(['api', 'web']);
    const web = p!.sources.get('web')!;
    expect(web.traitsAt).toBe(1_700_000_000_000);
    expect(Object.fromEntries(web.traits)).toEqual({
      plan: 'trial',
      seats: 3,
      tags: ['a', 1],
      manager: null,
      'address.city': 'Berlin',
      'ns:key': true,
    });
    expect([...web.events.keys()].sort()).toEqual(['Order: Completed', 'Signed Up']);
    expect(web.events.get('Order: Completed')).toEqual({
      total: 3,
      days: new Map([
        [TODAY, 2],
        [TODAY - 1, 1],
      ]),
    });
    const api = p!.sources.get('api')!;
    expect(api.traitsAt).toBe(0);
    expect(api.traits.size).toBe(0);
    expect(api.events.get('Ping')?.total).toBe(9);
  });

  it('keeps a trait value that is not JSON as text', () => {
    expect(parseProfile('u1', { v: '1', 't:web:odd': 'not json' })?.sources.get('web')?.traits.get('odd')).toBe('not json');
  });

  it.each<[string, Record<string, string>]>([
    ['no fields', {}],
    ['no v', { 't:web:plan': '"trial"' }],
    ['v 0', { v: '0', 't:web:plan': '"trial"' }],
    ['v not a number', { v: 'x', 't:web:plan': '"trial"' }],
  ])('is undefined with %s', (_what, fields) => {
    expect(parseProfile('u1', fields)).toBeUndefined();
  });
});

describe('viewThrough', () => {
  it('merges traits with the newest identify winning per key, whatever the order of sourceIds', () => {
    const p = profile({
      old: { traitsAt: 1000, traits: { plan: 'free', seats: 1, onlyOld: 'o' } },
      mid: { traitsAt: 2000, traits: { plan: 'trial' } },
      new: { traitsAt: 3000, traits: { seats: 5, onlyNew: 'n' } },
    });
    for (const order of [
      ['old', 'mid', 'new'],
      ['new', 'mid', 'old'],
      ['mid', 'new', 'old'],
    ]) {
      const view = viewThrough(p, order)!;
      expect(view.trait('plan')).toEqual({ set: true, value: 'trial' });
      expect(view.trait('seats')).toEqual({ set: true, value: 5 });
      expect(view.trait('onlyOld')).toEqual({ set: true, value: 'o' });
      expect(view.trait('onlyNew')).toEqual({ set: true, value: 'n' });
    }
  });

  it('sees only the listed sources', () => {
    const p = profile({ web: { traitsAt: 1000, traits: { plan: 'free' } }, api: { traitsAt: 2000, traits: { plan: 'trial', vip: true } } });
    const view = viewThrough(p, ['web'])!;
    expect(view.trait('plan')).toEqual({ set: true, value: 'free' });
    expect(view.trait('vip')).toEqual({ set: false });
  });

  it('tells a trait set to null from one not set', () => {
    const view = viewThrough(profile({ web: { traits: { manager: null } } }), ['web'])!;
    expect(view.trait('manager')).toEqual({ set: true, value: null });
    expect(view.trait('missing')).toEqual({ set: false });
  });

  it('is undefined when none of the sources has traits or events for the user', () => {
    const p = profile({ other: { traitsAt: 1000, traits: { plan: 'trial' } }, empty: { traitsAt: 1000 } });
    expect(viewThrough(p, ['web'])).toBeUndefined();
    expect(viewThrough(p, ['empty'])).toBeUndefined();
    expect(viewThrough(p, [])).toBeUndefined();
    expect(viewThrough(p, ['empty', 'other'])).toBeDefined();
  });

  it('is defined for a source with events only', () => {
    const view = viewThrough(profile({ web: { events: { Ping: '1' } } }), ['web']);
    expect(view?.eventCount('Ping', TODAY)).toBe(1);
    expect(view?.trait('plan')).toEqual({ set: false });
  });

  describe('eventCount', () => {
    const p = profile({
      web: { events: { Ping: `10 ${TODAY + 1}:100 ${TODAY}:1 ${TODAY - 1}:2 ${TODAY - 6}:3 ${TODAY - 7}:4`, Other: `50 ${TODAY}:50` } },
      api: { events: { Ping: `5 ${TODAY}:5` } },
      unlisted: { events: { Ping: `1000 ${TODAY}:1000` } },
    });
    const view = viewThrough(p, ['web', 'api'])!;

    it('sums the totals of the listed sources without a window', () => {
      expect(view.eventCount('Ping', TODAY)).toBe(15);
      expect(view.eventCount('Nothing', TODAY)).toBe(0);
    });

    it.each([
      [1, 1 + 5],
      [2, 1 + 2 + 5],
      [7, 1 + 2 + 3 + 5],
      [8, 1 + 2 + 3 + 4 + 5],
      [90, 1 + 2 + 3 + 4 + 5],
    ])('within %i days counts today and the days before it, never a future bucket', (withinDays, expected) => {
      expect(view.eventCount('Ping', TODAY, withinDays)).toBe(expected);
    });

    it('leaves out a bucket exactly withinDays days ago', () => {
      const only = viewThrough(profile({ web: { events: { Ping: `1 ${TODAY - 7}:1` } } }), ['web'])!;
      expect(only.eventCount('Ping', TODAY, 7)).toBe(0);
      expect(only.eventCount('Ping', TODAY, 8)).toBe(1);
    });
  });
});
