/**
 * The operators that test one value, shared by audience trait tests (docs/audiences.md) and call
 * conditions (docs/filters.md), so `equals` or `gt` mean the same thing in both. A test is compiled
 * once: `in` becomes a Set, `matches` an automaton.
 */
import { compileGlob } from './glob.js';

// Built-ins used per call are read once: a global lookup inside a hot loop is slow in a vm context
// (jest's sandbox, where the hostile-input test measures these loops), and costs nothing to avoid.
const { isArray } = Array;

type Scalar = string | number | boolean | null;

/** The operators; a test uses exactly one (the schemas say so; the first found here wins). */
export interface ValueOperators {
  readonly exists?: boolean;
  readonly equals?: Scalar;
  readonly not_equals?: Scalar;
  readonly contains?: string | number | boolean;
  readonly gt?: string | number;
  readonly gte?: string | number;
  readonly lt?: string | number;
  readonly lte?: string | number;
  readonly in?: readonly Scalar[];
  readonly starts_with?: string;
  readonly matches?: string;
}

/**
 * `matches` reads strings of at most this many characters; a longer one never matches. The automaton
 * costs ~15 ns a character with a long pattern, so this keeps one test under ~0.07 ms whatever a
 * call holds (a call may carry a 32K-character string).
 */
const MAX_MATCHED_LENGTH = 4096;

/** `undefined` is an absent value; `null` is present. */
export type ValueTest = (value: unknown) => boolean;

/**
 * The test compiled. Every operator but `exists` is false on an absent value, `not_equals` too:
 * a call without a plan is not a call whose plan is other than "pro". Values compare by JSON
 * equality with scalars only, so an object or array never equals anything the operators hold.
 */
export function compileValueTest(test: ValueOperators): ValueTest {
  const { exists, equals, not_equals: notEquals, contains, gt, gte, lt, lte, starts_with: startsWith, matches } = test;
  if (exists !== undefined) return (value) => (value !== undefined) === exists;
  if (equals !== undefined) return (value) => value === equals;
  if (notEquals !== undefined) return (value) => value !== undefined && value !== notEquals;
  if (contains !== undefined) {
    return (value) =>
      typeof value === 'string' ? typeof contains === 'string' && value.includes(contains) : isArray(value) && value.includes(contains);
  }
  if (gt !== undefined) return comparing(gt, (c) => c > 0);
  if (gte !== undefined) return comparing(gte, (c) => c >= 0);
  if (lt !== undefined) return comparing(lt, (c) => c < 0);
  if (lte !== undefined) return comparing(lte, (c) => c <= 0);
  if (test.in !== undefined) {
    // A Set compares like ===, so 1 and "1" stay apart and null is a value like any other.
    const listed = new Set<unknown>(test.in);
    return (value) => value !== undefined && listed.has(value);
  }
  if (startsWith !== undefined) return (value) => typeof value === 'string' && value.startsWith(startsWith);
  if (matches !== undefined) {
    const glob = compileGlob(matches);
    return (value) => typeof value === 'string' && value.length <= MAX_MATCHED_LENGTH && glob(value);
  }
  return () => false;
}

// Only values of the same kind compare: a number with a number, a string with a string in code-unit
// order (so ISO 8601 times of the same form compare as times). A string "10" against 5 is false.
function comparing(bound: string | number, ok: (c: number) => boolean): ValueTest {
  if (typeof bound === 'number') return (value) => typeof value === 'number' && ok(value - bound);
  return (value) => typeof value === 'string' && ok(value < bound ? -1 : value > bound ? 1 : 0);
}
