/**
 * A destination's filter rules (destination-filters.schema.json, docs/filters.md), compiled.
 * STUB: the filters work replaces this body.
 */
import type { FieldProblem } from '../field-problems.js';
import type { FilterRule } from '../generated/contracts.js';
import type { CallLike } from './call-condition.js';

/** Whether a call is sent; when not, the rule that refused it (its index and name) and how. */
export type FilterDecision =
  | { readonly send: true }
  | { readonly send: false; readonly rule: number; readonly name?: string; readonly reason: 'drop' | 'only' };

export interface CompiledFilters {
  /** True when some rule is a drop or an only rule. */
  readonly decides: boolean;
  /** True when some rule is a dropFields or keepFields rule. */
  readonly shapes: boolean;
  /** The top-level call fields the drop and only rules read. */
  readonly roots: ReadonlySet<string>;
  /** The first drop/only rule (in order) that refuses the call, or send. */
  decide(call: CallLike): FilterDecision;
  /** The call with the field rules applied in order (a new object; the call itself when none applies). */
  shape<T extends object>(call: T): T;
}

export function compileFilters(rules: readonly FilterRule[] | undefined): CompiledFilters {
  void rules;
  throw new Error('not implemented');
}

/** Problems beyond the schema; `at` is the list's field path, e.g. `filters`. */
export function filtersProblems(rules: readonly FilterRule[], at: string): FieldProblem[] {
  void rules;
  void at;
  throw new Error('not implemented');
}
