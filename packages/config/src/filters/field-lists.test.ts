import { compileDropFields, compileKeepFields } from './field-lists.js';

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}

const call = deepFreeze({
  type: 'track',
  event: 'Order Completed',
  userId: 'u-1',
  messageId: 'm-1',
  timestamp: '2026-11-21T10:00:00.000Z',
  integrations: { All: true },
  properties: { plan: 'pro', total: 42.5, email: 'a@example.com', address: { city: 'Berlin', street: 'Main 1' }, items: [{ sku: 'A-1' }] },
  context: { ip: '1.2.3.4', library: { name: 'analytics.js', version: '2.1.0' } },
  traits: { email: 'a@example.com', name: 'Ann' },
});
type Call = typeof call;

describe('compileDropFields', () => {
  it.each<[string, string[], Partial<Record<keyof Call, unknown>>]>([
    [
      'a property',
      ['properties.email'],
      { properties: { plan: 'pro', total: 42.5, address: call.properties.address, items: call.properties.items } },
    ],
    ['a nested field', ['context.library.version'], { context: { ip: '1.2.3.4', library: { name: 'analytics.js' } } }],
    ['a whole object', ['traits'], { traits: undefined }],
    ['a whole object over a path inside it', ['properties.email', 'properties'], { properties: undefined }],
    [
      'several paths of one object',
      ['properties.email', 'properties.address.street', 'properties.total'],
      { properties: { plan: 'pro', address: { city: 'Berlin' }, items: call.properties.items } },
    ],
  ])('drops %s', (_name, paths, changed) => {
    const shaped = compileDropFields(paths)(call) as Record<string, unknown>;
    const expected: Record<string, unknown> = { ...call, ...changed };
    for (const key of Object.keys(expected)) if (expected[key] === undefined) delete expected[key];
    expect(shaped).toEqual(expected);
    // Structural sharing: what was not on the way to a dropped field is the input's own object.
    for (const key of Object.keys(call) as (keyof Call)[]) if (!(key in changed)) expect(shaped[key]).toBe(call[key]);
  });

  it('shares the untouched objects under a changed one', () => {
    const shaped = compileDropFields(['properties.email'])(call) as Call;
    expect(shaped.properties.address).toBe(call.properties.address);
    expect(shaped.properties.items).toBe(call.properties.items);
  });

  it('keeps the order of the remaining fields', () => {
    const shaped = compileDropFields(['properties.total'])(call) as Call;
    expect(Object.keys(shaped)).toEqual(Object.keys(call));
    expect(Object.keys(shaped.properties)).toEqual(['plan', 'email', 'address', 'items']);
  });

  it.each([
    ['an absent field', ['properties.coupon']],
    ['an absent object', ['properties.nothing.here']],
    ['a path through a string', ['properties.plan.length']],
    ['a path through an array', ['properties.items.0.sku']],
    ['a prototype name', ['properties.constructor', 'properties.__proto__', 'context.toString']],
  ])('returns the call itself for %s', (_name, paths) => {
    expect(compileDropFields(paths)(call)).toBe(call);
  });

  it('drops an own __proto__ field as a field, leaving the prototype alone', () => {
    const input = JSON.parse('{"properties":{"__proto__":{"x":1},"plan":"pro"}}') as Record<string, Record<string, unknown>>;
    const dropped = compileDropFields(['properties.plan'])(input) as typeof input;
    expect(Object.hasOwn(dropped.properties!, '__proto__')).toBe(true);
    expect(Object.getPrototypeOf(dropped.properties)).toBe(Object.prototype);
    const withoutProto = compileDropFields(['properties.__proto__'])(input) as typeof input;
    expect(withoutProto).toEqual({ properties: { plan: 'pro' } });
  });
});

describe('compileKeepFields', () => {
  const identity = {
    type: 'track',
    event: 'Order Completed',
    userId: 'u-1',
    messageId: 'm-1',
    timestamp: '2026-11-21T10:00:00.000Z',
    integrations: { All: true },
  };

  it.each<[string, string[], Record<string, unknown>]>([
    ['one property; context and traits go', ['properties.plan'], { properties: { plan: 'pro' } }],
    [
      'a leaf and the objects on the way',
      ['context.library.name', 'properties.address.city'],
      { properties: { address: { city: 'Berlin' } }, context: { library: { name: 'analytics.js' } } },
    ],
    ['a whole object', ['traits'], { traits: call.traits }],
    ['a whole object over a path inside it', ['traits.email', 'traits'], { traits: call.traits }],
    ['an absent leaf keeps its listed object, empty', ['properties.coupon'], { properties: {} }],
    ['an absent object keeps nothing', ['properties.nothing.here'], { properties: {} }],
  ])('keeps %s', (_name, paths, kept) => {
    expect(compileKeepFields(paths)(call)).toEqual({ ...identity, ...kept });
  });

  it('always keeps the identity fields and shares them', () => {
    const shaped = compileKeepFields(['properties.plan'])(call) as Call;
    expect(shaped.integrations).toBe(call.integrations);
    expect(shaped.type).toBe('track');
  });

  it('shares what it keeps whole', () => {
    const shaped = compileKeepFields(['properties.address', 'traits'])(call) as Call;
    expect(shaped.properties.address).toBe(call.properties.address);
    expect(shaped.traits).toBe(call.traits);
  });

  it('returns the call itself when it keeps everything there is', () => {
    expect(compileKeepFields(['properties', 'context', 'traits'])(call)).toBe(call);
    const small = deepFreeze({ type: 'track', properties: { plan: 'pro' } });
    expect(compileKeepFields(['properties.plan'])(small)).toBe(small);
  });

  it('leaves alone a listed object that is not one', () => {
    const odd = deepFreeze({ type: 'track', properties: 'text', context: [1, 2] });
    expect(compileKeepFields(['properties.plan', 'context.0'])(odd)).toBe(odd);
  });
});
