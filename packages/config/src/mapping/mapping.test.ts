import type { CallLike } from '../filters/call-condition.js';
import { MAX_OUTPUT_BYTES, compileMapping, type RenderedBody } from './mapping.js';
import { MAX_TEMPLATE_CHARS, MAX_TEMPLATE_DEPTH, MAX_TEMPLATE_NODES, mappingProblems } from './mapping-rules.js';

const call: CallLike = {
  type: 'track',
  event: 'Order Completed',
  userId: 'u1',
  anonymousId: 'a1',
  messageId: 'm1',
  timestamp: '2026-01-02T03:04:05.678Z',
  properties: {
    order_id: 'o-17',
    total: 12.5,
    count: 0,
    paid: true,
    refunded: false,
    plan: null,
    empty: '',
    quote: 'He said "hi"\n\u2028',
    items: [{ sku: 'a' }, { sku: 'b' }],
    tags: ['x', 'y'],
    nested: { deep: { value: 3 } },
  },
  context: { library: { name: 'analytics.js' } },
  traits: { name: 'Ann' },
};

/** The body text for a valid template; asserts that it parses back to a JSON object. */
function render(template: Record<string, unknown>, input: CallLike = call): string {
  expect(mappingProblems(template, 'settings.mapping')).toEqual([]);
  const result: RenderedBody = compileMapping(template)(input);
  if (!result.ok) throw new Error(result.error);
  const parsed: unknown = JSON.parse(result.body);
  expect(parsed).not.toBeNull();
  expect(typeof parsed).toBe('object');
  expect(Array.isArray(parsed)).toBe(false);
  return result.body;
}

const at = 'settings.mapping';

describe('compileMapping: literal JSON', () => {
  it.each<[string, Record<string, unknown>, string]>([
    ['an empty object', {}, '{}'],
    [
      'scalars as they are',
      { s: 'x', n: 1.5, z: 0, t: true, f: false, nil: null },
      '{"s":"x","n":1.5,"z":0,"t":true,"f":false,"nil":null}',
    ],
    ['nested objects and arrays', { a: { b: [1, 'two', null, [], {}] } }, '{"a":{"b":[1,"two",null,[],{}]}}'],
    ['keys in the template order', { z: 1, a: 2, m: 3 }, '{"z":1,"a":2,"m":3}'],
    ['keys and strings escaped', { 'a"b\\c': 'line\nbreak "q"' }, '{"a\\"b\\\\c":"line\\nbreak \\"q\\""}'],
    ['keys that look like other things but have no @', { 'a@b': 1, path: 'x', then: 2 }, '{"a@b":1,"path":"x","then":2}'],
  ])('%s', (_name, template, body) => {
    expect(render(template)).toBe(body);
  });

  it('writes a __proto__ key of the template as an own key of the body', () => {
    const template = JSON.parse('{"__proto__":{"@path":"userId"},"b":1}') as Record<string, unknown>;
    const body = render(template);
    expect(body).toBe('{"__proto__":"u1","b":1}');
    expect(Object.hasOwn(JSON.parse(body) as object, '__proto__')).toBe(true);
  });
});

