import type { CallCondition, FieldTest } from '../generated/contracts.js';
import { compileCondition, conditionProblems, conditionRoots, conditionSize } from './call-condition.js';

const call = JSON.parse(
  JSON.stringify({
    type: 'track',
    event: 'Order Completed',
    userId: 'u-1',
    anonymousId: 'a-1',
    messageId: 'm-1',
    timestamp: '2026-11-21T10:00:00.000Z',
    properties: {
      plan: 'pro',
      total: 42.5,
      coupon: null,
      tags: ['beta', 'eu', 7],
      items: [{ sku: 'A-1', price: 10 }, { sku: 'B-2' }],
      address: { city: 'Berlin' },
    },
    context: { library: { name: 'analytics.js', version: '2.1.0' } },
    integrations: { All: true },
  }),
) as Record<string, unknown>;

const field = (test: FieldTest): CallCondition => ({ field: test });
const holds = (condition: CallCondition): boolean => compileCondition(condition)(call);

describe('compileCondition: field tests', () => {
  it.each<[string, FieldTest, boolean]>([
    ['a top-level field', { path: 'event', equals: 'Order Completed' }, true],
    ['a nested field', { path: 'properties.address.city', equals: 'Berlin' }, true],
    ['a deeper library name', { path: 'context.library.name', starts_with: 'analytics' }, true],
    ['an array element by index', { path: 'properties.items.1.sku', equals: 'B-2' }, true],
    ['an index past the end', { path: 'properties.items.2.sku', exists: true }, false],
    ['a field of an array is absent', { path: 'properties.items.sku', exists: true }, false],
    ['constructor is absent', { path: 'properties.constructor', exists: true }, false],
    ['__proto__ is absent', { path: '__proto__', exists: false }, true],
    ['toString is absent', { path: 'properties.toString', not_equals: 'x' }, false],
    ['null is present', { path: 'properties.coupon', exists: true }, true],
    ['null equals null', { path: 'properties.coupon', equals: null }, true],
    ['absent is not null', { path: 'properties.missing', equals: null }, false],
    ['not_equals on absent', { path: 'properties.missing', not_equals: 'pro' }, false],
    ['not_equals on a value', { path: 'properties.plan', not_equals: 'free' }, true],
    ['contains in an array field', { path: 'properties.tags', contains: 7 }, true],
    ['gt on a number', { path: 'properties.total', gt: 40 }, true],
    ['lte on a time', { path: 'timestamp', lte: '2026-11-21T10:00:00.000Z' }, true],
    ['in', { path: 'properties.plan', in: ['team', 'pro'] }, true],
    ['in misses', { path: 'properties.plan', in: ['team', 'free'] }, false],
    ['matches', { path: 'event', matches: 'Order *' }, true],
    ['matches on an object', { path: 'properties', matches: '*' }, false],
    ['an object never equals a scalar', { path: 'properties.address', equals: '[object Object]' }, false],
  ])('%s', (_name, test, expected) => {
    expect(holds(field(test))).toBe(expected);
  });
});

describe('compileCondition: all, any, not', () => {
  const yes = field({ path: 'event', equals: 'Order Completed' });
  const no = field({ path: 'event', equals: 'Checkout Started' });
  it.each<[string, CallCondition, boolean]>([
    ['all true', { all: [yes, yes] }, true],
    ['all with one false', { all: [yes, no] }, false],
    ['all of one', { all: [no] }, false],
    ['any with one true', { any: [no, yes] }, true],
    ['any all false', { any: [no, no] }, false],
    ['any of one', { any: [yes] }, true],
    ['not false', { not: no }, true],
    ['not true', { not: yes }, false],
    ['not not', { not: { not: yes } }, true],
    ['nested', { all: [{ any: [no, { not: no }] }, { not: { all: [yes, no] } }] }, true],
    ['sample 100', { sample: { percent: 100 } }, true],
    ['sample 0', { sample: { percent: 0 } }, false],
    ['a node with no known key', {}, false],
  ])('%s', (_name, condition, expected) => {
    expect(holds(condition)).toBe(expected);
  });

  it('evaluates a route entry as well as a whole call', () => {
    const entry = { type: 'track', event: 'Order Completed', userId: 'u-1', messageId: 'm-1' };
    expect(compileCondition({ all: [yes, field({ path: 'properties.plan', exists: false })] })(entry)).toBe(true);
  });
});

