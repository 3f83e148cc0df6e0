/**
 * The call condition language (destination-filters.schema.json, docs/filters.md): compiled once
 * per destination config into closures, evaluated per call with no parsing left to do.
 */
import { MAX_CONDITION_DEPTH } from '../audiences/audience-rules.js';
import type { FieldProblem } from '../field-problems.js';
import type { CallCondition } from '../generated/contracts.js';
import { pathProblem, splitPath, valueAt } from './call-path.js';
import { globProblem } from './glob.js';
import { compileSample } from './sample.js';
import { compileValueTest } from './value-test.js';

/** A call as filters and mappings read it: a NormalizedCall, or a route entry holding some of its fields. */
export type CallLike = Readonly<Record<string, unknown>>;
export type CallTest = (call: CallLike) => boolean;

/** More nodes are refused: a condition is written by hand, and each node costs every call. */
const MAX_CONDITION_NODES = 200;

/**
 * More `matches` and `contains` tests are refused, counted across a destination's filters (drop,
 * only and if together) and, apart, across a mapping's `@if`s. They are the tests that read a whole
 * value: a string of up to 32K characters (a call's limit) costs a `contains` up to ~0.2 ms, so the
 * count, not the 1000 nodes, bounds what one call can cost a destination (docs/filters.md).
 */
const MAX_SCANNING_TESTS = 10;

/** The scanning tests met so far, in one destination's filters or one mapping (`within` names which, for the message). */
export interface ScanningTests {
  count: number;
  readonly within: string;
}

/**
 * The condition compiled. It must be free of conditionProblems (which bounds its depth, so the
 * closures nest at most 10 deep); a node with none of the known keys is false.
 */
export function compileCondition(condition: CallCondition): CallTest {
  if (condition.all) return every(condition.all.map(compileCondition));
  if (condition.any) return some(condition.any.map(compileCondition));
  if (condition.not) {
    const inner = compileCondition(condition.not);
    return (call) => !inner(call);
  }
  if (condition.field) {
    const segments = splitPath(condition.field.path);
    const test = compileValueTest(condition.field);
    return (call) => test(valueAt(call, segments));
  }
  if (condition.sample) return compileSample(condition.sample.percent);
  return () => false;
}

function every(tests: readonly CallTest[]): CallTest {
  if (tests.length === 1) return tests[0]!;
  return (call) => {
    for (const test of tests) if (!test(call)) return false;
    return true;
  };
}

function some(tests: readonly CallTest[]): CallTest {
  if (tests.length === 1) return tests[0]!;
  return (call) => {
    for (const test of tests) if (test(call)) return true;
    return false;
  };
}

/**
 * Problems beyond the schema (depth, size, path and pattern syntax); `at` is the condition's field
 * path. With `scanning`, its matches and contains tests are counted there too, and the first one
 * past MAX_SCANNING_TESTS is a problem.
 */
export function conditionProblems(condition: CallCondition, at: string, scanning?: ScanningTests): FieldProblem[] {
  const problems: FieldProblem[] = [];
  let count = 0;
  for (const { node, field, depth } of nodesOf(condition, at, MAX_CONDITION_DEPTH + 1)) {
    if (++count > MAX_CONDITION_NODES) {
      problems.push({ field: at, message: `has more than ${MAX_CONDITION_NODES} nodes` });
      break;
    }
    if (depth > MAX_CONDITION_DEPTH) {
      problems.push({ field, message: `nests deeper than ${MAX_CONDITION_DEPTH} levels` });
      continue;
    }
    const test = node.field;
    if (test === undefined || typeof test !== 'object' || test === null) continue;
    const badPath = typeof test.path === 'string' ? pathProblem(test.path) : undefined;
    if (badPath) problems.push({ field: `${field}.field.path`, message: badPath });
    const badPattern = typeof test.matches === 'string' ? globProblem(test.matches) : undefined;
    if (badPattern) problems.push({ field: `${field}.field.matches`, message: badPattern });
    const scans = test.matches !== undefined ? 'matches' : test.contains !== undefined ? 'contains' : undefined;
    if (scans && scanning && ++scanning.count === MAX_SCANNING_TESTS + 1)
      problems.push({
        field: `${field}.field.${scans}`,
        message: `is one matches or contains test too many: at most ${MAX_SCANNING_TESTS} in ${scanning.within}`,
      });
  }
  return problems;
}

/** How many nodes the condition has, counted up to `limit` + 1 (enough to tell it is too many). */
export function conditionSize(condition: CallCondition, limit: number): number {
  let count = 0;
  for (const _ of nodesOf(condition, '', Infinity)) if (++count > limit) break;
  return count;
}

/** The top-level call fields the condition reads (a path's first name; sampling reads userId and anonymousId). */
export function conditionRoots(condition: CallCondition): ReadonlySet<string> {
  const roots = new Set<string>();
  for (const { node } of nodesOf(condition, '', Infinity)) {
    if (typeof node.field?.path === 'string') roots.add(splitPath(node.field.path)[0]!);
    if (node.sample !== undefined) roots.add('userId').add('anonymousId');
  }
  return roots;
}

interface Visit {
  readonly node: CallCondition;
  /** The node's field path, e.g. `filters[0].drop.all[1]`. */
  readonly field: string;
  /** 1 for the condition itself. */
  readonly depth: number;
}

/**
 * Every node, parents before children, in order; nodes at `maxDepth` are visited but not entered.
 * Iterative, so a pathologically deep input (one not yet checked) cannot overflow the stack.
 */
function* nodesOf(condition: CallCondition, at: string, maxDepth: number): Generator<Visit> {
  const stack: Visit[] = [{ node: condition, field: at, depth: 1 }];
  for (let visit = stack.pop(); visit; visit = stack.pop()) {
    const { node, field, depth } = visit;
    if (typeof node !== 'object' || node === null) continue;
    yield visit;
    if (depth >= maxDepth) continue;
    const children: Visit[] = [];
    for (const key of ['all', 'any'] as const) {
      const list: unknown = node[key];
      if (Array.isArray(list))
        list.forEach((child: CallCondition, i) => children.push({ node: child, field: `${field}.${key}[${i}]`, depth: depth + 1 }));
    }
    if (node.not !== undefined) children.push({ node: node.not, field: `${field}.not`, depth: depth + 1 });
    for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]!);
  }
}
