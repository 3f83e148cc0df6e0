/** The verification pass's counting: delivered, dead-lettered, duplicates, lost, per destination. */
import { verify } from './verify';

const delivered = (entries: Record<string, Record<string, number>>) =>
  new Map(Object.entries(entries).map(([d, ids]) => [d, new Map(Object.entries(ids))]));
const dead = (entries: Record<string, string[]>) => new Map(Object.entries(entries).map(([d, ids]) => [d, new Set(ids)]));

describe('verify', () => {
  it('counts a call delivered once as delivered, with no duplicates and nothing lost', () => {
    const v = verify({ acknowledged: new Map([['d0', ['a', 'b']]]), delivered: delivered({ d0: { a: 1, b: 1 } }), deadLettered: dead({}) });
    expect(v).toMatchObject({ acknowledged: 2, delivered: 2, dead_lettered: 0, duplicates: 0, lost: 0, unacknowledged_arrivals: 0 });
  });

  it('counts every 2xx beyond the first as a duplicate, and the call once as delivered', () => {
    const v = verify({ acknowledged: new Map([['d0', ['a']]]), delivered: delivered({ d0: { a: 3 } }), deadLettered: dead({}) });
    expect(v).toMatchObject({ delivered: 1, duplicates: 2, lost: 0 });
  });

  it('counts an undelivered call listed in the dead letters as dead-lettered, not lost', () => {
    const v = verify({
      acknowledged: new Map([['d9', ['x', 'y']]]),
      delivered: delivered({ d9: { y: 1 } }),
      deadLettered: dead({ d9: ['x'] }),
    });
    expect(v).toMatchObject({ delivered: 1, dead_lettered: 1, lost: 0 });
  });

  it('counts a call neither delivered nor dead-lettered as lost, and names it', () => {
    const v = verify({ acknowledged: new Map([['d1', ['gone', 'ok']]]), delivered: delivered({ d1: { ok: 1 } }), deadLettered: dead({}) });
    expect(v.lost).toBe(1);
    expect(v.lost_examples).toEqual(['d1:gone']);
    expect(v.by_destination['d1']).toEqual({ acknowledged: 2, delivered: 1, dead_lettered: 0, duplicates: 0, lost: 1 });
  });

  it('keeps destinations apart: a call delivered to another destination does not count', () => {
    const v = verify({ acknowledged: new Map([['d0', ['m']]]), delivered: delivered({ d1: { m: 1 } }), deadLettered: dead({}) });
    expect(v.lost).toBe(1);
    expect(v.unacknowledged_arrivals).toBe(1);
  });

  it('counts a call delivered although its batch was not acknowledged as an unacknowledged arrival, not a loss', () => {
    const v = verify({
      acknowledged: new Map([['d0', []]]),
      delivered: delivered({ d0: { stray: 1 } }),
      deadLettered: dead({ d0: ['stray2'] }),
    });
    expect(v).toMatchObject({ acknowledged: 0, lost: 0, unacknowledged_arrivals: 2 });
  });

  it('counts a messageId acknowledged twice once (the intake dedupes it)', () => {
    const v = verify({ acknowledged: new Map([['d0', ['a', 'a']]]), delivered: delivered({ d0: { a: 1 } }), deadLettered: dead({}) });
    expect(v).toMatchObject({ acknowledged: 1, delivered: 1, lost: 0 });
  });
});
