import { compileValueTest, type ValueOperators } from './value-test.js';

const ABSENT = undefined;

// Each operator against a present value, an absent one, null and a value of another type.
describe('compileValueTest', () => {
  it.each<[string, ValueOperators, unknown, boolean]>([
    ['exists true, present', { exists: true }, 'x', true],
    ['exists true, false counts', { exists: true }, false, true],
    ['exists true, null counts', { exists: true }, null, true],
    ['exists true, absent', { exists: true }, ABSENT, false],
    ['exists false, absent', { exists: false }, ABSENT, true],
    ['exists false, null', { exists: false }, null, false],

    ['equals a string', { equals: 'pro' }, 'pro', true],
    ['equals another string', { equals: 'pro' }, 'free', false],
    ['equals is case-sensitive', { equals: 'pro' }, 'Pro', false],
    ['equals a number', { equals: 3 }, 3, true],
    ['equals a number against its text', { equals: 3 }, '3', false],
    ['equals text against a number', { equals: '3' }, 3, false],
    ['equals false', { equals: false }, false, true],
    ['equals false against 0', { equals: false }, 0, false],
    ['equals null on null', { equals: null }, null, true],
    ['equals null on absent', { equals: null }, ABSENT, false],
    ['equals on absent', { equals: 'pro' }, ABSENT, false],
    ['equals on an object', { equals: '[object Object]' }, {}, false],
    ['equals on an array', { equals: 'a' }, ['a'], false],

    ['not_equals another value', { not_equals: 'pro' }, 'free', true],
    ['not_equals the same value', { not_equals: 'pro' }, 'pro', false],
    ['not_equals across types', { not_equals: 3 }, '3', true],
    ['not_equals null on null', { not_equals: null }, null, false],
    ['not_equals null on a value', { not_equals: null }, 'x', true],
    ['not_equals on absent', { not_equals: 'pro' }, ABSENT, false],
    ['not_equals on an object', { not_equals: 'pro' }, { plan: 'pro' }, true],

    ['contains text', { contains: 'Completed' }, 'Order Completed', true],
    ['contains is case-sensitive', { contains: 'completed' }, 'Order Completed', false],
    ['contains a number in a string', { contains: 3 }, 'x3', false],
    ['contains a string in an array', { contains: 'beta' }, ['beta', 'eu'], true],
    ['contains a number in an array', { contains: 7 }, ['beta', 7], true],
    ['contains a number as text in an array', { contains: 7 }, ['7'], false],
    ['contains true in an array', { contains: true }, [true], true],
    ['contains misses in an array', { contains: 'x' }, ['beta'], false],
    ['contains on an object', { contains: 'a' }, { a: 1 }, false],
    ['contains on null', { contains: 'a' }, null, false],
    ['contains on absent', { contains: 'a' }, ABSENT, false],

    ['gt number', { gt: 10 }, 11, true],
    ['gt number equal', { gt: 10 }, 10, false],
    ['gte number equal', { gte: 10 }, 10, true],
    ['lt number', { lt: 10 }, 9.5, true],
    ['lt number equal', { lt: 10 }, 10, false],
    ['lte number equal', { lte: 10 }, 10, true],
    ['gt number against text', { gt: 5 }, '10', false],
    ['gt text against a number', { gt: '5' }, 10, false],
    ['gt on null', { gt: 0 }, null, false],
    ['lt on absent', { lt: 10 }, ABSENT, false],
    ['gt text in code-unit order', { gt: 'b' }, 'c', true],
    ['gt text: upper case sorts first', { gt: 'a' }, 'B', false],
    ['gte ISO time', { gte: '2026-01-01T00:00:00.000Z' }, '2026-11-21T10:00:00.000Z', true],
    ['lt ISO time', { lt: '2026-01-01T00:00:00.000Z' }, '2026-11-21T10:00:00.000Z', false],

    ['in a string', { in: ['pro', 'team'] }, 'team', true],
    ['in misses', { in: ['pro', 'team'] }, 'free', false],
    ['in a number', { in: [1, 2] }, 2, true],
    ['in: 1 is not "1"', { in: ['1', '2'] }, 1, false],
    ['in: "1" is not 1', { in: [1, 2] }, '1', false],
    ['in null', { in: ['pro', null] }, null, true],
    ['in without null', { in: ['pro'] }, null, false],
    ['in a boolean', { in: [false] }, false, true],
    ['in: false is not 0', { in: [0] }, false, false],
    ['in on absent', { in: ['pro', null] }, ABSENT, false],
    ['in on an array', { in: ['a'] }, ['a'], false],

    ['starts_with', { starts_with: 'Order ' }, 'Order Completed', true],
    ['starts_with misses', { starts_with: 'Order ' }, 'Checkout Started', false],
    ['starts_with is case-sensitive', { starts_with: 'order' }, 'Order Completed', false],
    ['starts_with on a number', { starts_with: '1' }, 12, false],
    ['starts_with on absent', { starts_with: 'x' }, ABSENT, false],

    ['matches', { matches: 'Order *' }, 'Order Completed', true],
    ['matches misses', { matches: 'Order *' }, 'Checkout Started', false],
    ['matches on a number', { matches: '1*' }, 12, false],
    ['matches on null', { matches: '*' }, null, false],
    ['matches on absent', { matches: '*' }, ABSENT, false],
    ['matches a string of 4096 characters', { matches: '*' }, 'x'.repeat(4096), true],
    ['matches no string longer than 4096 characters', { matches: '*' }, 'x'.repeat(4097), false],
    ['contains reads strings of any length', { contains: 'y' }, `${'x'.repeat(30_000)}y`, true],

    ['no operator', {}, 'x', false],
  ])('%s', (_name, test, value, expected) => {
    expect(compileValueTest(test)(value)).toBe(expected);
  });
});
