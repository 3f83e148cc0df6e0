/**
 * A destination's filter rules (destination-filters.schema.json, docs/filters.md), compiled once
 * per config. drop and only decide in the router whether a call is sent at all; dropFields and
 * keepFields shape what is sent, at delivery.
 */
import type { FieldProblem } from '../field-problems.js';
import type { CallCondition, FilterRule } from '../generated/contracts.js';
import {
  compileCondition,
  conditionProblems,
  conditionRoots,
  conditionSize,
  type CallLike,
  type CallTest,
  type ScanningTests,
} from './call-condition.js';
import { pathProblem, splitPath } from './call-path.js';
import { SHAPED_ROOTS, compileDropFields, compileKeepFields, type Shape } from './field-lists.js';

/** Whether a call is sent; when not, the rule that refused it (its index and name) and how. */
type FilterDecision =
  { readonly send: true } | { readonly send: false; readonly rule: number; readonly name?: string; readonly reason: 'drop' | 'only' };

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

/** More condition nodes across a destination's rules are refused: each one costs every call routed. */
const MAX_FILTER_NODES = 1000;

const ACTIONS = ['drop', 'only', 'dropFields', 'keepFields'] as const;
const SEND: FilterDecision = { send: true };

interface Decider {
  readonly refuses: CallTest;
  readonly refusal: FilterDecision;
}

interface Shaper {
  readonly when: CallTest | undefined;
  readonly shape: Shape;
}

const compiledFilters = new WeakMap<object, CompiledFilters>();
let noFilters: CompiledFilters | undefined;

/**
 * A destination's rules, compiled once per config load: a load builds new config objects and
 * never changes one in place, so the rules' list is the cache key.
 */
export function filtersOf(destination: { readonly filters?: readonly FilterRule[] | undefined }): CompiledFilters {
  const rules = destination.filters;
  if (rules === undefined || rules.length === 0) return (noFilters ??= compileFilters(undefined));
  let compiled = compiledFilters.get(rules);
  if (!compiled) compiledFilters.set(rules, (compiled = compileFilters(rules)));
  return compiled;
}

/** The rules compiled; they must be free of filtersProblems. */
export function compileFilters(rules: readonly FilterRule[] | undefined): CompiledFilters {
  const deciders: Decider[] = [];
  const shapers: Shaper[] = [];
  const roots = new Set<string>();
  (rules ?? []).forEach((rule, index) => {
    const named = rule.name === undefined ? {} : { name: rule.name };
    if (rule.drop) {
      const holds = compileCondition(rule.drop);
      deciders.push({ refuses: holds, refusal: { send: false, rule: index, ...named, reason: 'drop' } });
      for (const root of conditionRoots(rule.drop)) roots.add(root);
    } else if (rule.only) {
      const holds = compileCondition(rule.only);
      deciders.push({ refuses: (call) => !holds(call), refusal: { send: false, rule: index, ...named, reason: 'only' } });
      for (const root of conditionRoots(rule.only)) roots.add(root);
    } else if (rule.dropFields || rule.keepFields) {
      const shape = rule.dropFields ? compileDropFields(rule.dropFields) : compileKeepFields(rule.keepFields ?? []);
      shapers.push({ when: rule.if && compileCondition(rule.if), shape });
    }
  });
  return {
    decides: deciders.length > 0,
    shapes: shapers.length > 0,
    roots,
    decide(call) {
      for (const { refuses, refusal } of deciders) if (refuses(call)) return refusal;
      return SEND;
    },
    shape<T extends object>(call: T): T {
      // Every `if` tests the call as it came, not as earlier rules left it, so whether a rule
      // applies does not depend on the order of the others.
      const original = call as CallLike;
      let shaped: object = call;
      const owned = new Set<object>();
      for (const { when, shape } of shapers) if (!when || when(original)) shaped = shape(shaped, owned);
      return shaped as T;
    },
  };
}

/** Problems beyond the schema; `at` is the list's field path, e.g. `filters`. */
export function filtersProblems(rules: readonly FilterRule[], at: string): FieldProblem[] {
  const problems: FieldProblem[] = [];
  let nodes = 0;
  const scanning: ScanningTests = { count: 0, within: "a destination's filters" };
  rules.forEach((rule, i) => {
    const field = `${at}[${i}]`;
    const actions = ACTIONS.filter((key) => rule[key] !== undefined);
    if (actions.length !== 1)
      problems.push({
        field,
        message: `must have exactly one of ${ACTIONS.join(', ')}; has ${actions.length === 0 ? 'none' : listed(actions)}`,
      });
    const decider = actions.find((key) => key === 'drop' || key === 'only');
    if (rule.if !== undefined && decider !== undefined)
      problems.push({
        field: `${field}.if`,
        message: `narrows only dropFields and keepFields; put the condition in ${decider} itself (with all)`,
      });
    const conditions: [string, CallCondition | undefined][] = [
      ['drop', rule.drop],
      ['only', rule.only],
      ['if', rule.if],
    ];
    for (const [key, condition] of conditions) {
      if (condition === undefined) continue;
      problems.push(...conditionProblems(condition, `${field}.${key}`, scanning));
      nodes += conditionSize(condition, MAX_FILTER_NODES);
    }
    for (const key of ['dropFields', 'keepFields'] as const) {
      rule[key]?.forEach((path, j) => {
        const message = fieldListProblem(path);
        if (message) problems.push({ field: `${field}.${key}[${j}]`, message });
      });
    }
  });
  if (nodes > MAX_FILTER_NODES)
    problems.push({ field: at, message: `have more than ${MAX_FILTER_NODES} condition nodes in all (drop, only and if together)` });
  return problems;
}

function fieldListProblem(path: string): string | undefined {
  const problem = pathProblem(path);
  if (problem) return problem;
  if (SHAPED_ROOTS.includes(splitPath(path)[0]!)) return undefined;
  return (
    `must be properties, traits or context, or a path under them: ` +
    `the call's other fields (type, messageId, userId, event …) are what a receiver needs to handle it`
  );
}

/** `a`, `a and b`, `a, b and c`. */
function listed(names: readonly string[]): string {
  return names.length === 1 ? names[0]! : `${names.slice(0, -1).join(', ')} and ${names.at(-1)!}`;
}