describe('compileMapping: @path', () => {
  it.each<[string, unknown, string]>([
    ['a string', { '@path': 'event' }, '"Order Completed"'],
    ['a number', { '@path': 'properties.total' }, '12.5'],
    ['zero', { '@path': 'properties.count' }, '0'],
    ['true', { '@path': 'properties.paid' }, 'true'],
    ['false', { '@path': 'properties.refunded' }, 'false'],
    ['null, kept', { '@path': 'properties.plan' }, 'null'],
    ['an empty string', { '@path': 'properties.empty' }, '""'],
    ['a string needing escapes', { '@path': 'properties.quote' }, JSON.stringify('He said "hi"\n\u2028')],
    ['an object, whole', { '@path': 'properties.nested' }, '{"deep":{"value":3}}'],
    ['an array, whole', { '@path': 'properties.items' }, '[{"sku":"a"},{"sku":"b"}]'],
    ['an array item by index', { '@path': 'properties.items.1.sku' }, '"b"'],
    ['a deep value', { '@path': 'context.library.name' }, '"analytics.js"'],
  ])('copies %s', (_name, directive, text) => {
    expect(render({ v: directive })).toBe(`{"v":${text}}`);
  });

  it.each<[string, string]>([
    ['a missing key', 'properties.missing'],
    ['a missing top-level field', 'groupId'],
    ['a path through a string', 'event.length'],
    ['a path through null', 'properties.plan.x'],
    ['an index past the end', 'properties.items.2'],
    ['a non-index name on an array', 'properties.tags.length'],
    ['an inherited name', 'properties.constructor'],
    ['__proto__', 'properties.__proto__'],
  ])('leaves the key out for %s', (_name, path) => {
    expect(render({ a: 1, v: { '@path': path }, b: 2 })).toBe('{"a":1,"b":2}');
  });

  it('leaves absent array items out, first, middle and last', () => {
    const none = { '@path': 'properties.missing' };
    expect(render({ v: [none, 1, none, { '@path': 'properties.total' }, none] })).toBe('{"v":[1,12.5]}');
    expect(render({ v: [none, none] })).toBe('{"v":[]}');
  });

  it('keeps an object whose keys are all absent, as {}', () => {
    expect(render({ v: { a: { '@path': 'properties.missing' } }, w: 1 })).toBe('{"v":{},"w":1}');
  });

  it('leaves the first keys out without a stray comma', () => {
    expect(render({ a: { '@path': 'nope' }, b: { '@path': 'nope' }, c: { '@path': 'userId' } })).toBe('{"c":"u1"}');
  });

  it('reads a route entry holding only some fields', () => {
    expect(render({ id: { '@path': 'messageId' }, e: { '@path': 'event' } }, { messageId: 'm9' })).toBe('{"id":"m9"}');
  });
});

describe('compileMapping: @template', () => {
  it.each<[string, string, string]>([
    ['text only', 'plain text', 'plain text'],
    ['an empty template', '', ''],
    ['a string', 'Order {{properties.order_id}}', 'Order o-17'],
    ['spaces around the path', 'Order {{  properties.order_id   }}!', 'Order o-17!'],
    ['a number', 'total={{properties.total}}', 'total=12.5'],
    ['zero', 'n={{properties.count}}', 'n=0'],
    ['true and false', '{{properties.paid}}/{{properties.refunded}}', 'true/false'],
    ['null as empty', '[{{properties.plan}}]', '[]'],
    ['absent as empty', '[{{properties.missing}}]', '[]'],
    ['an object as empty', '[{{properties.nested}}]', '[]'],
    ['an array as empty', '[{{properties.tags}}]', '[]'],
    ['several placeholders', '{{event}} by {{traits.name}} ({{userId}})', 'Order Completed by Ann (u1)'],
    ['adjacent placeholders', '{{userId}}{{anonymousId}}', 'u1a1'],
    ['a stray }} as text', 'a }} b {{userId}} }}', 'a }} b u1 }}'],
    ['text needing escapes', '"{{properties.quote}}"', `"He said "hi"\n\u2028"`],
  ])('%s', (_name, text, expected) => {
    expect(JSON.parse(render({ v: { '@template': text } }))).toEqual({ v: expected });
  });
});

