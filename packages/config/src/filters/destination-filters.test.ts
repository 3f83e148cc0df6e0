import type { CallCondition, FilterRule } from '../generated/contracts.js';
import { compileFilters, filtersProblems } from './destination-filters.js';

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}

const call = (event: string, plan = 'pro'): Record<string, unknown> =>
  deepFreeze({
    type: 'track',
    event,
    userId: 'u-1',
    messageId: `m-${event}`,
    properties: { plan, email: 'a@example.com', total: 10 },
    context: { ip: '1.2.3.4', library: { name: 'analytics.js' } },
  });
const isEvent = (event: string): CallCondition => ({ field: { path: 'event', equals: event } });

describe('compileFilters: decide', () => {
  const filters = compileFilters([
    { name: 'no test events', drop: { field: { path: 'event', starts_with: 'Test ' } } },
    { only: { any: [isEvent('Order Completed'), isEvent('Test Order'), isEvent('Signed Up')] } },
    { drop: { all: [isEvent('Signed Up'), { field: { path: 'properties.plan', equals: 'free' } }] } },
    { dropFields: ['properties.email'] },
  ]);

  it.each<[string, Record<string, unknown>, unknown]>([
    ['a call every rule lets through', call('Order Completed'), { send: true }],
    ['the first drop that holds, by index and name', call('Test Order'), { send: false, rule: 0, name: 'no test events', reason: 'drop' }],
    ['the first only that does not hold, without a name', call('Page Viewed'), { send: false, rule: 1, reason: 'only' }],
    ['a later drop', call('Signed Up', 'free'), { send: false, rule: 2, reason: 'drop' }],
    ['a call the later drop lets through', call('Signed Up', 'pro'), { send: true }],
  ])('%s', (_name, input, decision) => {
    expect(filters.decide(input)).toEqual(decision);
  });

  it('says what it does and which call fields its decisions read', () => {
    expect(filters.decides).toBe(true);
    expect(filters.shapes).toBe(true);
    expect([...filters.roots].sort()).toEqual(['event', 'properties']);
  });

  it('does not count the roots of an if (it is applied at delivery)', () => {
    const shaping = compileFilters([{ keepFields: ['properties.plan'], if: { field: { path: 'context.ip', exists: true } } }]);
    expect([shaping.decides, shaping.shapes, [...shaping.roots]]).toEqual([false, true, []]);
  });

  it.each([undefined, []])('with %j rules sends everything as it is', (rules) => {
    const none = compileFilters(rules);
    const input = call('Order Completed');
    expect([none.decides, none.shapes, none.roots.size]).toEqual([false, false, 0]);
    expect(none.decide(input)).toEqual({ send: true });
    expect(none.shape(input)).toBe(input);
  });
});

describe('compileFilters: shape', () => {
  it('applies the field rules in order, each where its if holds, never changing the call', () => {
    const filters = compileFilters([
      { drop: isEvent('Test') },
      { dropFields: ['properties.email'] },
      { keepFields: ['properties.plan', 'properties.total', 'context.library'], if: isEvent('Order Completed') },
      { dropFields: ['properties.total'], if: { field: { path: 'properties.plan', equals: 'free' } } },
    ]);
    const order = call('Order Completed');
    expect(filters.shape(order)).toEqual({
      type: 'track',
      event: 'Order Completed',
      userId: 'u-1',
      messageId: 'm-Order Completed',
      properties: { plan: 'pro', total: 10 },
      context: { library: { name: 'analytics.js' } },
    });
    const signup = call('Signed Up', 'free');
    const shaped = filters.shape(signup);
    expect(shaped).toEqual({ ...signup, properties: { plan: 'free' } });
    expect(shaped.context).toBe(signup.context);
  });

  it('tests each if against the call as it came, not as earlier rules left it', () => {
    const filters = compileFilters([
      { dropFields: ['properties.plan'] },
      { dropFields: ['properties.email'], if: { field: { path: 'properties.plan', equals: 'pro' } } },
    ]);
    expect(filters.shape(call('Order Completed'))).toMatchObject({ properties: { total: 10 } });
    expect((filters.shape(call('Order Completed')) as { properties: object }).properties).toEqual({ total: 10 });
  });

  it('copies an object once however many rules change it, and changes neither the call nor an earlier answer', () => {
    const filters = compileFilters([
      { dropFields: ['properties.email'] },
      { dropFields: ['properties.total', 'context.ip'] },
      { keepFields: ['properties.plan', 'context.library.name'] },
      { dropFields: ['context.library.name'], if: isEvent('Order Completed') },
    ]);
    const input = call('Order Completed');
    const first = filters.shape(input);
    expect(first).toEqual({ ...input, properties: { plan: 'pro' }, context: { library: {} } });
    const second = filters.shape(input);
    expect(second).toEqual(first);
    expect(second.properties).not.toBe(first.properties);
    expect(filters.shape(call('Signed Up'))).toMatchObject({ context: { library: { name: 'analytics.js' } } });
  });

  it('keeps a __proto__ field an own field when a later rule changes its object in place', () => {
    const input = JSON.parse('{"type":"track","properties":{"__proto__":{"a":1,"b":2},"x":1,"y":2}}') as Record<string, unknown>;
    const filters = compileFilters([{ dropFields: ['properties.x'] }, { dropFields: ['properties.__proto__.a', 'properties.y'] }]);
    const shaped = filters.shape(input) as { properties: object };
    expect(JSON.stringify(shaped)).toBe('{"type":"track","properties":{"__proto__":{"b":2}}}');
    expect(Object.getPrototypeOf(shaped.properties)).toBe(Object.prototype);
    expect(JSON.stringify(input)).toBe('{"type":"track","properties":{"__proto__":{"a":1,"b":2},"x":1,"y":2}}');
  });

  it('returns the call itself when no rule applies or changes anything', () => {
    const filters = compileFilters([{ dropFields: ['properties.email'], if: isEvent('Never') }, { dropFields: ['traits.email'] }]);
    const input = call('Order Completed');
    expect(filters.shape(input)).toBe(input);
  });
});

