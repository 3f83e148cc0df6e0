import type { Destination, NormalizedCall } from '@eventrelay/config';
import { integrationAllows, selectDestinations } from './select-destinations.js';

const call = (integrations?: Record<string, unknown>): NormalizedCall => ({
  type: 'track',
  messageId: 'm-1',
  userId: 'u-1',
  event: 'Tested',
  timestamp: '2026-11-21T09:30:00.000Z',
  receivedAt: '2026-11-21T09:30:00.000Z',
  ...(integrations === undefined ? {} : { integrations }),
});

const destination = (id: string, extra: Partial<Destination> = {}): Destination => ({
  id,
  name: 'Webhooks',
  enabled: true,
  sourceIds: ['src-1'],
  settings: { webhooks: [{ url: `https://${id}.example/hook` }] },
  ...extra,
});

describe('integrationAllows (docs/spec.md §3)', () => {
  it.each<[string, Record<string, unknown> | undefined, boolean]>([
    ['no integrations object', undefined, true],
    ['an empty integrations object', {}, true],
    ['{All: true}', { All: true }, true],
    ['{All: false}', { All: false }, false],
    ['{All: false, Webhooks: true}', { All: false, Webhooks: true }, true],
    ['{Webhooks: false}', { Webhooks: false }, false],
    ['{All: true, Webhooks: false}', { All: true, Webhooks: false }, false],
    ['{Webhooks: true}', { Webhooks: true }, true],
    ['{webhooks: false} (lowercase does not match: case-sensitive)', { webhooks: false }, true],
    ['{WEBHOOKS: false} (case-sensitive)', { WEBHOOKS: false }, true],
    ['{All: false, webhooks: true} (lowercase does not turn it back on)', { All: false, webhooks: true }, false],
    ['{all: false} (lowercase "all" is not All)', { all: false }, true],
    ['Webhooks as an options object means on', { Webhooks: { someSetting: 1 } }, true],
    ['{All: false, Webhooks: {…}}: the options object turns it on', { All: false, Webhooks: {} }, true],
    ['other destinations off do not matter', { Mixpanel: false, 'Google Analytics': false }, true],
    ['{All: false, Mixpanel: true}: only Mixpanel is on', { All: false, Mixpanel: true }, false],
  ])('%s → %p', (_label, integrations, allowed) => {
    expect(integrationAllows(integrations, 'Webhooks')).toBe(allowed);
    expect(selectDestinations(call(integrations), [destination('d1')]).map((d) => d.id)).toEqual(allowed ? ['d1'] : []);
  });
});

describe('selectDestinations', () => {
  it('takes every enabled destination it is given, in order', () => {
    const selected = selectDestinations(call(), [destination('d1'), destination('d2'), destination('d3')]);
    expect(selected.map((d) => d.id)).toEqual(['d1', 'd2', 'd3']);
  });

  it('never takes a disabled destination, whatever integrations says', () => {
    const connected = [destination('on'), destination('off', { enabled: false })];
    expect(selectDestinations(call(), connected).map((d) => d.id)).toEqual(['on']);
    expect(selectDestinations(call({ Webhooks: true }), connected).map((d) => d.id)).toEqual(['on']);
    expect(selectDestinations(call({ All: false, Webhooks: true }), connected).map((d) => d.id)).toEqual(['on']);
    expect(selectDestinations(call({ Webhooks: { x: 1 } }), [destination('off', { enabled: false })])).toEqual([]);
  });

  it('takes nothing when nothing is connected', () => {
    expect(selectDestinations(call(), [])).toEqual([]);
  });

  it('turns every Webhooks destination off together', () => {
    expect(selectDestinations(call({ Webhooks: false }), [destination('d1'), destination('d2')])).toEqual([]);
  });

  it('picks one Webhooks destination by its id, which decides over the name', () => {
    const connected = [destination('d1'), destination('d2'), destination('d3')];
    const ids = (integrations: Record<string, unknown>) => selectDestinations(call(integrations), connected).map((d) => d.id);
    expect(ids({ All: false, d2: true })).toEqual(['d2']);
    expect(ids({ d2: false })).toEqual(['d1', 'd3']);
    expect(ids({ Webhooks: false, d3: true })).toEqual(['d3']);
    expect(ids({ All: false, Webhooks: true, d1: false })).toEqual(['d2', 'd3']);
    expect(ids({ All: false, D2: true })).toEqual([]);
  });

  it('does not take an id that is also All or the name as the destination’s own key', () => {
    const connected = [destination('All'), destination('Webhooks'), destination('d3')];
    const ids = (integrations: Record<string, unknown>) => selectDestinations(call(integrations), connected).map((d) => d.id);
    expect(ids({ All: false, d3: true })).toEqual(['d3']);
    expect(ids({ All: true })).toEqual(['All', 'Webhooks', 'd3']);
    expect(ids({ All: false, Webhooks: true })).toEqual(['All', 'Webhooks', 'd3']);
  });
});
