/**
 * The nesting limit every admin body and the config file are checked against before schema
 * validation. The schema validator, the planners and the audience rules recurse over the value,
 * so a body nested a few thousand levels deep (16 KB of `{"not":` is enough) would overflow the
 * stack and answer 500 (or crash a process at start); the 1 MB size limit alone does not prevent
 * that. 64 levels leave room for the deepest legal body or file: a mapping's `@if` at its tenth
 * level holding a condition of ten (docs/filters.md) reaches about 34 levels in the config file.
 */
import type { FieldProblem } from './field-problems.js';

/** Objects and arrays inside one another, the body itself counting as level 1. */
export const MAX_BODY_DEPTH = 64;

/**
 * The problem with a parsed body's nesting, or undefined when it is within `max` levels. Walks
 * with an explicit stack, so the check itself cannot overflow, and stops at the first value
 * past the limit.
 */
export function bodyDepthProblem(body: unknown, max = MAX_BODY_DEPTH): FieldProblem | undefined {
  const stack: { value: unknown; depth: number }[] = [{ value: body, depth: 1 }];
  for (let item = stack.pop(); item; item = stack.pop()) {
    const { value, depth } = item;
    if (value === null || typeof value !== 'object') continue;
    if (depth > max) return { field: '(body)', message: `nests objects and arrays deeper than ${max} levels` };
    for (const child of Array.isArray(value) ? value : Object.values(value)) {
      if (child !== null && typeof child === 'object') stack.push({ value: child, depth: depth + 1 });
    }
  }
  return undefined;
}