describe('filtersProblems', () => {
  const ok: FilterRule = { drop: isEvent('Test') };

  it('accepts good rules', () => {
    expect(
      filtersProblems(
        [ok, { name: 'n', only: { sample: { percent: 10 } } }, { keepFields: ['properties', 'context.library.name'], if: ok.drop }],
        'filters',
      ),
    ).toEqual([]);
  });

  it.each<[string, FilterRule, { field: string; message: string }[]]>([
    [
      'no action',
      { name: 'x' },
      [{ field: 'filters[1]', message: 'must have exactly one of drop, only, dropFields, keepFields; has none' }],
    ],
    [
      'two actions',
      { drop: isEvent('a'), only: isEvent('b') },
      [{ field: 'filters[1]', message: 'must have exactly one of drop, only, dropFields, keepFields; has drop and only' }],
    ],
    [
      'three actions',
      { drop: isEvent('a'), dropFields: ['properties.a'], keepFields: ['properties.b'] },
      [
        {
          field: 'filters[1]',
          message: 'must have exactly one of drop, only, dropFields, keepFields; has drop, dropFields and keepFields',
        },
      ],
    ],
    [
      'if on drop',
      { drop: isEvent('a'), if: isEvent('b') },
      [{ field: 'filters[1].if', message: 'narrows only dropFields and keepFields; put the condition in drop itself (with all)' }],
    ],
    [
      'if on only',
      { only: isEvent('a'), if: isEvent('b') },
      [{ field: 'filters[1].if', message: 'narrows only dropFields and keepFields; put the condition in only itself (with all)' }],
    ],
    [
      'bad conditions',
      { dropFields: ['properties.a'], if: { any: [{ field: { path: 'properties.', exists: true } }] } },
      [{ field: 'filters[1].if.any[0].field.path', message: 'ends with a dot' }],
    ],
    [
      'a bad pattern in only',
      { only: { field: { path: 'event', matches: 'x\\' } } },
      [{ field: 'filters[1].only.field.matches', message: 'ends with a lone \\ (write \\\\ for a backslash itself)' }],
    ],
    [
      'bad field-list paths',
      { keepFields: ['properties.plan', 'context..ip', 'userId', 'propertiesX'] },
      [
        { field: 'filters[1].keepFields[1]', message: 'has an empty name between two dots' },
        {
          field: 'filters[1].keepFields[2]',
          message:
            "must be properties, traits or context, or a path under them: the call's other fields (type, messageId, userId, event …) are what a receiver needs to handle it",
        },
        {
          field: 'filters[1].keepFields[3]',
          message:
            "must be properties, traits or context, or a path under them: the call's other fields (type, messageId, userId, event …) are what a receiver needs to handle it",
        },
      ],
    ],
    [
      'a dropFields path outside the three',
      { dropFields: ['messageId'] },
      [
        {
          field: 'filters[1].dropFields[0]',
          message:
            "must be properties, traits or context, or a path under them: the call's other fields (type, messageId, userId, event …) are what a receiver needs to handle it",
        },
      ],
    ],
  ])('names %s', (_name, rule, problems) => {
    expect(filtersProblems([ok, rule], 'filters')).toEqual(problems);
  });

  it('refuses more than 10 matches and contains tests across the rules, naming the first one too many', () => {
    const scan = (i: number): CallCondition =>
      i % 2 === 0 ? { field: { path: 'event', matches: `*${i}*` } } : { field: { path: 'properties.tags', contains: `t${i}` } };
    const rules = (tests: number): FilterRule[] => [
      { drop: { any: Array.from({ length: 4 }, (_, i) => scan(i)) } },
      { only: { all: [isEvent('x'), ...Array.from({ length: 4 }, (_, i) => scan(i + 4))] } },
      { dropFields: ['traits'], if: { not: { any: Array.from({ length: tests - 8 }, (_, i) => scan(i + 8)) } } },
    ];
    expect(filtersProblems(rules(10), 'filters')).toEqual([]);
    expect(filtersProblems(rules(12), 'filters')).toEqual([
      {
        field: 'filters[2].if.not.any[2].field.matches',
        message: "is one matches or contains test too many: at most 10 in a destination's filters",
      },
    ]);
  });

  it('refuses more than 1000 condition nodes across the rules', () => {
    const leaf = isEvent('x');
    // 1 + 4 + 4 × 48 = 197 nodes each, 985 for five rules.
    const big: CallCondition = { any: Array.from({ length: 4 }, () => ({ all: Array.from({ length: 48 }, () => leaf) })) };
    const rules: FilterRule[] = Array.from({ length: 5 }, () => ({ drop: big }));
    const narrowed = (leaves: number): FilterRule => ({ dropFields: ['traits'], if: { any: Array.from({ length: leaves }, () => leaf) } });
    expect(filtersProblems([...rules, narrowed(14)], 'filters')).toEqual([]);
    expect(filtersProblems([...rules, narrowed(15)], 'filters')).toEqual([
      { field: 'filters', message: 'have more than 1000 condition nodes in all (drop, only and if together)' },
    ]);
  });
});
