import { CALL_TYPES, isCallType, routeFor } from './routes.js';

describe('routeFor', () => {
  it.each([
    ['identify', 'identify'],
    ['track', 'track'],
    ['page', 'page'],
    ['screen', 'screen'],
    ['group', 'group'],
    ['alias', 'alias'],
    ['i', 'identify'],
    ['t', 'track'],
    ['p', 'page'],
    ['s', 'screen'],
    ['g', 'group'],
    ['a', 'alias'],
  ])('/v1/%s is a single %s call', (segment, type) => {
    expect(routeFor(segment)).toEqual({ kind: 'single', type });
  });

  it.each([['batch'], ['import'], ['b']])('/v1/%s is a batch', (segment) => {
    expect(routeFor(segment)).toEqual({ kind: 'batch' });
  });

  it.each([
    [''],
    ['Track'],
    ['TRACK'],
    ['track/'],
    ['tracks'],
    ['x'],
    ['delete'],
    ['batch/x'],
    ['__proto__'],
    ['constructor'],
    ['toString'],
  ])('/v1/%s is no route', (segment) => {
    expect(routeFor(segment)).toBeUndefined();
  });
});

describe('CALL_TYPES and isCallType', () => {
  it('lists exactly the six call types', () => {
    expect([...CALL_TYPES].sort()).toEqual(['alias', 'group', 'identify', 'page', 'screen', 'track']);
  });

  it('knows the call types and nothing else', () => {
    for (const type of CALL_TYPES) expect(isCallType(type)).toBe(true);
    for (const value of ['Track', 'batch', 'delete', '', ' track', undefined, null, 1, ['track'], { type: 'track' }])
      expect(isCallType(value)).toBe(false);
  });
});