describe('conditionRoots', () => {
  it('names the first name of each path, and the ids for sampling', () => {
    const condition: CallCondition = {
      any: [
        field({ path: 'event', equals: 'x' }),
        { not: field({ path: 'properties.plan', equals: 'x' }) },
        { all: [field({ path: 'context.library.name', exists: true }), field({ path: 'properties.total', gt: 1 })] },
      ],
    };
    expect([...conditionRoots(condition)].sort()).toEqual(['context', 'event', 'properties']);
    expect([...conditionRoots({ sample: { percent: 5 } })].sort()).toEqual(['anonymousId', 'userId']);
    expect([...conditionRoots({ all: [field({ path: 'type', equals: 'track' }), { sample: { percent: 5 } }] })].sort()).toEqual([
      'anonymousId',
      'type',
      'userId',
    ]);
  });
});

/** `{not: {not: … leaf}}`, `depth` nodes in all. */
function notChain(depth: number): CallCondition {
  let condition: CallCondition = field({ path: 'event', exists: true });
  for (let i = 1; i < depth; i++) condition = { not: condition };
  return condition;
}

describe('conditionProblems', () => {
  it('accepts a good condition', () => {
    expect(conditionProblems({ all: [field({ path: 'event', matches: 'Order \\*' }), { sample: { percent: 10 } }] }, 'drop')).toEqual([]);
  });

  it('names bad paths and patterns by their field', () => {
    const condition: CallCondition = {
      all: [
        field({ path: 'properties..plan', equals: 'x' }),
        { not: field({ path: 'event', matches: 'Order \\' }) },
        { any: [field({ path: 'a.b.c.d.e.f.g.h.i.j.k', exists: true })] },
      ],
    };
    expect(conditionProblems(condition, 'filters[0].drop')).toEqual([
      { field: 'filters[0].drop.all[0].field.path', message: 'has an empty name between two dots' },
      { field: 'filters[0].drop.all[1].not.field.matches', message: 'ends with a lone \\ (write \\\\ for a backslash itself)' },
      { field: 'filters[0].drop.all[2].any[0].field.path', message: 'has 11 names; at most 10' },
    ]);
  });

  it('accepts 10 levels and refuses 11', () => {
    expect(conditionProblems(notChain(10), 'if')).toEqual([]);
    expect(conditionProblems(notChain(11), 'if')).toEqual([{ field: `if${'.not'.repeat(10)}`, message: 'nests deeper than 10 levels' }]);
  });

  it('refuses a 5000-deep chain with a problem, not a stack overflow', () => {
    expect(conditionProblems(notChain(5000), 'drop')).toEqual([
      { field: `drop${'.not'.repeat(10)}`, message: 'nests deeper than 10 levels' },
    ]);
    expect(conditionSize(notChain(5000), 200)).toBe(201);
    expect(conditionRoots(notChain(5000))).toEqual(new Set(['event']));
  });

  it('accepts 200 nodes and refuses 201', () => {
    const leaf = field({ path: 'event', exists: true });
    const wide = (leaves: number): CallCondition => ({
      any: Array.from({ length: Math.ceil(leaves / 50) }, (_, i) => ({
        all: Array.from({ length: Math.min(50, leaves - i * 50) }, () => leaf),
      })),
    });
    // 1 + 4 + 195 = 200 nodes.
    expect(conditionSize(wide(195), 1000)).toBe(200);
    expect(conditionProblems(wide(195), 'only')).toEqual([]);
    expect(conditionProblems(wide(196), 'only')).toEqual([{ field: 'only', message: 'has more than 200 nodes' }]);
  });
});
