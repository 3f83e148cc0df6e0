import { compileGlob, globProblem } from './glob.js';

/** The textbook O(n·m) wildcard matcher, as a reference the automaton must agree with. */
function reference(pattern: string, value: string): boolean {
  const tokens: string[] = [];
  for (let i = 0; i < pattern.length; i++) {
    if (pattern[i] === '\\' && i + 1 < pattern.length) tokens.push(`=${pattern[++i]}`);
    else tokens.push(pattern[i] === '*' || pattern[i] === '?' ? pattern[i]! : `=${pattern[i]}`);
  }
  let row = tokens.map(() => false);
  // row[j]: the first j tokens match the value read so far (index shifted by one below).
  let prev = [true, ...row];
  for (let j = 0; j < tokens.length; j++) prev[j + 1] = prev[j]! && tokens[j] === '*';
  for (const c of value) {
    for (const unit of c.length === 1 ? [c] : [c[0]!, c[1]!]) {
      const next = [false];
      for (let j = 0; j < tokens.length; j++) {
        const t = tokens[j]!;
        next[j + 1] = t === '*' ? next[j]! || prev[j + 1]! : prev[j]! && (t === '?' || t.slice(1) === unit);
      }
      prev = next;
    }
  }
  row = prev;
  return row[tokens.length]!;
}

const matches = (pattern: string, value: string): boolean => compileGlob(pattern)(value);

describe('compileGlob', () => {
  it.each<[string, string, boolean]>([
    ['Order Completed', 'Order Completed', true],
    ['Order Completed', 'order completed', false],
    ['Order Completed', 'Order Completed!', false],
    ['Order *', 'Order Completed', true],
    ['Order *', 'Order ', true],
    ['Order *', 'Order', false],
    ['* Completed', 'Order Completed', true],
    ['* Completed', 'Order Completed ', false],
    ['*Completed*', 'Order Completed today', true],
    ['*Completed*', 'Order completed today', false],
    ['*', '', true],
    ['*', 'anything at all', true],
    ['**', 'x', true],
    ['?', '', false],
    ['?', 'a', true],
    ['?', 'ab', false],
    ['a?c', 'abc', true],
    ['a?c', 'ac', false],
    ['a?c', 'abbc', false],
    ['a*c', 'ac', true],
    ['a*c', 'abbbc', true],
    ['a*c', 'abbbcd', false],
    ['*a*b*c*', 'xxaxxbxxcxx', true],
    ['*a*b*c*', 'abc', true],
    ['*a*b*c*', 'acb', false],
    ['a**b', 'ab', true],
    ['a*?', 'a', false],
    ['a*?', 'ab', true],
    ['?*?', 'ab', true],
    ['?*?', 'a', false],
    ['x', '', false],
    ['\\*', '*', true],
    ['\\*', 'a', false],
    ['\\?', '?', true],
    ['\\?', 'a', false],
    ['a\\*b*', 'a*bcd', true],
    ['a\\*b*', 'axbcd', false],
    ['\\\\', '\\', true],
    ['\\a', 'a', true],
    ['a\\', 'a\\', true],
    ['*.example.com', 'shop.example.com', true],
    ['*.example.com', 'example.com', false],
    ['caf?', 'café', true],
    ['Größe *', 'Größe XL', true],
    // ? is one UTF-16 code unit: an emoji outside the BMP takes two.
    ['?', '😀', false],
    ['??', '😀', true],
    ['a?b', 'a😀b', false],
    ['a??b', 'a😀b', true],
    ['a*b', 'a😀b', true],
    ['😀*', '😀 party', true],
    ['*😀?', 'x😀y', true],
  ])('%j against %j → %s', (pattern, value, expected) => {
    expect(matches(pattern, value)).toBe(expected);
    expect(reference(pattern, value)).toBe(expected);
  });

  it('is reusable: one compiled pattern gives each value its own answer', () => {
    const test = compileGlob('a*b?');
    expect([test('abc'), test('ab'), test('axxbz'), test('zab'), test('a b!')]).toEqual([true, false, true, false, true]);
  });

  it('handles patterns spanning several 32-bit words', () => {
    // 31 literals then a star: the star is bit 31, and skipping it carries into the next word.
    const edge = 'a'.repeat(31) + '*b';
    expect(matches(edge, 'a'.repeat(31) + 'b')).toBe(true);
    expect(matches(edge, 'a'.repeat(31) + 'xyzb')).toBe(true);
    expect(matches(edge, 'a'.repeat(30) + 'b')).toBe(false);
    const long = '?'.repeat(50) + '*' + 'x?'.repeat(24); // 99 tokens: 4 words
    expect(matches(long, 'y'.repeat(50) + 'x1'.repeat(24))).toBe(true);
    expect(matches(long, 'y'.repeat(70) + 'x1'.repeat(24))).toBe(true);
    expect(matches(long, 'y'.repeat(49) + 'x1'.repeat(24))).toBe(false);
    expect(matches(long, 'y'.repeat(50) + 'x1'.repeat(23) + 'z1')).toBe(false);
  });

  it('answers a pathological input that makes backtracking matchers explode', () => {
    // /^.*a.*a.*a.*a.*a.*a.*a.*a.*b$/ on this input backtracks for hours; the automaton reads
    // each character once. Correctness only: time is not asserted, a hang would time the test out.
    const value = 'a'.repeat(100_000);
    expect(matches('*a*a*a*a*a*a*a*a*b', value)).toBe(false);
    expect(matches('*a*a*a*a*a*a*a*a*b', value + 'b')).toBe(true);
    expect(matches('*a?a?a?a*b', value)).toBe(false);
    expect(matches('?'.repeat(60) + '*' + 'a'.repeat(30) + '?', value)).toBe(true);
  });

  it('agrees with the reference matcher on random patterns and values', () => {
    // A fixed-seed generator, so a failure is reproducible.
    let seed = 0x2545f491;
    const random = (n: number): number => {
      seed ^= seed << 13;
      seed ^= seed >>> 17;
      seed ^= seed << 5;
      return (seed >>> 0) % n;
    };
    const pick = (alphabet: string, max: number): string =>
      Array.from({ length: random(max + 1) }, () => alphabet[random(alphabet.length)]!).join('');
    for (let i = 0; i < 3000; i++) {
      const pattern = pick('ab*?\\', i % 10 === 0 ? 80 : 10).replace(/\\$/, '');
      const value = pick('ab*?\\', i % 10 === 0 ? 120 : 14);
      expect([pattern, value, matches(pattern, value)]).toEqual([pattern, value, reference(pattern, value)]);
    }
  });
});

describe('globProblem', () => {
  it.each<[string, string | undefined]>([
    ['Order *', undefined],
    ['a\\*', undefined],
    ['a\\\\', undefined],
    ['a\\', 'ends with a lone \\ (write \\\\ for a backslash itself)'],
    ['\\', 'ends with a lone \\ (write \\\\ for a backslash itself)'],
    ['a\\\\\\', 'ends with a lone \\ (write \\\\ for a backslash itself)'],
  ])('%j → %j', (pattern, problem) => {
    expect(globProblem(pattern)).toBe(problem);
  });
});
