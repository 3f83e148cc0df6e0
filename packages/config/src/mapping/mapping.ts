/**
 * Mapping templates (webhook settings `mapping`, docs/filters.md "Mappings"): the body sent to a
 * receiver, built from each call by a declarative template. No user code runs.
 *
 * A template is JSON rendered recursively. An object none of whose keys starts with `@` is a
 * literal object (its keys in the template's order; a key whose value is absent is left out), an
 * array renders its items (absent items left out), a string, number, boolean or null is itself.
 * An object with an `@` key is a directive, exactly one of:
 *
 * - `{"@path": "properties.plan"}`: the call's value there (any JSON), or absent;
 * - `{"@template": "Order {{properties.order_id}}"}`: a string, see template-text.ts;
 * - `{"@if": <CallCondition>, "then": <template>, "else": <template>}`: `then` when the
 *   condition holds for the call, else `else`; a branch left out renders absent (the conditions of
 *   all the `@if`s hold at most MAX_SCANNING_TESTS matches and contains tests together);
 * - `{"@coalesce": [<template>, ...]}` (1 to 10): the first item that renders present and not
 *   null, or absent;
 * - `{"@literal": <JSON>}`: that JSON verbatim, not rendered (keys starting with `@` included).
 *
 * The top level is a literal object, so a body is always a JSON object. Rendering writes JSON
 * text directly and stops once it passes MAX_OUTPUT_BYTES characters. The save-time checks are
 * mapping-rules.ts.
 */
import { compileCondition, type CallLike, type CallTest } from '../filters/call-condition.js';
import { splitPath, valueAt } from '../filters/call-path.js';
import type { CallCondition } from '../generated/contracts.js';
import { directiveKeys, mappingProblems, type JsonObject, type MappingDirective } from './mapping-rules.js';
import { parseTemplateText, placeholderText, type TemplatePart } from './template-text.js';

export type RenderedBody = { readonly ok: true; readonly body: string } | { readonly ok: false; readonly error: string };

/** The longest body a mapping renders, in characters (UTF-16 code units, as JavaScript counts a string's length). */
export const MAX_OUTPUT_BYTES = 262_144;

// Built-ins used per call are read once: a global lookup inside a hot loop is slow in a vm context
// (jest's sandbox, where the hostile-input test measures these loops), and costs nothing to avoid.
const { stringify } = JSON;

const OUTPUT_TOO_LONG = `the mapping's output passed ${MAX_OUTPUT_BYTES} characters`;

/**
 * The body's text so far, and its length. Only text that stays in the body is ever checked
 * against the limit: a key and its comma are added unchecked and taken back when the value is
 * absent, a present value's first write checks them with it, and null is not written by the node
 * that yields it but by the object or array that keeps it (a @coalesce skips it unwritten). So a
 * body of exactly MAX_OUTPUT_BYTES characters renders, and one more character does not.
 */
interface Output {
  readonly parts: string[];
  length: number;
  /**
   * The JSON text of each object or array a `@path` wrote, so a value copied by many `@path`s is
   * written out once per render: a 32 KB object of 4,400 fields costs ~0.5 ms to stringify.
   */
  readonly texts: Map<object, string>;
}

/** Thrown (one shared instance, so no stack is captured per render) to stop a render that passed the limit. */
class OutputTooLong extends Error {}
const TOO_LONG = new OutputTooLong(OUTPUT_TOO_LONG);

function write(out: Output, text: string): void {
  out.parts.push(text);
  out.length += text.length;
  if (out.length > MAX_OUTPUT_BYTES) throw TOO_LONG;
}

/** Text that stays only if a value follows it (whose write checks the limit). */
function writeTentative(out: Output, text: string): void {
  out.parts.push(text);
  out.length += text.length;
}

function rewind(out: Output, parts: number, length: number): void {
  out.parts.length = parts;
  out.length = length;
}

/** What a node did: wrote its value's text, wrote nothing because it is absent, or wrote nothing because it is null. */
const WROTE = 0;
const ABSENT = 1;
const NULL = 2;
type Rendered = typeof WROTE | typeof ABSENT | typeof NULL;

type RenderNode = (call: CallLike, out: Output) => Rendered;

const absent: RenderNode = () => ABSENT;
const nullNode: RenderNode = () => NULL;

/** A value kept in an object or array: null written there, absent taken back with its key or comma. */
function keep(rendered: Rendered, out: Output, parts: number, length: number): boolean {
  if (rendered === NULL) write(out, 'null');
  else if (rendered === ABSENT) rewind(out, parts, length);
  return rendered !== ABSENT;
}

