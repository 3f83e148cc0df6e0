import type { Destination, NormalizedCall } from '../generated/contracts.js';
import { buildBody } from './body.js';
import { filtersOf } from '../filters/destination-filters.js';
import { batchBody, batchDeliveryId, batchGroups, callBody } from './request.js';

const call: NormalizedCall = {
  type: 'track',
  event: 'Order Completed',
  userId: 'u-1',
  messageId: 'm-1',
  timestamp: '2026-11-27T10:00:00.000Z',
  receivedAt: '2026-11-27T10:00:00.000Z',
  properties: { total: 30, email: 'a@example.com' },
  context: { ip: '203.0.113.9' },
};
const destination = (extra: Partial<Destination> = {}, settings: Partial<Destination['settings']> = {}): Destination => ({
  id: 'd',
  name: 'Webhooks',
  enabled: true,
  sourceIds: ['s'],
  settings: { webhooks: [{ url: 'https://d.example/in' }], ...settings },
  ...extra,
});

describe('callBody', () => {
  it('is docs/spec.md §4’s body, byte for byte, without filters or a mapping', () => {
    expect(callBody(call, destination())).toEqual({ ok: true, body: buildBody(call) });
  });

  it('applies the field rules, then the mapping, to what it reads', () => {
    const d = destination(
      { filters: [{ dropFields: ['properties.email'] }] },
      { mapping: { total: { '@path': 'properties.total' }, email: { '@path': 'properties.email' } } },
    );
    expect(callBody(call, d)).toEqual({ ok: true, body: '{"total":30}' });
    // The call itself is left as it was.
    expect(call.properties).toEqual({ total: 30, email: 'a@example.com' });
  });

  it('keeps a delete notice’s own body whatever the rules and mapping', () => {
    const notice = { type: 'delete' as const, userId: 'u-1', timestamp: '2026-11-27T10:00:00.000Z', messageId: 'del-1', regulationId: 'r' };
    const d = destination({ filters: [{ keepFields: ['properties.total'] }] }, { mapping: { x: 1 } });
    expect(callBody(notice as never, d)).toEqual({
      ok: true,
      body: '{"type":"delete","userId":"u-1","timestamp":"2026-11-27T10:00:00.000Z"}',
    });
  });

  it('names its call first in a batched destination’s default body, for receivers to dedupe per call', () => {
    const body = callBody(call, destination({}, { batching: {} }));
    expect(body).toEqual({ ok: true, body: `{"messageId":"m-1",${buildBody(call).slice(1)}` });
    expect(JSON.parse((body as { body: string }).body)).toMatchObject({ messageId: 'm-1', type: 'track', event: 'Order Completed' });
    // A mapping writes what the receiver asked for, batched or not.
    expect(callBody(call, destination({}, { batching: {}, mapping: { e: { '@path': 'event' } } }))).toEqual({
      ok: true,
      body: '{"e":"Order Completed"}',
    });
  });

  it('says why when the mapping’s output is too large', () => {
    const big = { ...call, properties: { blob: 'x'.repeat(10_000) } };
    const mapping = Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`k${i}`, { '@path': 'properties' }]));
    expect(callBody(big, destination({}, { mapping }))).toEqual({ ok: false, error: expect.stringContaining('262144') });
  });

  it('compiles a destination’s rules once per config object', () => {
    const d = destination({ filters: [{ drop: { field: { path: 'event', equals: 'x' } } }] });
    expect(filtersOf(d)).toBe(filtersOf(d));
    expect(filtersOf(destination())).toBe(filtersOf(destination({ filters: [] })));
  });
});

describe('batching', () => {
  it('groups bodies in order by count and bytes; a body larger than maxBytes alone goes alone', () => {
    const bodies = ['{"a":1}', '{"b":2}', '{"c":3}', 'x'.repeat(3000), '{"d":4}'];
    expect(batchGroups(bodies, { maxCalls: 2 })).toEqual([[0, 1], [2, 3], [4]]);
    // "[" + 7 + "," + 7 + "]" = 17 bytes fit in 1024; the 3000-byte body goes alone.
    expect(batchGroups(bodies, { maxBytes: 1024 })).toEqual([[0, 1, 2], [3], [4]]);
    expect(batchGroups([], {})).toEqual([]);
  });

  it('never puts more than maxBytes in a group of several bodies', () => {
    const bodies = Array.from({ length: 50 }, (_, i) => `"${'é'.repeat(i * 7)}"`);
    for (const group of batchGroups(bodies, { maxBytes: 1024 }))
      if (group.length > 1) expect(Buffer.byteLength(batchBody(group.map((i) => bodies[i]!)))).toBeLessThanOrEqual(1024);
  });

  it('names a batched POST by its calls', () => {
    const a = batchDeliveryId('d', [
      { sourceId: 's', messageId: 'm-1' },
      { sourceId: 's', messageId: 'm-2' },
    ]);
    expect(a).toMatch(/^d-batch-[A-Za-z0-9_-]{22}$/);
    expect(
      batchDeliveryId('d', [
        { sourceId: 's', messageId: 'm-1' },
        { sourceId: 's', messageId: 'm-2' },
      ]),
    ).toBe(a);
    expect(
      batchDeliveryId('d', [
        { sourceId: 's', messageId: 'm-2' },
        { sourceId: 's', messageId: 'm-1' },
      ]),
    ).not.toBe(a);
    expect(batchBody(['{"a":1}', '{"b":2}'])).toBe('[{"a":1},{"b":2}]');
  });
});
