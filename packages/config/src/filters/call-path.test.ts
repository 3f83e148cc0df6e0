import { MAX_PATH_SEGMENTS, pathProblem, splitPath, valueAt } from './call-path.js';

describe('pathProblem', () => {
  it.each<[string, string | undefined]>([
    ['properties', undefined],
    ['properties.plan', undefined],
    ['context.library.name', undefined],
    ['properties.items.0.sku', undefined],
    ['a.b.c.d.e.f.g.h.i.j', undefined],
    ['', 'is empty'],
    ['.properties', 'starts with a dot'],
    ['properties.', 'ends with a dot'],
    ['.', 'starts with a dot'],
    ['properties..plan', 'has an empty name between two dots'],
    ['a.b.c.d.e.f.g.h.i.j.k', `has 11 names; at most ${MAX_PATH_SEGMENTS}`],
  ])('%j → %j', (path, problem) => {
    expect(pathProblem(path)).toBe(problem);
  });
});

describe('splitPath', () => {
  it('splits on dots', () => {
    expect(splitPath('context.library.name')).toEqual(['context', 'library', 'name']);
    expect(splitPath('event')).toEqual(['event']);
  });
});

describe('valueAt', () => {
  const call = JSON.parse(
    JSON.stringify({
      event: 'Order Completed',
      properties: { plan: 'pro', coupon: null, items: [{ sku: 'A-1' }, { sku: 'B-2' }], address: { city: 'Berlin' }, '7': 'seven' },
    }),
  ) as unknown;
  // JSON.parse makes an own __proto__ field, as a call from the wire would have.
  const withProto = JSON.parse('{"properties":{"__proto__":{"polluted":true}}}') as unknown;

  it.each<[string, unknown]>([
    ['event', 'Order Completed'],
    ['properties.plan', 'pro'],
    ['properties.coupon', null],
    ['properties.address.city', 'Berlin'],
    ['properties.items.0.sku', 'A-1'],
    ['properties.items.1.sku', 'B-2'],
    ['properties.7', 'seven'],
    ['properties.missing', undefined],
    ['properties.plan.length', undefined],
    ['properties.coupon.x', undefined],
    ['properties.items.2.sku', undefined],
    ['properties.items.01.sku', undefined],
    ['properties.items.-1', undefined],
    ['properties.items.1e0', undefined],
    ['properties.items.length', undefined],
    ['properties.items.sku', undefined],
    ['constructor', undefined],
    ['properties.constructor', undefined],
    ['properties.toString', undefined],
    ['__proto__', undefined],
    ['properties.__proto__', undefined],
    ['properties.hasOwnProperty', undefined],
  ])('%s → %j', (path, expected) => {
    expect(valueAt(call, splitPath(path))).toBe(expected);
  });

  it('returns objects as they are', () => {
    expect(valueAt(call, ['properties', 'address'])).toEqual({ city: 'Berlin' });
    expect(valueAt(call, [])).toBe(call);
  });

  it('reads an own __proto__ field, never the prototype', () => {
    expect(valueAt(withProto, ['properties', '__proto__', 'polluted'])).toBe(true);
    expect(valueAt({ properties: {} }, ['properties', '__proto__'])).toBeUndefined();
  });

  it.each([null, undefined, 'text', 42, true])('finds nothing inside %j', (value) => {
    expect(valueAt(value, ['a'])).toBeUndefined();
  });
});