/** The template compiled: renders the JSON text of a call's body, or says why it cannot. */
export function compileMapping(template: Readonly<Record<string, unknown>>): (call: CallLike) => RenderedBody {
  const problems = mappingProblems(template, 'mapping');
  if (problems.length > 0) throw new Error(`invalid mapping: ${problems.map((p) => `${p.field} ${p.message}`).join('; ')}`);
  const root = compileNode(template);
  return (call) => {
    const out: Output = { parts: [], length: 0, texts: new Map() };
    try {
      root(call, out);
    } catch (error) {
      if (error === TOO_LONG) return { ok: false, error: OUTPUT_TOO_LONG };
      throw error;
    }
    return { ok: true, body: out.parts.join('') };
  };
}

function compileNode(value: unknown): RenderNode {
  if (value === null) return nullNode;
  if (typeof value !== 'object') return constant(JSON.stringify(value) ?? 'null');
  if (Array.isArray(value)) return compileArray(value.map(compileNode));
  const object = value as JsonObject;
  const directive = directiveKeys(object)[0] as MappingDirective | undefined;
  if (directive === undefined)
    return compileObject(Object.entries(object).map(([key, child]) => [`${JSON.stringify(key)}:`, compileNode(child)]));
  const argument = object[directive];
  switch (directive) {
    case '@path':
      return compilePath(splitPath(argument as string));
    case '@template': {
      const parsed = parseTemplateText(argument as string);
      if (!('parts' in parsed)) throw new Error('unreachable: the template was checked');
      return compileTemplate(parsed.parts);
    }
    case '@if':
      return compileIf(
        compileCondition(argument as CallCondition),
        Object.hasOwn(object, 'then') ? compileNode(object.then) : absent,
        Object.hasOwn(object, 'else') ? compileNode(object.else) : absent,
      );
    case '@coalesce':
      return compileCoalesce((argument as unknown[]).map(compileNode));
    case '@literal':
      return argument === null ? nullNode : constant(JSON.stringify(argument) ?? 'null');
    default: {
      const never: never = directive;
      return never;
    }
  }
}

function constant(text: string): RenderNode {
  return (_call, out) => {
    write(out, text);
    return WROTE;
  };
}

function compileArray(items: readonly RenderNode[]): RenderNode {
  return (call, out) => {
    write(out, '[');
    let first = true;
    for (const item of items) {
      const parts = out.parts.length;
      const length = out.length;
      if (!first) writeTentative(out, ',');
      if (keep(item(call, out), out, parts, length)) first = false;
    }
    write(out, ']');
    return WROTE;
  };
}

function compileObject(entries: readonly (readonly [keyText: string, value: RenderNode])[]): RenderNode {
  return (call, out) => {
    write(out, '{');
    let first = true;
    for (const [keyText, value] of entries) {
      const parts = out.parts.length;
      const length = out.length;
      writeTentative(out, first ? keyText : `,${keyText}`);
      if (keep(value(call, out), out, parts, length)) first = false;
    }
    write(out, '}');
    return WROTE;
  };
}

function compilePath(segments: readonly string[]): RenderNode {
  return (call, out) => {
    const value = valueAt(call, segments);
    if (value === null) return NULL;
    if (value === undefined) return ABSENT;
    let text: string | undefined;
    if (typeof value === 'object') {
      text = out.texts.get(value);
      if (text === undefined) out.texts.set(value, (text = stringify(value)));
    } else text = stringify(value);
    if (text === undefined) return ABSENT;
    write(out, text);
    return WROTE;
  };
}

function compileTemplate(parts: readonly TemplatePart[]): RenderNode {
  return (call, out) => {
    let text = '';
    for (const part of parts) {
      text += typeof part === 'string' ? part : placeholderText(valueAt(call, part.path));
      // Stop before building (and escaping) a string the body cannot hold anyway.
      if (out.length + text.length > MAX_OUTPUT_BYTES) throw TOO_LONG;
    }
    write(out, stringify(text));
    return WROTE;
  };
}

function compileIf(test: CallTest, then: RenderNode, otherwise: RenderNode): RenderNode {
  return (call, out) => (test(call) ? then(call, out) : otherwise(call, out));
}

/** The first item that wrote a value; null and absent items are skipped, having written nothing. */
function compileCoalesce(items: readonly RenderNode[]): RenderNode {
  return (call, out) => {
    for (const item of items) if (item(call, out) === WROTE) return WROTE;
    return ABSENT;
  };
}
