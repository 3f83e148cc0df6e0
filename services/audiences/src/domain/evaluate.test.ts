import type { AudienceCondition, TraitTest } from '@eventrelay/config';
import { isTimeWindowed, meets } from './evaluate.js';
import { DAY_MS, parseProfile, utcDay, viewThrough, type ProfileView } from './profile.js';

const NOW = Date.parse('2026-11-21T10:00:00.000Z');
const TODAY = utcDay(NOW);

/** A view of one source's traits (as stored: JSON text) and event counters. */
function view(traits: Record<string, unknown>, events: Record<string, string> = {}): ProfileView {
  const fields: Record<string, string> = { v: '1', 'ta:web': String(NOW - 1000) };
  for (const [k, v] of Object.entries(traits)) fields[`t:web:${k}`] = JSON.stringify(v);
  for (const [k, v] of Object.entries(events)) fields[`e:web:${k}`] = v;
  const v = viewThrough(parseProfile('u1', fields)!, ['web']);
  if (!v) throw new Error('the test profile has neither traits nor events');
  return v;
}

const user = view({
  plan: 'trial',
  seats: 5,
  seatsText: '5',
  vip: false,
  manager: null,
  bio: 'likes Coffee and tea',
  tags: ['beta', 'eu', 7, true],
  signedUpAt: '2026-03-01T12:00:00.000Z',
  'address.city': 'Berlin',
});
const trait = (t: TraitTest): AudienceCondition => ({ trait: t });

describe('meets: trait tests', () => {
  it.each<[string, TraitTest, boolean]>([
    ['equals a string', { key: 'plan', equals: 'trial' }, true],
    ['equals another string', { key: 'plan', equals: 'paid' }, false],
    ['equals a number', { key: 'seats', equals: 5 }, true],
    ['equals a number against its text', { key: 'seatsText', equals: 5 }, false],
    ['equals text against a number', { key: 'seats', equals: '5' }, false],
    ['equals false', { key: 'vip', equals: false }, true],
    ['equals null on a null trait', { key: 'manager', equals: null }, true],
    ['equals null on a set trait', { key: 'plan', equals: null }, false],
    ['equals null on an unset trait', { key: 'missing', equals: null }, false],
    ['equals on an unset trait', { key: 'missing', equals: 'x' }, false],
    ['a key with a dot, matched whole', { key: 'address.city', equals: 'Berlin' }, true],
    ['a nested path is not followed', { key: 'address', exists: true }, false],

    ['not_equals another value', { key: 'plan', not_equals: 'paid' }, true],
    ['not_equals the same value', { key: 'plan', not_equals: 'trial' }, false],
    ['not_equals across types', { key: 'seats', not_equals: '5' }, true],
    ['not_equals null on a null trait', { key: 'manager', not_equals: null }, false],
    ['not_equals on an unset trait', { key: 'missing', not_equals: 'x' }, false],

    ['exists true on a set trait', { key: 'plan', exists: true }, true],
    ['exists true on a null trait (null counts as set)', { key: 'manager', exists: true }, true],
    ['exists true on a false trait', { key: 'vip', exists: true }, true],
    ['exists true on an unset trait', { key: 'missing', exists: true }, false],
    ['exists false on an unset trait', { key: 'missing', exists: false }, true],
    ['exists false on a null trait', { key: 'manager', exists: false }, false],

    ['contains text of a string', { key: 'bio', contains: 'Coffee' }, true],
    ['contains is case-sensitive', { key: 'bio', contains: 'coffee' }, false],
    ['contains a number in a string', { key: 'seatsText', contains: 5 }, false],
    ['contains a string item of an array', { key: 'tags', contains: 'eu' }, true],
    ['contains a number item of an array', { key: 'tags', contains: 7 }, true],
    ['contains a boolean item of an array', { key: 'tags', contains: true }, true],
    ['contains compares array items exactly', { key: 'tags', contains: '7' }, false],
    ['contains is not a substring test on array items', { key: 'tags', contains: 'bet' }, false],
    ['contains on a number', { key: 'seats', contains: 5 }, false],
    ['contains on a null trait', { key: 'manager', contains: 'x' }, false],
    ['contains on an unset trait', { key: 'missing', contains: 'x' }, false],

    ['gt a smaller number', { key: 'seats', gt: 4 }, true],
    ['gt the same number', { key: 'seats', gt: 5 }, false],
    ['gte the same number', { key: 'seats', gte: 5 }, true],
    ['gte a bigger number', { key: 'seats', gte: 6 }, false],
    ['lt a bigger number', { key: 'seats', lt: 6 }, true],
    ['lt the same number', { key: 'seats', lt: 5 }, false],
    ['lte the same number', { key: 'seats', lte: 5 }, true],
    ['lte a smaller number', { key: 'seats', lte: 4.5 }, false],
    ['gt an earlier ISO date', { key: 'signedUpAt', gt: '2026-01-01T00:00:00.000Z' }, true],
    ['lt an earlier ISO date', { key: 'signedUpAt', lt: '2026-01-01T00:00:00.000Z' }, false],
    ['gte the same ISO date', { key: 'signedUpAt', gte: '2026-03-01T12:00:00.000Z' }, true],
    ['lte a later ISO date', { key: 'signedUpAt', lte: '2026-12-31T00:00:00.000Z' }, true],
    ['gt a number against numeric text', { key: 'seatsText', gt: 1 }, false],
    ['lt text against a number', { key: 'seats', lt: '9' }, false],
    ['gt on a boolean', { key: 'vip', gt: 0 }, false],
    ['lt on a null trait', { key: 'manager', lt: 1 }, false],
    ['gte on an array', { key: 'tags', gte: 0 }, false],
    ['lt on an unset trait', { key: 'missing', lt: 1 }, false],
  ])('%s → %s', (_what, test, expected) => {
    expect(meets(trait(test), user, NOW)).toBe(expected);
  });
});