describe('compileMapping: @if', () => {
  const isTrack = { field: { path: 'type', equals: 'track' } };
  const isPage = { field: { path: 'type', equals: 'page' } };
  it.each<[string, Record<string, unknown>, string]>([
    ['then when the condition holds', { v: { '@if': isTrack, then: 'yes', else: 'no' } }, '{"v":"yes"}'],
    ['else when it does not', { v: { '@if': isPage, then: 'yes', else: 'no' } }, '{"v":"no"}'],
    ['absent when it holds and then is left out', { v: { '@if': isTrack, else: 'no' }, w: 1 }, '{"w":1}'],
    ['absent when it fails and else is left out', { v: { '@if': isPage, then: 'yes' }, w: 1 }, '{"w":1}'],
    [
      'a branch rendered as a template',
      { v: { '@if': isTrack, then: { id: { '@path': 'userId' }, k: [{ '@path': 'event' }] } } },
      '{"v":{"id":"u1","k":["Order Completed"]}}',
    ],
    [
      'nested @if',
      { v: { '@if': isPage, then: 1, else: { '@if': { field: { path: 'properties.total', gt: 10 } }, then: 'big', else: 'small' } } },
      '{"v":"big"}',
    ],
    [
      'a condition on a missing field',
      { v: { '@if': { field: { path: 'properties.missing', exists: true } }, then: 1, else: 2 } },
      '{"v":2}',
    ],
    ['an absent branch in an array', { v: [{ '@if': isPage, then: 1 }, 2] }, '{"v":[2]}'],
    ['null from a branch, kept', { v: { '@if': isTrack, then: null } }, '{"v":null}'],
  ])('%s', (_name, template, body) => {
    expect(render(template)).toBe(body);
  });
});

describe('compileMapping: @coalesce', () => {
  it.each<[string, unknown[], string | undefined]>([
    ['the first present value', [{ '@path': 'properties.order_id' }, 'default'], '"o-17"'],
    ['a default for an absent value', [{ '@path': 'properties.missing' }, 'free'], '"free"'],
    ['a default for a null value', [{ '@path': 'properties.plan' }, 'free'], '"free"'],
    ['a literal null skipped', [null, 3], '3'],
    ['a @literal null skipped', [{ '@literal': null }, 3], '3'],
    ['false and 0 and "" are values', [{ '@path': 'properties.refunded' }, 1], 'false'],
    ['zero is a value', [{ '@path': 'properties.count' }, 1], '0'],
    ['the empty string is a value', [{ '@path': 'properties.empty' }, 1], '""'],
    [
      'several absent before a present one',
      [{ '@path': 'a' }, { '@path': 'b' }, { '@path': 'properties.plan' }, { '@path': 'userId' }],
      '"u1"',
    ],
    ['an object whose keys are absent is present', [{ k: { '@path': 'nope' } }, 1], '{}'],
    ['an @if without the branch taken, skipped', [{ '@if': { field: { path: 'type', equals: 'page' } }, then: 1 }, 2], '2'],
    ['a nested @coalesce', [{ '@coalesce': [{ '@path': 'nope' }] }, { '@coalesce': [null, 'x'] }], '"x"'],
    ['absent when nothing is present', [{ '@path': 'properties.missing' }, { '@path': 'properties.plan' }, null], undefined],
  ])('%s', (_name, items, text) => {
    expect(render({ v: { '@coalesce': items }, w: 1 })).toBe(text === undefined ? '{"w":1}' : `{"v":${text},"w":1}`);
  });
});

describe('compileMapping: @literal', () => {
  it.each<[string, unknown, string]>([
    [
      'directive keys verbatim',
      { '@path': 'userId', '@if': 1, x: [{ '@template': '{{' }] },
      '{"@path":"userId","@if":1,"x":[{"@template":"{{"}]}',
    ],
    ['a string with placeholders, unexpanded', 'Hi {{traits.name}}', '"Hi {{traits.name}}"'],
    ['null', null, 'null'],
    ['an array', [1, { '@coalesce': [] }], '[1,{"@coalesce":[]}]'],
  ])('%s', (_name, value, text) => {
    expect(render({ v: { '@literal': value } })).toBe(`{"v":${text}}`);
  });
});

