/**
 * What a mapping template may be (docs/filters.md, "Mappings"), checked on save: the directives
 * and their arguments, and the limits that bound a render (size, nodes, depth, and the scanning
 * tests of its conditions). Rendering is mapping.ts.
 */
import Ajv, { type ValidateFunction } from 'ajv';
import destinationFiltersSchema from '../../schemas/destination-filters.schema.json';
import type { FieldProblem } from '../field-problems.js';
import { conditionProblems, type ScanningTests } from '../filters/call-condition.js';
import { pathProblem } from '../filters/call-path.js';
import type { CallCondition } from '../generated/contracts.js';
import { MAX_BODY_DEPTH, bodyDepthProblem } from '../json-depth.js';
import { schemaProblems } from '../schemas.js';
import { jsonTextLength } from './json-length.js';
import { parseTemplateText } from './template-text.js';

/** The longest template, in characters of its JSON text (no whitespace). */
export const MAX_TEMPLATE_CHARS = 16_384;
/** Objects, arrays, scalars and directives of a template, a `@literal`'s value counted in; an `@if`'s condition is not. */
export const MAX_TEMPLATE_NODES = 500;
/** Objects, arrays and directives inside one another, the top level being level 1. */
export const MAX_TEMPLATE_DEPTH = 10;
const MAX_COALESCE_ITEMS = 10;
const MAPPING_DIRECTIVES = ['@path', '@template', '@if', '@coalesce', '@literal'] as const;
export type MappingDirective = (typeof MAPPING_DIRECTIVES)[number];

const DIRECTIVE_LIST = MAPPING_DIRECTIVES.join(', ');

export type JsonObject = Readonly<Record<string, unknown>>;