describe('meets: event tests', () => {
  // 10 in all; of them 1 today, 2 yesterday, 3 six days ago, 4 seven days ago.
  const active = view({}, { 'Order Completed': `10 ${TODAY}:1 ${TODAY - 1}:2 ${TODAY - 6}:3 ${TODAY - 7}:4` });

  it.each<[string, AudienceCondition['event'], boolean]>([
    ['once by default', { name: 'Order Completed' }, true],
    ['an event never sent', { name: 'Signed Up' }, false],
    ['an event name matched exactly', { name: 'order completed' }, false],
    ['atLeast the total', { name: 'Order Completed', atLeast: 10 }, true],
    ['atLeast more than the total', { name: 'Order Completed', atLeast: 11 }, false],
    ['within 1 day: today only', { name: 'Order Completed', withinDays: 1, atLeast: 1 }, true],
    ['within 1 day, atLeast 2', { name: 'Order Completed', withinDays: 1, atLeast: 2 }, false],
    ['within 2 days, atLeast 3', { name: 'Order Completed', withinDays: 2, atLeast: 3 }, true],
    ['within 7 days, atLeast 6', { name: 'Order Completed', withinDays: 7, atLeast: 6 }, true],
    ['within 7 days, atLeast 7 (the bucket 7 days ago is out)', { name: 'Order Completed', withinDays: 7, atLeast: 7 }, false],
    ['within 8 days, atLeast 10', { name: 'Order Completed', withinDays: 8, atLeast: 10 }, true],
  ])('%s → %s', (_what, event, expected) => {
    expect(meets({ event: event! }, active, NOW)).toBe(expected);
  });

  it('counts the window from the injected now', () => {
    const condition: AudienceCondition = { event: { name: 'Order Completed', withinDays: 1 } };
    expect(meets(condition, active, NOW)).toBe(true);
    expect(meets(condition, active, NOW + DAY_MS)).toBe(false);
    // Late the same UTC day still counts today's bucket; early the next day does not.
    expect(meets(condition, active, Date.parse('2026-11-21T23:59:59.999Z'))).toBe(true);
    expect(meets(condition, active, Date.parse('2026-11-22T00:00:00.000Z'))).toBe(false);
    expect(meets({ event: { name: 'Order Completed', withinDays: 7, atLeast: 7 } }, active, NOW + DAY_MS)).toBe(false);
    expect(meets({ event: { name: 'Order Completed', withinDays: 3, atLeast: 3 } }, active, NOW + DAY_MS)).toBe(true);
  });
});

describe('meets: all, any, not', () => {
  const yes: AudienceCondition = { trait: { key: 'plan', equals: 'trial' } };
  const no: AudienceCondition = { trait: { key: 'plan', equals: 'paid' } };

  it.each<[string, AudienceCondition, boolean]>([
    ['all true', { all: [yes, yes] }, true],
    ['all with one false', { all: [yes, no] }, false],
    ['any with one true', { any: [no, yes] }, true],
    ['any all false', { any: [no, no] }, false],
    ['not false', { not: no }, true],
    ['not true', { not: yes }, false],
    ['not not', { not: { not: yes } }, true],
    ['nested', { all: [yes, { any: [no, { not: no }] }, { not: { all: [yes, no] } }] }, true],
    ['nested, one leaf flipped', { all: [yes, { any: [no, { not: yes }] }] }, false],
    ['not of an unset trait test', { not: { trait: { key: 'missing', equals: 'x' } } }, true],
  ])('%s → %s', (_what, condition, expected) => {
    expect(meets(condition, user, NOW)).toBe(expected);
  });

  it('is false for a node with no known key', () => {
    expect(meets({}, user, NOW)).toBe(false);
  });
});

describe('isTimeWindowed', () => {
  const windowed: AudienceCondition = { event: { name: 'E', withinDays: 7 } };
  const total: AudienceCondition = { event: { name: 'E', atLeast: 3 } };
  const plan: AudienceCondition = { trait: { key: 'plan', equals: 'trial' } };

  it.each<[string, AudienceCondition, boolean]>([
    ['a trait test', plan, false],
    ['an event test over all time', total, false],
    ['an event test within days', windowed, true],
    ['a window under not', { not: windowed }, true],
    ['a window deep in all/any', { all: [plan, { any: [total, { not: windowed }] }] }, true],
    ['all/any without a window', { all: [plan, { any: [total, { not: plan }] }] }, false],
  ])('%s → %s', (_what, condition, expected) => {
    expect(isTimeWindowed(condition)).toBe(expected);
  });
});
