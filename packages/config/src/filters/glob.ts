/**
 * The `matches` pattern of call conditions: `*` any run of characters (none too), `?` exactly one
 * UTF-16 code unit (so a character outside the Basic Multilingual Plane, an emoji for instance,
 * takes `??`), `\` takes the next character as itself. Case-sensitive; the whole value must match.
 *
 * Patterns come from users and values from anyone who has a write key, so matching must not
 * backtrack: a regular expression like /^.*a.*a.*a.*b$/ takes quadratic time or worse on a long
 * run of `a`. Instead the pattern is compiled once into a bit-parallel NFA (Shift-And): one bit per
 * pattern position, and per character of the value a shift, an AND with the character's mask and an
 * OR for the `*` positions that keep themselves. That is O(value length × pattern words), with a
 * pattern of at most 100 characters fitting in 4 words of 32 bits.
 */

type Token = { readonly kind: 'char'; readonly code: number } | { readonly kind: 'any' } | { readonly kind: 'star' };

export type GlobTest = (value: string) => boolean;

/** What is wrong with a pattern, or undefined when it is usable. */
export function globProblem(pattern: string): string | undefined {
  let trailing = 0;
  for (let i = pattern.length - 1; i >= 0 && pattern[i] === '\\'; i--) trailing++;
  return trailing % 2 === 1 ? 'ends with a lone \\ (write \\\\ for a backslash itself)' : undefined;
}

/** The pattern compiled once; the test runs in time linear in the value's length. */
export function compileGlob(pattern: string): GlobTest {
  const tokens = tokenize(pattern);
  return shortcut(tokens) ?? shiftAnd(tokens);
}

// A lone trailing `\` is refused on save (globProblem); should one reach here, it stands for itself.
function tokenize(pattern: string): Token[] {
  const tokens: Token[] = [];
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern.charCodeAt(i);
    if (c === 0x5c /* \ */ && i + 1 < pattern.length) tokens.push({ kind: 'char', code: pattern.charCodeAt(++i) });
    else if (c === 0x2a /* * */) {
      // Consecutive stars mean what one does; collapsing them keeps the automaton small.
      if (tokens.at(-1)?.kind !== 'star') tokens.push({ kind: 'star' });
    } else if (c === 0x3f /* ? */) tokens.push({ kind: 'any' });
    else tokens.push({ kind: 'char', code: c });
  }
  return tokens;
}

/** Plain string tests for the common shapes: `text`, `*`, `text*`, `*text`, `*text*`. */
function shortcut(tokens: readonly Token[]): GlobTest | undefined {
  const first = tokens[0]?.kind === 'star' ? 1 : 0;
  const last = tokens.length > first && tokens.at(-1)?.kind === 'star' ? tokens.length - 1 : tokens.length;
  const middle = tokens.slice(first, last);
  if (!middle.every((t) => t.kind === 'char')) return undefined;
  const text = String.fromCharCode(...middle.map((t) => (t.kind === 'char' ? t.code : 0)));
  const leading = first === 1;
  const trailing = last < tokens.length;
  if (leading && trailing) return text === '' ? () => true : (value) => value.includes(text);
  if (leading) return (value) => value.endsWith(text);
  if (trailing) return (value) => value.startsWith(text);
  return (value) => value === text;
}

/**
 * State bit j set: the first j tokens match the value read so far. Bit 0 is the start, bit
 * tokens.length the accepting state. Reading character c: a bit j moves to j + 1 when token j is
 * c or `?` (the mask of c has bit j + 1), and stays when token j is `*` (the star mask). Then each
 * `*` is also skipped for free (its bit passes to the next one); stars are collapsed, so once is enough.
 */
function shiftAnd(tokens: readonly Token[]): GlobTest {
  const words = Math.ceil((tokens.length + 1) / 32);
  const anyMask = new Uint32Array(words);
  const starMask = new Uint32Array(words);
  const charMasks = new Map<number, Uint32Array>();
  const setBit = (mask: Uint32Array, bit: number): void => {
    mask[bit >>> 5]! |= 1 << (bit & 31);
  };
  tokens.forEach((token, j) => {
    if (token.kind === 'star') setBit(starMask, j);
    else if (token.kind === 'any') setBit(anyMask, j + 1);
  });
  // Every character matches the `?` positions; a character of the pattern matches its own too.
  tokens.forEach((token, j) => {
    if (token.kind !== 'char') return;
    let mask = charMasks.get(token.code);
    if (!mask) charMasks.set(token.code, (mask = anyMask.slice()));
    setBit(mask, j + 1);
  });
  if (words === 1) return oneWord(tokens.length, charMasks, anyMask[0]!, starMask[0]!);
  const acceptWord = tokens.length >>> 5;
  const acceptBit = 1 << (tokens.length & 31);
  // Reused between calls: matching is synchronous, so no two runs ever share it.
  const state = new Uint32Array(words);
  return (value) => {
    state.fill(0);
    state[0] = 1 | ((starMask[0]! & 1) << 1);
    for (let i = 0; i < value.length; i++) {
      const mask = charMasks.get(value.charCodeAt(i)) ?? anyMask;
      // Updated in place, word by word: each word's old top bit (the shift) and new top star bit
      // (the skip) carry into the next word.
      let shiftCarry = 0;
      let skipCarry = 0;
      let alive = 0;
      for (let w = 0; w < words; w++) {
        const s = state[w]!;
        const stars = starMask[w]!;
        let moved = (((s << 1) | shiftCarry) & mask[w]!) | (s & stars);
        shiftCarry = s >>> 31;
        const skipping = moved & stars;
        moved |= (skipping << 1) | skipCarry;
        skipCarry = skipping >>> 31;
        state[w] = moved;
        alive |= moved;
      }
      if (alive === 0) return false;
    }
    return (state[acceptWord]! & acceptBit) !== 0;
  };
}

/** The same automaton for patterns of at most 31 tokens (nearly all): the state is one number. */
function oneWord(length: number, charMasks: ReadonlyMap<number, Uint32Array>, anyMask: number, starMask: number): GlobTest {
  // ASCII masks in a table, so the usual character costs an array read rather than a Map lookup.
  const ascii = new Int32Array(128).fill(anyMask);
  const others = new Map<number, number>();
  for (const [code, mask] of charMasks) {
    if (code < 128) ascii[code] = mask[0]!;
    else others.set(code, mask[0]!);
  }
  const accept = 1 << length;
  const start = 1 | ((1 & starMask) << 1);
  return (value) => {
    let state = start;
    for (let i = 0; i < value.length; i++) {
      const code = value.charCodeAt(i);
      const mask = code < 128 ? ascii[code]! : (others.get(code) ?? anyMask);
      state = ((state << 1) & mask) | (state & starMask);
      if (state === 0) return false;
      state |= (state & starMask) << 1;
    }
    return (state & accept) !== 0;
  };
}
