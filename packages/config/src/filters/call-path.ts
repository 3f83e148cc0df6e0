/**
 * Paths into a call (`properties.plan`, `context.library.name`), shared by filter conditions,
 * field lists and mapping templates. STUB: the filters work replaces this body.
 */
export const MAX_PATH_SEGMENTS = 10;

/** What is wrong with a path, or undefined when it is usable. */
export function pathProblem(path: string): string | undefined {
  void path;
  throw new Error('not implemented');
}

/** The path's names, split on `.`. */
export function splitPath(path: string): readonly string[] {
  return path.split('.');
}

/** The value at `segments` in `value` (own properties; a decimal name indexes an array), or undefined. */
export function valueAt(value: unknown, segments: readonly string[]): unknown {
  void value;
  void segments;
  throw new Error('not implemented');
}
