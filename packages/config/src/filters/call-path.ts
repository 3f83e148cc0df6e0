/**
 * Paths into a call (`properties.plan`, `context.library.name`), shared by filter conditions,
 * field lists and mapping templates. A path is split once, when its config is compiled; reading
 * it per call is a loop over own properties.
 */

// Built-ins used per call are read once: a global lookup inside a hot loop is slow in a vm context
// (jest's sandbox, where the hostile-input test measures these loops), and costs nothing to avoid.
const { isArray } = Array;
const { hasOwn } = Object;

/** Deeper paths are refused: calls are shallow, and a bound keeps every read cheap. */
export const MAX_PATH_SEGMENTS = 10;

/** What is wrong with a path, or undefined when it is usable. */
export function pathProblem(path: string): string | undefined {
  if (path === '') return 'is empty';
  if (path.startsWith('.')) return 'starts with a dot';
  if (path.endsWith('.')) return 'ends with a dot';
  if (path.includes('..')) return 'has an empty name between two dots';
  const names = splitPath(path).length;
  if (names > MAX_PATH_SEGMENTS) return `has ${names} names; at most ${MAX_PATH_SEGMENTS}`;
  return undefined;
}

/** The path's names, split on `.`. */
export function splitPath(path: string): readonly string[] {
  return path.split('.');
}

/**
 * The value at `segments` in `value`, or undefined when something on the way is absent.
 * Only own properties count, so `constructor` or `__proto__` never reach the prototype: a call is
 * JSON, and a name it does not hold is absent. A decimal name (`0`, `12`, no leading zero) indexes
 * an array; any other name on an array is absent (`length` too).
 */
export function valueAt(value: unknown, segments: readonly string[]): unknown {
  let current = value;
  for (const name of segments) {
    if (typeof current !== 'object' || current === null) return undefined;
    if (isArray(current)) {
      const index = arrayIndex(name);
      if (index < 0 || index >= current.length) return undefined;
      current = current[index] as unknown;
    } else {
      if (!hasOwn(current, name)) return undefined;
      current = (current as Record<string, unknown>)[name];
    }
  }
  return current;
}

/** The array index a name spells (decimal digits, no leading zero), or -1. */
function arrayIndex(name: string): number {
  if (name === '' || name.length > 15 || (name.length > 1 && name.charCodeAt(0) === 0x30)) return -1;
  for (let i = 0; i < name.length; i++) {
    const c = name.charCodeAt(i);
    if (c < 0x30 || c > 0x39) return -1;
  }
  return Number(name);
}
