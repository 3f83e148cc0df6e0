import { jsonTextLength } from './json-length.js';

describe('jsonTextLength', () => {
  it.each<[unknown]>([
    [{}],
    [[]],
    [null],
    ['with "quotes" and \n \u2028 é'],
    [{ a: 1, 'b"c': [true, false, null, -1.5e-7], d: { e: {} } }],
    [
      [
        [1, 2],
        [3, [4, { x: 'y' }]],
      ],
    ],
  ])('equals JSON.stringify for %j', (value) => {
    expect(jsonTextLength(value, Infinity)).toBe(JSON.stringify(value).length);
  });

  it('stops once past the limit', () => {
    const value = Array.from({ length: 10 }, () => 'x'.repeat(1000));
    const length = jsonTextLength(value, 100);
    expect(length).toBeGreaterThan(100);
    expect(length).toBeLessThan(JSON.stringify(value).length);
  });

  it('measures a value too deep for JSON.stringify', () => {
    let deep: unknown = 1;
    for (let i = 0; i < 200_000; i++) deep = [deep];
    expect(jsonTextLength(deep, Infinity)).toBe(400_001);
  });
});