function isObject(value: unknown): value is JsonObject {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

export function directiveKeys(value: JsonObject): string[] {
  return Object.keys(value).filter((key) => key.startsWith('@'));
}

function isDirectiveName(key: string): key is MappingDirective {
  return (MAPPING_DIRECTIVES as readonly string[]).includes(key);
}

/** Problems with a template, found on save; `at` is its field path, e.g. `settings.mapping`. */
export function mappingProblems(template: unknown, at: string): FieldProblem[] {
  if (!isObject(template)) return [{ field: at, message: 'must be a JSON object (the body sent to the receiver)' }];
  const top = directiveKeys(template);
  if (top.length > 0)
    return [{ field: at, message: `must be a JSON object, not a directive (it has ${top.join(', ')}): the body sent is an object` }];
  const problems: FieldProblem[] = [];
  if (jsonTextLength(template, MAX_TEMPLATE_CHARS) > MAX_TEMPLATE_CHARS)
    problems.push({ field: at, message: `is longer than ${MAX_TEMPLATE_CHARS} characters of JSON` });
  const walk: Walk = { problems, nodes: 0, tooMany: false, tooDeep: false, at, scanning: { count: 0, within: 'a mapping' } };
  checkNode(template, at, 1, walk);
  return problems;
}

interface Walk {
  readonly problems: FieldProblem[];
  readonly at: string;
  /** The matches and contains tests of the `@if`s so far, bounded like a destination's filters'. */
  readonly scanning: ScanningTests;
  nodes: number;
  tooMany: boolean;
  tooDeep: boolean;
}

/** Counts one node; false (and one problem for the whole template) once there are too many. */
function countNode(walk: Walk): boolean {
  if (walk.tooMany) return false;
  walk.nodes += 1;
  if (walk.nodes <= MAX_TEMPLATE_NODES) return true;
  walk.tooMany = true;
  walk.problems.push({ field: walk.at, message: `has more than ${MAX_TEMPLATE_NODES} nodes (objects, arrays, values and directives)` });
  return false;
}

/** Whether a container at `depth` may be entered; one problem (at the first too deep) otherwise. */
function withinDepth(depth: number, field: string, walk: Walk): boolean {
  if (depth <= MAX_TEMPLATE_DEPTH) return true;
  if (!walk.tooDeep) {
    walk.tooDeep = true;
    walk.problems.push({ field, message: `nests deeper than ${MAX_TEMPLATE_DEPTH} levels (objects, arrays and directives)` });
  }
  return false;
}

// Recursion is bounded: a container past MAX_TEMPLATE_DEPTH is not entered.
function checkNode(value: unknown, field: string, depth: number, walk: Walk): void {
  if (!countNode(walk)) return;
  if (value === null || typeof value !== 'object') return;
  if (!withinDepth(depth, field, walk)) return;
  if (Array.isArray(value)) {
    value.forEach((item, i) => checkNode(item, `${field}[${i}]`, depth + 1, walk));
    return;
  }
  const object = value as JsonObject;
  const directives = directiveKeys(object);
  if (directives.length === 0) {
    for (const [key, child] of Object.entries(object)) checkNode(child, `${field}.${key}`, depth + 1, walk);
    return;
  }
  const unknown = directives.filter((key) => !isDirectiveName(key));
  for (const key of unknown)
    walk.problems.push({ field: `${field}.${key}`, message: `is not a directive (the directives are ${DIRECTIVE_LIST})` });
  if (unknown.length > 0) return;
  if (directives.length > 1) {
    walk.problems.push({ field, message: `mixes directives ${directives.join(', ')}: a directive object holds exactly one` });
    return;
  }
  const directive = directives[0] as MappingDirective;
  const allowed = directive === '@if' ? ['then', 'else'] : [];
  const others = Object.keys(object).filter((key) => key !== directive && !allowed.includes(key));
  if (others.length > 0)
    walk.problems.push({
      field,
      message:
        directive === '@if'
          ? `@if takes only then and else beside it (found ${others.join(', ')})`
          : `${directive} takes no other keys (found ${others.join(', ')})`,
    });
  checkDirective(directive, object, field, depth, walk);
}

function checkDirective(directive: MappingDirective, object: JsonObject, field: string, depth: number, walk: Walk): void {
  const argument = object[directive];
  const argumentField = `${field}.${directive}`;
  switch (directive) {
    case '@path': {
      if (typeof argument !== 'string') {
        walk.problems.push({ field: argumentField, message: 'must be a string: a path into the call, e.g. properties.plan' });
        return;
      }
      const problem = pathProblem(argument);
      if (problem !== undefined) walk.problems.push({ field: argumentField, message: problem });
      return;
    }
    case '@template': {
      if (typeof argument !== 'string') {
        walk.problems.push({ field: argumentField, message: 'must be a string with {{ path }} placeholders' });
        return;
      }
      const parsed = parseTemplateText(argument);
      if ('problems' in parsed) for (const message of parsed.problems) walk.problems.push({ field: argumentField, message });
      return;
    }
    case '@if':
      walk.problems.push(...callConditionProblems(argument, argumentField, walk.scanning));
      for (const branch of ['then', 'else'] as const)
        if (Object.hasOwn(object, branch)) checkNode(object[branch], `${field}.${branch}`, depth + 1, walk);
      return;
    case '@coalesce':
      if (!Array.isArray(argument) || argument.length < 1 || argument.length > MAX_COALESCE_ITEMS) {
        walk.problems.push({ field: argumentField, message: `must be a list of 1 to ${MAX_COALESCE_ITEMS} templates` });
        return;
      }
      argument.forEach((item, i) => checkNode(item, `${argumentField}[${i}]`, depth + 1, walk));
      return;
    case '@literal':
      checkLiteral(argument, argumentField, depth + 1, walk);
      return;
    default: {
      const never: never = directive;
      void never;
    }
  }
}

// A @literal's value is sent as it is, so its nodes and levels count like the template's own.
function checkLiteral(value: unknown, field: string, depth: number, walk: Walk): void {
  if (!countNode(walk)) return;
  if (value === null || typeof value !== 'object') return;
  if (!withinDepth(depth, field, walk)) return;
  if (Array.isArray(value)) value.forEach((item, i) => checkLiteral(item, `${field}[${i}]`, depth + 1, walk));
  else for (const [key, child] of Object.entries(value)) checkLiteral(child, `${field}.${key}`, depth + 1, walk);
}

let conditionValidator: ValidateFunction<CallCondition> | undefined;

/** The validator of a CallCondition (destination-filters.schema.json), compiled on first use. */
function callConditionSchema(): ValidateFunction<CallCondition> {
  if (conditionValidator === undefined) {
    const ajv = new Ajv({ allErrors: true, strict: true, allowUnionTypes: true, verbose: true });
    ajv.addSchema(destinationFiltersSchema);
    const fn = ajv.getSchema<CallCondition>('destination-filters.schema.json#/definitions/CallCondition');
    if (!fn) throw new Error('CallCondition is not in destination-filters.schema.json');
    conditionValidator = fn;
  }
  return conditionValidator;
}

/**
 * An `@if`'s condition checked as a filter rule's is: its nesting first (the schema validator
 * recurses), then the schema, then conditionProblems.
 */
function callConditionProblems(condition: unknown, field: string, scanning: ScanningTests): FieldProblem[] {
  const deep = bodyDepthProblem(condition, MAX_BODY_DEPTH);
  if (deep) return [{ field, message: deep.message }];
  const validate = callConditionSchema();
  if (!validate(condition)) return schemaProblems(validate.errors, field);
  return conditionProblems(condition, field, scanning);
}
