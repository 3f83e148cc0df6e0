/**
 * Mapping templates (webhook settings `mapping`, docs/filters.md "Mappings"): the body built from
 * a call by a declarative template. STUB: the mapping work replaces this body.
 */
import type { FieldProblem } from '../field-problems.js';
import type { CallLike } from '../filters/call-condition.js';

export type RenderedBody = { readonly ok: true; readonly body: string } | { readonly ok: false; readonly error: string };

/** Problems with a template, found on save; `at` is its field path, e.g. `settings.mapping`. */
export function mappingProblems(template: unknown, at: string): FieldProblem[] {
  void template;
  void at;
  throw new Error('not implemented');
}

/** The template compiled: renders the JSON text of a call's body, or says why it cannot. */
export function compileMapping(template: Readonly<Record<string, unknown>>): (call: CallLike) => RenderedBody {
  void template;
  throw new Error('not implemented');
}
