import type { NormalizedCall } from './generated/contracts.js';
import { routeEntryOf } from './route-entry.js';
import { validateRouteEntry } from './schemas.js';

const base = { messageId: 'm-1', timestamp: '2026-11-21T09:30:00.000Z', receivedAt: '2026-11-21T09:30:00.100Z' };

describe('routeEntryOf', () => {
  it('keeps what routing and profiles need of a track call, and nothing of its properties or context', () => {
    const call: NormalizedCall = {
      ...base,
      type: 'track',
      event: 'Bought',
      userId: 'u-1',
      anonymousId: 'a-1',
      properties: { total: 3 },
      context: { ip: '203.0.113.1' },
      integrations: { All: false, Webhooks: true },
    };
    const entry = routeEntryOf(call, 'src-1', 7, 5);
    expect(entry).toEqual({
      index: 7,
      part: 5,
      sourceId: 'src-1',
      messageId: 'm-1',
      type: 'track',
      userId: 'u-1',
      integrations: { All: false, Webhooks: true },
      event: 'Bought',
      timestamp: base.timestamp,
    });
    expect(validateRouteEntry(entry)).toBe(true);
  });

  it('carries the traits of an identify call with a userId (profiles), not of an anonymous one', () => {
    const traits = { plan: 'pro' };
    expect(routeEntryOf({ ...base, type: 'identify', userId: 'u-1', traits }, 's', 0, 0).traits).toEqual(traits);
    expect(routeEntryOf({ ...base, type: 'identify', anonymousId: 'a-1', traits }, 's', 0, 0).traits).toBeUndefined();
    expect(routeEntryOf({ ...base, type: 'group', groupId: 'g', userId: 'u-1', traits }, 's', 0, 0).traits).toBeUndefined();
  });

  it('leaves out what the call does not have', () => {
    expect(routeEntryOf({ ...base, type: 'page', anonymousId: 'a-1', name: 'Home' }, 's', 3, 2)).toEqual({
      index: 3,
      part: 2,
      sourceId: 's',
      messageId: 'm-1',
      type: 'page',
      timestamp: base.timestamp,
    });
  });
});