describe('compileMapping: a whole body', () => {
  it('renders a realistic template', () => {
    const template = {
      event_name: { '@path': 'event' },
      user: { id: { '@coalesce': [{ '@path': 'userId' }, { '@path': 'anonymousId' }] }, name: { '@path': 'traits.name' } },
      summary: { '@template': 'Order {{ properties.order_id }} by {{traits.name}}' },
      plan: { '@coalesce': [{ '@path': 'properties.plan' }, 'free'] },
      kind: {
        '@if': { any: [{ field: { path: 'properties.total', gte: 100 } }, { field: { path: 'properties.paid', equals: false } }] },
        then: 'review',
        else: 'ok',
      },
      skus: [{ '@path': 'properties.items.0.sku' }, { '@path': 'properties.items.1.sku' }, { '@path': 'properties.items.2.sku' }],
      meta: { '@literal': { '@type': 'order' } },
      missing: { '@path': 'properties.missing' },
    };
    expect(JSON.parse(render(template))).toEqual({
      event_name: 'Order Completed',
      user: { id: 'u1', name: 'Ann' },
      summary: 'Order o-17 by Ann',
      plan: 'free',
      kind: 'ok',
      skus: ['a', 'b'],
      meta: { '@type': 'order' },
    });
  });

  it('compiles once and renders many calls independently', () => {
    const render1 = compileMapping({ id: { '@path': 'userId' } });
    expect(render1({ userId: 'a' })).toEqual({ ok: true, body: '{"id":"a"}' });
    expect(render1({})).toEqual({ ok: true, body: '{}' });
    expect(render1({ userId: 'b' })).toEqual({ ok: true, body: '{"id":"b"}' });
  });

  it('refuses to compile a template with problems', () => {
    expect(() => compileMapping({ v: { '@nope': 1 } })).toThrow('mapping.v.@nope is not a directive');
  });
});

describe('compileMapping: the output limit', () => {
  const big = { ...call, properties: { ...(call.properties as object), blob: 'x'.repeat(10 * 1024) } };

  it(`stops a template that copies properties 400 times on a call with a 10 KB property`, () => {
    const template = { copies: Array.from({ length: 400 }, () => ({ '@path': 'properties' })) };
    expect(mappingProblems(template, at)).toEqual([]);
    expect(compileMapping(template)(big)).toEqual({ ok: false, error: `the mapping's output passed ${MAX_OUTPUT_BYTES} characters` });
  });

  it('renders the same template copying 20 times, under the limit', () => {
    const template = { copies: Array.from({ length: 20 }, () => ({ '@path': 'properties' })) };
    const result = compileMapping(template)(big);
    expect(result.ok).toBe(true);
    if (result.ok) expect((JSON.parse(result.body) as { copies: unknown[] }).copies).toHaveLength(20);
  });

  it('writes each object a @path copies out once per render, and the same text every time', () => {
    let written = 0;
    const nested = { deep: { value: 3 }, toJSON: () => ((written += 1), { deep: { value: 3 } }) };
    const input = { ...call, properties: { nested } };
    const template = { a: { '@path': 'properties.nested' }, b: [{ '@path': 'properties.nested' }, { '@path': 'properties.nested.deep' }] };
    expect(render(template, input)).toBe('{"a":{"deep":{"value":3}},"b":[{"deep":{"value":3}},{"value":3}]}');
    expect(written).toBe(1);
    render(template, input);
    expect(written).toBe(2);
  });

  it('stops a @template that repeats a big value', () => {
    const template = { v: { '@template': '{{properties.blob}}'.repeat(40) } };
    expect(compileMapping(template)(big)).toEqual({ ok: false, error: `the mapping's output passed ${MAX_OUTPUT_BYTES} characters` });
  });

  it('takes a body of exactly the limit and refuses one character more', () => {
    const template = { s: { '@path': 's' } }; // {"s":"…"} is the string plus 8 characters
    const exact = compileMapping(template)({ s: 'y'.repeat(MAX_OUTPUT_BYTES - 8) });
    expect(exact.ok && exact.body.length).toBe(MAX_OUTPUT_BYTES);
    expect(compileMapping(template)({ s: 'y'.repeat(MAX_OUTPUT_BYTES - 7) }).ok).toBe(false);
  });

  it('counts characters (UTF-16 code units) of the JSON text, escapes included', () => {
    const template = { s: { '@path': 's' } };
    expect(compileMapping(template)({ s: '"'.repeat(MAX_OUTPUT_BYTES / 2) }).ok).toBe(false); // each " is written \"
    expect(compileMapping(template)({ s: '\u00e9'.repeat(MAX_OUTPUT_BYTES - 8) }).ok).toBe(true); // é is one character
  });

  it('counts only what stays: keys of absent values, commas of absent items and skipped nulls are not', () => {
    const s = 'y'.repeat(MAX_OUTPUT_BYTES - 8); // {"s":"…"} is exactly the limit
    const nothing = [
      { '@path': 'missing' },
      { '@path': 'plan' },
      null,
      { '@literal': null },
      { '@if': { field: { path: 'type', exists: false } }, then: 1 },
    ];
    const fits: Record<string, unknown>[] = [
      { s: { '@path': 's' }, absentKey: { '@path': 'missing' } },
      { s: { '@path': 's' }, skipped: { '@coalesce': nothing } },
      { s: { '@path': 's' }, branch: { '@if': { field: { path: 'type', equals: 'page' } }, then: 'x' } },
    ];
    for (const template of fits) {
      const result = compileMapping(template)({ type: 'track', s, plan: null });
      expect(result.ok && result.body.length).toBe(MAX_OUTPUT_BYTES);
    }
    // {"s":["…"]} is the string plus 10 characters
    const absentItems = [{ '@path': 'missing' }, { '@coalesce': nothing }, nothing[4]];
    const inList = compileMapping({ s: [{ '@path': 's' }, ...absentItems] })({ type: 'track', s: s.slice(2), plan: null });
    expect(inList.ok && inList.body.length).toBe(MAX_OUTPUT_BYTES);
    // a null that stays is counted
    expect(compileMapping({ s: { '@path': 's' }, n: { '@path': 'plan' } })({ s, plan: null }).ok).toBe(false);
    expect(compileMapping({ s: { '@path': 's' }, n: null })({ s }).ok).toBe(false);
  });
});

