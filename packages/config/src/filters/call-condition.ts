/**
 * The call condition language (destination-filters.schema.json, docs/filters.md): compiled once
 * per destination config, evaluated per call. STUB: the filters work replaces this body.
 */
import type { FieldProblem } from '../field-problems.js';
import type { CallCondition } from '../generated/contracts.js';

/** A call as filters and mappings read it: a NormalizedCall, or a route entry holding some of its fields. */
export type CallLike = Readonly<Record<string, unknown>>;
export type CallTest = (call: CallLike) => boolean;

export function compileCondition(condition: CallCondition): CallTest {
  void condition;
  throw new Error('not implemented');
}

/** Problems beyond the schema (depth, size, path and pattern syntax); `at` is the condition's field path. */
export function conditionProblems(condition: CallCondition, at: string): FieldProblem[] {
  void condition;
  void at;
  throw new Error('not implemented');
}

/** The top-level call fields the condition reads (a path's first name; sampling reads userId and anonymousId). */
export function conditionRoots(condition: CallCondition): ReadonlySet<string> {
  void condition;
  throw new Error('not implemented');
}
