import { ValidationError } from '@eventrelay/config';
import { MAX_JSON_DEPTH } from './limits.js';
import { inspectJsonText, parseJsonObject } from './json-text.js';

const maxNesting = (text: string) => inspectJsonText(text).depth;

/** An object nested `depth` levels deep: depth 1 is `{"a":1}`. */
const nestedObject = (depth: number) => `${'{"a":'.repeat(depth - 1)}{"a":1}${'}'.repeat(depth - 1)}`;

function refusal(text: string): ValidationError {
  try {
    parseJsonObject(text);
  } catch (err) {
    if (err instanceof ValidationError) return err;
    throw err;
  }
  throw new Error(`expected ${text.slice(0, 40)} to be refused`);
}

describe('inspectJsonText depth', () => {
  it.each([
    ['', 0],
    ['1', 0],
    ['{}', 1],
    ['[]', 1],
    ['{"a":{"b":[1,[2]]}}', 4],
    ['[{}, {}, [[]]]', 3],
    ['{"a":{}} {"b":{"c":{}}}', 3],
  ])('%s nests %i deep', (text, depth) => {
    expect(maxNesting(text)).toBe(depth);
  });

  it('ignores brackets inside strings', () => {
    expect(maxNesting('{"a":"[[[[{{{{"}')).toBe(1);
    expect(maxNesting(`{"${'['.repeat(200)}":"${'{'.repeat(200)}"}`)).toBe(1);
    expect(maxNesting('{"a":"]]]]}}}}","b":{"c":1}}')).toBe(2);
  });

  it('does not end a string at an escaped quote', () => {
    expect(maxNesting('{"a":"x\\"[[[[[[[["}')).toBe(1);
    expect(maxNesting('{"a":"\\"","b":[[[1]]]}')).toBe(4);
  });

  it('ends a string after an escaped backslash', () => {
    // "\\" is a string holding one backslash; the bracket after it is real nesting.
    expect(maxNesting('{"a":"\\\\","b":[[1]]}')).toBe(3);
  });

  it(`stops counting once past ${MAX_JSON_DEPTH}`, () => {
    expect(maxNesting('['.repeat(100_000))).toBe(MAX_JSON_DEPTH + 1);
  });
});

describe('parseJsonObject', () => {
  it('parses an object', () => {
    expect(parseJsonObject('{"userId":"u1","n":[1,{"x":null}]}')).toEqual({ userId: 'u1', n: [1, { x: null }] });
  });

  it(`accepts nesting of ${MAX_JSON_DEPTH} levels`, () => {
    expect(MAX_JSON_DEPTH).toBe(64);
    const text = nestedObject(64);
    expect(maxNesting(text)).toBe(64);
    let value: unknown = parseJsonObject(text);
    let depth = 0;
    while (typeof value === 'object' && value !== null) {
      depth++;
      value = (value as { a: unknown }).a;
    }
    expect(depth).toBe(64);
  });

  it(`refuses nesting of ${MAX_JSON_DEPTH + 1} levels with invalid_request`, () => {
    const err = refusal(nestedObject(65));
    expect(err.code).toBe('invalid_request');
    expect(err.httpStatus).toBe(400);
    expect(err.message).toBe('body nests 65 levels deep; at most 64 are allowed');
  });

  it('counts arrays and objects together', () => {
    const mixed = `{"a":${'[{"b":'.repeat(32)}1${'}]'.repeat(32)}}`;
    expect(maxNesting(mixed)).toBe(65);
    expect(refusal(mixed).code).toBe('invalid_request');
  });

  it('refuses deep nesting before parsing, even when the JSON is also invalid', () => {
    expect(refusal('['.repeat(1_000_000)).message).toContain('levels deep');
  });

  it('accepts a string full of brackets', () => {
    expect(parseJsonObject(`{"a":"${'['.repeat(1000)}"}`)).toEqual({ a: '['.repeat(1000) });
  });

  it.each([[''], ['{'], ['{"a":1,}'], ["{'a':1}"], ['{"a":1}}'], ['undefined'], ['{"a":01}']])('refuses invalid JSON %j', (text) => {
    const err = refusal(text);
    expect(err.code).toBe('invalid_request');
    expect(err.message).toMatch(/^body is not valid JSON: /);
  });

  it.each([['[]'], ['[{"userId":"u1"}]'], ['null'], ['1'], ['"text"'], ['true']])('refuses the top-level value %s', (text) => {
    const err = refusal(text);
    expect(err.code).toBe('invalid_request');
    expect(err.message).toBe('body must be a JSON object');
  });

  it('keeps "__proto__" as an own key rather than a prototype', () => {
    const body = parseJsonObject('{"__proto__":{"polluted":true}}');
    expect(Object.keys(body)).toEqual(['__proto__']);
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
  });
});