/** `levels` objects inside one another (the outermost being level 1), a scalar at the bottom. */
function nestedObjects(levels: number): Record<string, unknown> {
  let value: Record<string, unknown> = { a: 1 };
  for (let i = 1; i < levels; i++) value = { a: value };
  return value;
}

describe('mappingProblems: limits', () => {
  it('takes 10 matches and contains tests across the @ifs and refuses one more, naming it', () => {
    const scanIf = (i: number) => ({
      '@if': { any: [{ field: { path: 'event', matches: `*${i}*` } }, { field: { path: 'properties.tags', contains: `t${i}` } }] },
      then: i,
    });
    const template = (ifs: number) => ({
      a: Array.from({ length: ifs }, (_, i) => scanIf(i)),
      b: { '@if': { field: { path: 'event', exists: true } } },
    });
    expect(mappingProblems(template(5), at)).toEqual([]);
    expect(mappingProblems(template(6), at)).toEqual([
      { field: `${at}.a[5].@if.any[0].field.matches`, message: 'is one matches or contains test too many: at most 10 in a mapping' },
    ]);
  });

  it(`takes ${MAX_TEMPLATE_NODES} nodes and refuses one more`, () => {
    const keys = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, i]));
    expect(mappingProblems(keys(MAX_TEMPLATE_NODES - 1), at)).toEqual([]); // the top object is a node
    expect(mappingProblems(keys(MAX_TEMPLATE_NODES), at)).toEqual([
      { field: at, message: `has more than ${MAX_TEMPLATE_NODES} nodes (objects, arrays, values and directives)` },
    ]);
  });

  it('counts directives, their items and a @literal value as nodes', () => {
    const coalesce = { '@coalesce': [1, 2, 3] }; // 4 nodes
    expect(mappingProblems(Object.fromEntries(Array.from({ length: 124 }, (_, i) => [`k${i}`, coalesce])), at)).toEqual([]); // 1 + 496
    expect(mappingProblems(Object.fromEntries(Array.from({ length: 125 }, (_, i) => [`k${i}`, coalesce])), at)).toHaveLength(1);
    const literal = { '@literal': Array.from({ length: MAX_TEMPLATE_NODES }, () => 0) };
    expect(mappingProblems({ v: literal }, at)[0]?.message).toContain('nodes');
  });

  it(`takes ${MAX_TEMPLATE_CHARS} characters of JSON and refuses one more`, () => {
    // {"a":"…"} is the string plus 8 characters
    expect(mappingProblems({ a: 'x'.repeat(MAX_TEMPLATE_CHARS - 8) }, at)).toEqual([]);
    expect(mappingProblems({ a: 'x'.repeat(MAX_TEMPLATE_CHARS - 7) }, at)).toEqual([
      { field: at, message: `is longer than ${MAX_TEMPLATE_CHARS} characters of JSON` },
    ]);
  });

  it(`takes ${MAX_TEMPLATE_DEPTH} levels and refuses one more, at the first level too deep`, () => {
    expect(mappingProblems(nestedObjects(MAX_TEMPLATE_DEPTH), at)).toEqual([]);
    expect(mappingProblems(nestedObjects(MAX_TEMPLATE_DEPTH + 1), at)).toEqual([
      {
        field: `${at}${'.a'.repeat(MAX_TEMPLATE_DEPTH)}`,
        message: `nests deeper than ${MAX_TEMPLATE_DEPTH} levels (objects, arrays and directives)`,
      },
    ]);
  });

  it('counts directives and arrays as levels, a @coalesce list being part of its directive', () => {
    // levels: top 1, the list 2, @coalesce 3, its item 4, then a … f's values 5 to 10
    const template = { v: [{ '@coalesce': [{ a: { b: { c: { d: { e: { f: {} } } } } } }] }] };
    expect(mappingProblems(template, at)).toEqual([]);
    const deeper = { v: [{ '@coalesce': [{ a: { b: { c: { d: { e: { f: { g: {} } } } } } } }] }] };
    expect(mappingProblems(deeper, at)).toEqual([
      {
        field: `${at}.v[0].@coalesce[0].a.b.c.d.e.f.g`,
        message: `nests deeper than ${MAX_TEMPLATE_DEPTH} levels (objects, arrays and directives)`,
      },
    ]);
    // levels: top 1, @literal 2, its value's objects 3 on
    expect(mappingProblems({ v: { '@literal': nestedObjects(MAX_TEMPLATE_DEPTH - 2) } }, at)).toEqual([]);
    expect(mappingProblems({ v: { '@literal': nestedObjects(MAX_TEMPLATE_DEPTH - 1) } }, at)).toEqual([
      {
        field: `${at}.v.@literal${'.a'.repeat(MAX_TEMPLATE_DEPTH - 2)}`,
        message: `nests deeper than ${MAX_TEMPLATE_DEPTH} levels (objects, arrays and directives)`,
      },
    ]);
  });

  it('reports a 5000-deep template as problems, without overflowing', () => {
    const problems = mappingProblems(nestedObjects(5000), at);
    expect(problems).toEqual([
      { field: at, message: `is longer than ${MAX_TEMPLATE_CHARS} characters of JSON` },
      {
        field: `${at}${'.a'.repeat(MAX_TEMPLATE_DEPTH)}`,
        message: `nests deeper than ${MAX_TEMPLATE_DEPTH} levels (objects, arrays and directives)`,
      },
    ]);
  });

  it('reports a far deeper template (past what JSON.stringify can write) too', () => {
    let deep: unknown = 1;
    for (let i = 0; i < 200_000; i++) deep = [deep];
    expect(mappingProblems({ v: deep }, at).map((p) => p.message)).toEqual([
      `is longer than ${MAX_TEMPLATE_CHARS} characters of JSON`,
      `nests deeper than ${MAX_TEMPLATE_DEPTH} levels (objects, arrays and directives)`,
    ]);
  });

  it('reports 5000-deep @literal values and @if conditions, without overflowing', () => {
    let literal: unknown = 1;
    for (let i = 0; i < 5000; i++) literal = [literal];
    expect(mappingProblems({ v: { '@literal': literal } }, at).map((p) => p.message)).toEqual([
      `nests deeper than ${MAX_TEMPLATE_DEPTH} levels (objects, arrays and directives)`,
    ]);
    let condition: unknown = { field: { path: 'type', exists: true } };
    for (let i = 0; i < 5000; i++) condition = { not: condition };
    expect(mappingProblems({ v: { '@if': condition, then: 1 } }, at)).toEqual([
      { field: at, message: `is longer than ${MAX_TEMPLATE_CHARS} characters of JSON` },
      { field: `${at}.v.@if`, message: 'nests objects and arrays deeper than 64 levels' },
    ]);
  });
});

describe('mappingProblems: the template', () => {
  const directives = '@path, @template, @if, @coalesce, @literal';
  const cond = { field: { path: 'type', equals: 'track' } };
  it.each<[string, unknown, { field: string; message: string }[]]>([
    ['a string top level', 'x', [{ field: at, message: 'must be a JSON object (the body sent to the receiver)' }]],
    ['a null top level', null, [{ field: at, message: 'must be a JSON object (the body sent to the receiver)' }]],
    ['an array top level', [{ a: 1 }], [{ field: at, message: 'must be a JSON object (the body sent to the receiver)' }]],
    [
      'a directive top level',
      { '@path': 'properties' },
      [{ field: at, message: 'must be a JSON object, not a directive (it has @path): the body sent is an object' }],
    ],
    [
      'an unknown directive',
      { v: { '@foo': 1 } },
      [{ field: `${at}.v.@foo`, message: `is not a directive (the directives are ${directives})` }],
    ],
    ['a lone @', { v: { '@': 1 } }, [{ field: `${at}.v.@`, message: `is not a directive (the directives are ${directives})` }]],
    [
      'two directives',
      { v: { '@path': 'userId', '@template': 'x' } },
      [{ field: `${at}.v`, message: 'mixes directives @path, @template: a directive object holds exactly one' }],
    ],
    [
      'a directive with a plain key',
      { v: { '@path': 'userId', fallback: 'x' } },
      [{ field: `${at}.v`, message: '@path takes no other keys (found fallback)' }],
    ],
    [
      'a @literal with a plain key',
      { v: { '@literal': 1, then: 2, else: 3 } },
      [{ field: `${at}.v`, message: '@literal takes no other keys (found then, else)' }],
    ],
    [
      '@if with a key besides then and else',
      { v: { '@if': cond, then: 1, otherwise: 2 } },
      [{ field: `${at}.v`, message: '@if takes only then and else beside it (found otherwise)' }],
    ],
    [
      '@path not a string',
      { v: { '@path': ['a'] } },
      [{ field: `${at}.v.@path`, message: 'must be a string: a path into the call, e.g. properties.plan' }],
    ],
    ['@path empty', { v: { '@path': '' } }, [{ field: `${at}.v.@path`, message: 'is empty' }]],
    [
      '@path with an empty name',
      { v: { '@path': 'properties..plan' } },
      [{ field: `${at}.v.@path`, message: 'has an empty name between two dots' }],
    ],
    ['@path of 11 names', { v: { '@path': 'a.b.c.d.e.f.g.h.i.j.k' } }, [{ field: `${at}.v.@path`, message: 'has 11 names; at most 10' }]],
    [
      '@template not a string',
      { v: { '@template': 5 } },
      [{ field: `${at}.v.@template`, message: 'must be a string with {{ path }} placeholders' }],
    ],
    [
      '@template with an unclosed {{',
      { v: { '@template': 'Hi {{traits.name}} and {{userId' } },
      [{ field: `${at}.v.@template`, message: 'has a {{ without a closing }} (at character 24)' }],
    ],
    [
      '@template with an empty {{ }}',
      { v: { '@template': 'a{{  }}b' } },
      [{ field: `${at}.v.@template`, message: 'has an empty {{ }} (at character 2)' }],
    ],
    [
      '@template with a bad path',
      { v: { '@template': '{{ .userId }}' } },
      [{ field: `${at}.v.@template`, message: 'has a bad path in {{ .userId }}: starts with a dot' }],
    ],
    [
      '@template with several problems',
      { v: { '@template': '{{}}{{a.}}{{b' } },
      [
        { field: `${at}.v.@template`, message: 'has an empty {{ }} (at character 1)' },
        { field: `${at}.v.@template`, message: 'has a bad path in {{ a. }}: ends with a dot' },
        { field: `${at}.v.@template`, message: 'has a {{ without a closing }} (at character 11)' },
      ],
    ],
    [
      '@if with an empty condition',
      { v: { '@if': {}, then: 1 } },
      [{ field: `${at}.v.@if`, message: 'must have exactly one of all, any, not, field, sample' }],
    ],
    ['@if with a string condition', { v: { '@if': 'type == track', then: 1 } }, [{ field: `${at}.v.@if`, message: 'must be object' }]],
    ['@if with an unknown key', { v: { '@if': { where: 1 }, then: 1 } }, [{ field: `${at}.v.@if.where`, message: 'is not a known field' }]],
    [
      '@if with a bad field path',
      { v: { '@if': { all: [cond, { field: { path: 'a..b', exists: true } }] }, then: 1 } },
      [{ field: `${at}.v.@if.all[1].field.path`, message: 'has an empty name between two dots' }],
    ],
    [
      'a problem inside then',
      { v: { '@if': cond, then: { x: { '@path': '' } } } },
      [{ field: `${at}.v.then.x.@path`, message: 'is empty' }],
    ],
    [
      'a problem inside else',
      { v: { '@if': cond, else: [{ '@bad': 1 }] } },
      [{ field: `${at}.v.else[0].@bad`, message: `is not a directive (the directives are ${directives})` }],
    ],
    [
      '@coalesce not a list',
      { v: { '@coalesce': { a: 1 } } },
      [{ field: `${at}.v.@coalesce`, message: 'must be a list of 1 to 10 templates' }],
    ],
    ['@coalesce empty', { v: { '@coalesce': [] } }, [{ field: `${at}.v.@coalesce`, message: 'must be a list of 1 to 10 templates' }]],
    [
      '@coalesce of 11',
      { v: { '@coalesce': Array.from({ length: 11 }, () => 1) } },
      [{ field: `${at}.v.@coalesce`, message: 'must be a list of 1 to 10 templates' }],
    ],
    [
      'a problem inside @coalesce',
      { v: { '@coalesce': ['a', { '@path': 'x.' }] } },
      [{ field: `${at}.v.@coalesce[1].@path`, message: 'ends with a dot' }],
    ],
    [
      'a problem in an array item',
      { list: [1, 2, { '@template': '{{' }] },
      [{ field: `${at}.list[2].@template`, message: 'has a {{ without a closing }} (at character 1)' }],
    ],
    [
      'problems in several places, in order',
      { a: { '@path': '' }, b: { c: { '@nope': 1 } } },
      [
        { field: `${at}.a.@path`, message: 'is empty' },
        { field: `${at}.b.c.@nope`, message: `is not a directive (the directives are ${directives})` },
      ],
    ],
  ])('%s', (_name, template, problems) => {
    expect(mappingProblems(template, at)).toEqual(problems);
  });

  it.each<[string, Record<string, unknown>]>([
    ['a @literal with anything in it', { v: { '@literal': { '@foo': { '@path': '' }, then: [{ '@template': '{{' }] } } }],
    ['@if with only then', { v: { '@if': { sample: { percent: 50 } }, then: 1 } }],
    ['@if with neither branch', { v: { '@if': { not: { field: { path: 'userId', exists: true } } } } }],
    ['@coalesce of 10', { v: { '@coalesce': Array.from({ length: 10 }, (_, i) => i) } }],
    ['a @template with no placeholders', { v: { '@template': 'a }} b' } }],
    ['@path of 10 names', { v: { '@path': 'a.b.c.d.e.f.g.h.i.j' } }],
  ])('takes %s', (_name, template) => {
    expect(mappingProblems(template, at)).toEqual([]);
  });
});
